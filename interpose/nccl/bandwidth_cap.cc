#include "bandwidth_cap.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "cuda_driver.h"

namespace ncclfi::preload {

using Clock = std::chrono::steady_clock;

struct BandwidthHold::Mark {
  Clock::duration need;
  std::atomic<Clock::rep> started{0};  // 0: no start mark (or the stream has not reached it)
};

namespace {

void CUDA_CB note_start(void* data) {
  static_cast<BandwidthHold::Mark*>(data)->started.store(Clock::now().time_since_epoch().count());
}

void CUDA_CB hold_rest(void* data) {
  auto* mark = static_cast<BandwidthHold::Mark*>(data);
  const Clock::rep started = mark->started.load();
  const Clock::time_point from = started != 0 ? Clock::time_point(Clock::duration(started)) : Clock::now();
  std::this_thread::sleep_until(from + mark->need);
  delete mark;
}

std::string enqueue(cudaStream_t stream, int device, CUhostFn fn, void* data) {
  std::string error;
  const CudaDriver* cu = cuda_driver(&error);
  if (cu == nullptr) return error;
  auto cu_stream = reinterpret_cast<CUstream>(stream);
  const StreamContext context(*cu, cu_stream, device);
  if (!context.error().empty()) return context.error();
  const CUresult rc = cu->launch_host_func(cu_stream, fn, data);
  return rc == CUDA_SUCCESS ? "" : "CUDA driver error " + std::to_string(static_cast<int>(rc));
}

}  // namespace

BandwidthHold::BandwidthHold(cudaStream_t stream, int device, double seconds)
    : stream_(stream),
      device_(device),
      mark_(new Mark{std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))}) {}

BandwidthHold::~BandwidthHold() {
  if (!handed_over_) delete mark_;
}

std::string BandwidthHold::mark_start() {
  std::string why = enqueue(stream_, device_, &note_start, mark_);
  // From here a host function may touch the mark: never free it ourselves (a lost hold leaks 16 bytes).
  if (why.empty()) handed_over_ = true;
  return why;
}

std::string BandwidthHold::hold_after() {
  std::string why = enqueue(stream_, device_, &hold_rest, mark_);
  if (why.empty()) handed_over_ = true;  // hold_rest frees it
  return why;
}

}  // namespace ncclfi::preload
