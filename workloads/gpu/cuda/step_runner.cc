#include "step_runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "nccl_session.h"
#include "ncclfi/workload_contract.h"
#include "op_spec.h"
#include "program_tag.h"

namespace ncclfi::workload {
namespace {

void cuda_check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(error));
}

int64_t now_ns() {
  return Clock::mono_ns();
}

// stop_code_ when a step failed under --recover (not an exit code: the rank recovers instead).
constexpr int kStopToRecover = -1;

}  // namespace

// ---------------------------------------------------------------------------------------------- Watchdog

Watchdog::Watchdog(const WorkloadArgs& args, const EventLog& log, int rank)
    : args_(args), log_(log), rank_(rank) {}

Watchdog::~Watchdog() {
  stop_standalone();
}

void Watchdog::begin_host_call(const char* op, int64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  host_call_ = {op, seq, true};
}

void Watchdog::end_host_call() {
  std::lock_guard<std::mutex> lock(mutex_);
  host_call_ = {};
}

void Watchdog::set_oldest_pending(const char* op, int64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_ = {op, seq, false};
}

std::string Watchdog::failure() {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

void Watchdog::clear_failure() {
  std::lock_guard<std::mutex> lock(mutex_);
  failure_.clear();
  pending_ = {};
  host_call_ = {};
  watched_ = {};
  failed_.store(false);
}

void Watchdog::note_failure(int code, const std::string& reason) {
  if (!recover_) abort_and_exit(code, reason);
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_.empty()) failure_ = reason;
  failed_.store(true);
}

void Watchdog::check() {
  if (failed_.load()) return;  // --recover: noted once; the step runner stops
  if (!args_.watchdog && !recover_) return;
  const int64_t now = now_ns();
  Watched current;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The oldest unfinished work: an enqueued step still running on the GPU, else a host call.
    current = pending_.op != nullptr ? pending_ : host_call_;
    if (current.op != watched_.op || current.seq != watched_.seq || current.host != watched_.host) {
      watched_ = current;
      watched_since_ns_ = now;
    }
  }
  if (current.op != nullptr && args_.watchdog) {
    const double waited_ms = static_cast<double>(now - watched_since_ns_) / 1e6;
    if (waited_ms > args_.timeout_s * 1000.0) {
      log_.write(ev::kWatchdogFired, {{"op", current.op},
                                      {"seq", current.seq},
                                      {"waited_ms", waited_ms},
                                      {"reason", "timeout"},
                                      {"where", current.host ? "host_call" : "gpu"},
                                      {"timeout_s", args_.timeout_s}});
      std::fprintf(stderr,
                   "%s: rank %d: watchdog: %s (seq %lld) made no progress for %.0f ms "
                   "(timeout %.3g s, waiting in %s): %s\n",
                   program_tag(), rank_, current.op, static_cast<long long>(current.seq), waited_ms,
                   args_.timeout_s, current.host ? "the NCCL call" : "the GPU stream",
                   recover_ ? "recovering in place" : "aborting the communicator");
      note_failure(kExitWatchdog, "watchdog_timeout");
      return;
    }
  }
  // ncclCommGetAsyncError takes NCCL's locks: every 10 ms is plenty against second-scale timeouts.
  ncclComm_t comm = comm_.load();
  if (comm != nullptr && now - last_async_poll_ns_ > 10'000'000) {
    last_async_poll_ns_ = now;
    ncclResult_t state = ncclSuccess;
    const ncclResult_t query = ncclCommGetAsyncError(comm, &state);
    const ncclResult_t error = query != ncclSuccess ? query : state;
    if (error != ncclSuccess && error != ncclInProgress) {
      log_.write(ev::kAsyncError,
                 {{"code", static_cast<int>(error)}, {"message", ncclGetErrorString(error)}});
      std::fprintf(stderr, "%s: rank %d: ncclCommGetAsyncError: %s (%d): %s\n", program_tag(), rank_,
                   ncclGetErrorString(error), static_cast<int>(error),
                   recover_ ? "recovering in place" : "aborting");
      note_failure(kExitAsyncError, std::string("async_error: ") + ncclGetErrorString(error));
    }
  }
}

void Watchdog::abort_and_exit(int code, const std::string& reason) {
  aborting_.store(true);
  const int64_t start = now_ns();
  ncclComm_t comm = comm_.exchange(nullptr);
  bool completed = true;
  if (comm != nullptr) {
    // ncclCommAbort can itself wait on a wedged peer or driver: bound it and exit regardless.
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread([comm, done] {
      ncclCommAbort(comm);
      done->store(true);
    }).detach();
    const int64_t limit = start + static_cast<int64_t>(args_.abort_wait_s * 1e9);
    while (!done->load() && now_ns() < limit) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    completed = done->load();
  }
  log_.write(ev::kAbort, {{"reason", reason},
                          {"comm_aborted", comm != nullptr && completed},
                          {"abort_ms", static_cast<double>(now_ns() - start) / 1e6}});
  log_.write(ev::kExit, {{"code", code}, {"reason", reason}});
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

void Watchdog::start_standalone() {
  stop_.store(false);
  standalone_.store(true);
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      check();
      std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(args_.poll_ms * 1000)));
    }
  });
}

void Watchdog::stop_standalone() {
  if (!standalone_.exchange(false)) return;
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

// -------------------------------------------------------------------------------------------- StepRunner

StepRunner::StepRunner(const WorkloadArgs& args, const RunPlan& plan, ncclComm_t comm, int rank, int nranks,
                       const EventLog& log, Watchdog& watchdog)
    : args_(args), plan_(plan), comm_(comm), rank_(rank), nranks_(nranks), log_(log), watchdog_(watchdog) {
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  allocate_buffers();
  slots_.resize(args_.window);
  for (Slot& slot : slots_) {
    cuda_check(cudaEventCreate(&slot.start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&slot.op_end), "cudaEventCreate");
    cuda_check(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming), "cudaEventCreate");
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&slot.device_counters), sizeof(VerifyCounters)),
               "cudaMalloc");
    cuda_check(cudaMallocHost(reinterpret_cast<void**>(&slot.host_counters), sizeof(VerifyCounters)),
               "cudaMallocHost");
    free_.push_back(&slot);
  }
  timings_.resize(plan_.cases.size());
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// Buffers for the largest case at this rank and size (a shrunk communicator may need larger ones).
void StepRunner::allocate_buffers() {
  uint64_t send_bytes = 1, recv_bytes = 1;
  for (const WorkloadCase& c : plan_.cases) {
    const uint64_t esize = dtype_size(c.dtype);
    const OpLayout layout = make_layout(c.op, c.bytes, esize, rank_, nranks_, 0);
    send_bytes = std::max(send_bytes, layout.send_count * esize);
    recv_bytes = std::max(recv_bytes, layout.recv_count * esize);
  }
  if (send_bytes > send_bytes_) {
    if (send_ != nullptr) cudaFree(send_);
    send_ = nullptr;
    cuda_check(cudaMalloc(&send_, send_bytes), "cudaMalloc(send)");
    send_bytes_ = send_bytes;
  }
  if (recv_bytes > recv_bytes_) {
    if (recv_ != nullptr) cudaFree(recv_);
    recv_ = nullptr;
    cuda_check(cudaMalloc(&recv_, recv_bytes), "cudaMalloc(recv)");
    cuda_check(cudaMemset(recv_, 0, recv_bytes), "cudaMemset(recv)");
    recv_bytes_ = recv_bytes;
  }
}

StepRunner::~StepRunner() {
  finish_.store(true);
  if (poller_.joinable()) poller_.join();
  for (Slot& slot : slots_) {
    cudaEventDestroy(slot.start);
    cudaEventDestroy(slot.op_end);
    cudaEventDestroy(slot.done);
    cudaFree(slot.device_counters);
    cudaFreeHost(slot.host_counters);
  }
  cudaFree(send_);
  cudaFree(recv_);
  cudaStreamDestroy(stream_);
}

int StepRunner::enqueue_step(uint64_t seq, Slot& slot) {
  const WorkloadCase& c = plan_.cases[plan_.case_of(seq)];
  const OpSpec& spec = op_spec(c.op);
  slot.seq = seq;
  slot.layout = make_layout(c.op, c.bytes, dtype_size(c.dtype), rank_, nranks_, seq);
  cuda_check(cudaMemsetAsync(slot.device_counters, 0, 2 * sizeof(unsigned long long), stream_),
             "cudaMemsetAsync");
  cuda_check(cudaMemsetAsync(&slot.device_counters->first_wrong, 0xff, sizeof(unsigned long long), stream_),
             "cudaMemsetAsync");
  cuda_check(launch_fill(send_, static_cast<int>(c.dtype), rank_, slot.layout.send_count, seq, stream_),
             "fill");
  cuda_check(cudaEventRecord(slot.start, stream_), "cudaEventRecord");
  watchdog_.begin_host_call(spec.name.data(), static_cast<int64_t>(seq));
  const ncclResult_t posted = enqueue_op(slot.layout, c.dtype, send_, recv_, comm_, stream_);
  ncclResult_t result = posted;
  if (args_.nonblocking && !args_.recover.empty()) {
    // --recover: a call that never settles is the watchdog's to note; then give up on it.
    while (result == ncclInProgress && !watchdog_.failed()) {
      std::this_thread::yield();
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      result = query != ncclSuccess ? query : state;
    }
    if (result == ncclInProgress) {
      watchdog_.end_host_call();
      return kExitWatchdog;
    }
  } else if (args_.nonblocking) {
    result = await_nonblocking(comm_, result);
  }
  watchdog_.end_host_call();
  if (result != ncclSuccess && posted == ncclInProgress) {
    // The call itself was accepted; the error came back through ncclCommGetAsyncError while the
    // non-blocking call completed, so it is an asynchronous error, as the watchdog would report it.
    log_.write(ev::kAsyncError, {{"code", static_cast<int>(result)},
                                 {"message", ncclGetErrorString(result)},
                                 {"where", std::string(spec.name)},
                                 {"seq", seq}});
    std::fprintf(stderr, "%s: rank %d: ncclCommGetAsyncError during %s (seq %llu): %s (%d)\n", program_tag(),
                 rank_, spec.name.data(), static_cast<unsigned long long>(seq), ncclGetErrorString(result),
                 static_cast<int>(result));
    return kExitAsyncError;
  }
  if (result != ncclSuccess) {
    log_.write(ev::kNcclError, {{"code", static_cast<int>(result)},
                                {"message", ncclGetErrorString(result)},
                                {"where", std::string(spec.name)},
                                {"seq", seq}});
    std::fprintf(stderr, "%s: rank %d: %s (seq %llu) returned %s (%d)\n", program_tag(), rank_,
                 spec.name.data(), static_cast<unsigned long long>(seq), ncclGetErrorString(result),
                 static_cast<int>(result));
    return kExitNcclError;
  }
  cuda_check(cudaEventRecord(slot.op_end, stream_), "cudaEventRecord");
  cuda_check(launch_verify(recv_, static_cast<int>(c.dtype), slot.layout, seq, slot.device_counters, stream_),
             "verify");
  cuda_check(cudaMemcpyAsync(slot.host_counters, slot.device_counters, sizeof(VerifyCounters),
                             cudaMemcpyDeviceToHost, stream_),
             "cudaMemcpyAsync");
  cuda_check(cudaEventRecord(slot.done, stream_), "cudaEventRecord");
  return kExitOk;
}

void StepRunner::retire(Slot& slot) {
  const size_t case_index = plan_.case_of(slot.seq);
  const WorkloadCase& c = plan_.cases[case_index];
  const VerifyCounters counters = *slot.host_counters;
  float op_ms = 0;
  cudaEventElapsedTime(&op_ms, slot.start, slot.op_end);
  digest_ = digest_step(digest_, slot.seq, static_cast<int>(c.op), static_cast<int>(c.dtype),
                        counters.checked, counters.wrong);
  wrong_total_ += counters.wrong;
  CaseTiming& timing = timings_[case_index];
  timing.wrong += counters.wrong;
  if (plan_.index_in_case(slot.seq) >= args_.warmup) {
    timing.total_ms += op_ms;
    ++timing.timed;
  }
  const uint64_t bytes = op_bytes(slot.layout, dtype_size(c.dtype));
  if (args_.op_events_every != 0 && slot.seq % args_.op_events_every == 0) {
    log_.write(ev::kOp, {{"seq", slot.seq},
                         {"op", std::string(op_spec(c.op).name)},
                         {"dtype", std::string(dtype_name(c.dtype))},
                         {"bytes", bytes},
                         {"dur_us", static_cast<double>(op_ms) * 1000.0},
                         {"wrong", counters.wrong}});
  }
  if (counters.wrong != 0 || counters.checked != defined_elements(slot.layout)) {
    log_.write(ev::kResultMismatch, {{"op", std::string(op_spec(c.op).name)},
                                     {"dtype", std::string(dtype_name(c.dtype))},
                                     {"seq", slot.seq},
                                     {"bytes", bytes},
                                     {"wrong", counters.wrong},
                                     {"checked", counters.checked},
                                     {"first_wrong", counters.wrong != 0 ? counters.first_wrong : 0}});
    std::fprintf(stderr, "%s: rank %d: %s %s seq %llu: %llu of %llu elements wrong (first at %llu)\n",
                 program_tag(), rank_, op_spec(c.op).name.data(), dtype_name(c.dtype).data(),
                 static_cast<unsigned long long>(slot.seq), counters.wrong, counters.checked,
                 counters.wrong != 0 ? counters.first_wrong : 0ull);
    if (args_.check) stop_code_.store(kExitVerification);
  }
  if (plan_.index_in_case(slot.seq) + 1 == plan_.steps_per_case) print_case_line(case_index);
  next_unretired_ = slot.seq + 1;
  if (!args_.recover.empty()) {
    retired_.push_back({slot.seq, digest_, wrong_total_});
    if (retired_.size() > 2 * args_.window + 2) retired_.pop_front();
  }
  if (announce_resume_) {
    announce_resume_ = false;
    log_.write(ev::kResumed, {{"step", slot.seq}, {"world_size", nranks_}, {"comm_rank", rank_}});
  }
}

bool StepRunner::state_before(uint64_t step, uint64_t& digest, uint64_t& wrong_total) const {
  if (step == run_first_step_) {
    digest = run_digest_;
    wrong_total = run_wrong_;
    return true;
  }
  for (const Retired& r : retired_) {
    if (r.seq + 1 != step) continue;
    digest = r.digest;
    wrong_total = r.wrong_total;
    return true;
  }
  return false;
}

void StepRunner::stop_for_recovery(RunOutcome& outcome) {
  halt_.store(true);
  retired_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
  // Steps whose work completed before anything was revoked are good: retire them, in order, so the
  // resume point is as late as this rank's real progress.
  std::lock_guard<std::mutex> lock(mutex_);
  while (!pending_.empty() && cudaEventQuery(pending_.front()->done) == cudaSuccess) {
    retire(*pending_.front());
    free_.push_back(pending_.front());
    pending_.pop_front();
  }
  outcome.needs_recovery = true;
  outcome.next_step = next_unretired_;
  outcome.digest = digest_;
  outcome.wrong_total = wrong_total_;
}

void StepRunner::rebind(ncclComm_t comm, int rank, int nranks, double drain_s) {
  // The failed steps' kernels were ended by the revoke (or NCCL_SHRINK_ABORT); what follows them on the
  // stream (verification, copies) finishes quickly. A stream that does not drain is not recoverable.
  const int64_t limit = now_ns() + static_cast<int64_t>(drain_s * 1e9);
  cudaError_t state = cudaStreamQuery(stream_);
  while (state == cudaErrorNotReady && now_ns() < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    state = cudaStreamQuery(stream_);
  }
  if (state != cudaSuccess) {
    throw std::runtime_error(std::string("the stream did not drain after the revoke: ") +
                             (state == cudaErrorNotReady ? "still busy" : cudaGetErrorString(state)));
  }
  for (Slot* slot : pending_) free_.push_back(slot);
  pending_.clear();
  comm_ = comm;
  rank_ = rank;
  nranks_ = nranks;
  allocate_buffers();
  halt_.store(false);
  finish_.store(false);
  stop_code_.store(0);
  announce_resume_ = true;
}

void StepRunner::print_case_line(size_t case_index) {
  if (args_.quiet || rank_ != 0) return;
  const WorkloadCase& c = plan_.cases[case_index];
  const CaseTiming& timing = timings_[case_index];
  const OpLayout layout = make_layout(c.op, c.bytes, dtype_size(c.dtype), rank_, nranks_, 0);
  const uint64_t bytes = op_bytes(layout, dtype_size(c.dtype));
  const double avg_us = timing.timed != 0 ? timing.total_ms * 1000.0 / static_cast<double>(timing.timed) : 0;
  const Bandwidth bw = compute_bandwidth(c.op, bytes, avg_us / 1e6, nranks_);
  std::printf(
      "%15s %12llu %12llu %9s %6s %5s %10.2f %7.2f %7.2f %7llu  (%llu timed)\n", op_spec(c.op).name.data(),
      static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(bytes / dtype_size(c.dtype)),
      dtype_name(c.dtype).data(),
      op_spec(c.op).has_root || c.op == OpKind::kAllReduce || c.op == OpKind::kReduceScatter ? "sum" : "none",
      op_spec(c.op).has_root ? "rot" : "-1", avg_us, bw.algbw_gbps, bw.busbw_gbps,
      static_cast<unsigned long long>(timing.wrong), static_cast<unsigned long long>(timing.timed));
  std::fflush(stdout);
}

void StepRunner::poll_loop() {
  const auto idle = std::chrono::microseconds(static_cast<int64_t>(args_.poll_ms * 1000));
  while (true) {
    Slot* front = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!pending_.empty()) front = pending_.front();
    }
    // The communicator is being aborted (this rank failed): what completes now is the abort's doing.
    if (watchdog_.aborting()) return;
    if (front != nullptr) {
      const cudaError_t state = cudaEventQuery(front->done);
      if (state == cudaSuccess) {
        retire(*front);
        {
          std::lock_guard<std::mutex> lock(mutex_);
          pending_.pop_front();
          free_.push_back(front);
          Slot* next = pending_.empty() ? nullptr : pending_.front();
          watchdog_.set_oldest_pending(
              next ? op_spec(plan_.cases[plan_.case_of(next->seq)].op).name.data() : nullptr,
              next ? static_cast<int64_t>(next->seq) : -1);
        }
        retired_cv_.notify_all();
        continue;
      }
      if (state != cudaErrorNotReady) {
        log_.write(ev::kNcclError, {{"code", -static_cast<int>(state)},
                                    {"message", cudaGetErrorString(state)},
                                    {"where", "cuda_stream"},
                                    {"seq", front->seq}});
        std::fprintf(stderr, "%s: rank %d: CUDA error on the stream: %s\n", program_tag(), rank_,
                     cudaGetErrorString(state));
        watchdog_.abort_and_exit(kExitNcclError, "cuda_error");
      }
    } else if (finish_.load()) {
      return;
    }
    if (halt_.load()) return;
    watchdog_.check();
    if (watchdog_.failed()) {
      // --recover: stop retiring (the revoke will end the kernels and leave garbage behind) and wake run().
      stop_code_.store(kStopToRecover);
      retired_cv_.notify_all();
      return;
    }
    // Short naps while work is in flight keep small-message steps flowing; idle naps are --poll-ms.
    std::this_thread::sleep_for(front != nullptr ? std::min(idle, std::chrono::microseconds(20)) : idle);
  }
}

void StepRunner::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  retired_cv_.wait(lock, [&] { return pending_.empty() || stop_code_.load() == kStopToRecover; });
}

RunOutcome StepRunner::run(uint64_t first_step, uint64_t digest, uint64_t wrong_total,
                           Checkpoint* checkpoint) {
  digest_ = digest;
  wrong_total_ = wrong_total;
  run_first_step_ = first_step;
  run_digest_ = digest;
  run_wrong_ = wrong_total;
  next_unretired_ = first_step;
  retired_.clear();
  poller_ = std::thread([this] { poll_loop(); });
  RunOutcome outcome;
  const uint64_t total = plan_.total_steps();
  for (uint64_t seq = first_step; seq < total; ++seq) {
    if (stop_code_.load() != 0) break;
    if (checkpoint != nullptr && seq != first_step && seq % args_.checkpoint_every == 0) {
      drain();
      checkpoint->push({seq, digest_, wrong_total_});
      save_checkpoint_file(args_.checkpoint_dir, *checkpoint);
      log_.write(
          ev::kCheckpoint,
          {{"iter", seq}, {"path", checkpoint_path(args_.checkpoint_dir, rank_)}, {"digest", digest_}});
    }
    Slot* slot = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      retired_cv_.wait(lock, [&] { return !free_.empty() || stop_code_.load() != 0; });
      if (stop_code_.load() != 0) break;
      slot = free_.back();
      free_.pop_back();
    }
    const int code = enqueue_step(seq, *slot);
    if (code != kExitOk) {
      outcome.exit_code = code;
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(slot);
      if (pending_.size() == 1) {
        watchdog_.set_oldest_pending(op_spec(plan_.cases[plan_.case_of(seq)].op).name.data(),
                                     static_cast<int64_t>(seq));
      }
    }
    ++outcome.steps_run;
    if (args_.step_delay_ms > 0) {
      std::this_thread::sleep_for(
          std::chrono::microseconds(static_cast<int64_t>(args_.step_delay_ms * 1000)));
    }
  }
  // --recover: a failed step (an error, or the watchdog's note) hands over to the recovery.
  const bool step_failed = outcome.exit_code == kExitNcclError || outcome.exit_code == kExitAsyncError ||
                           outcome.exit_code == kExitWatchdog;
  if (!args_.recover.empty() && (step_failed || stop_code_.load() == kStopToRecover)) {
    outcome.exit_code = kExitOk;
    stop_for_recovery(outcome);
    return outcome;
  }
  // An NCCL error or a failed check ends the job now: peers may be inside a collective with us, so
  // abort the communicator (bounded) instead of draining the stream.
  if (outcome.exit_code == kExitNcclError) watchdog_.abort_and_exit(kExitNcclError, "nccl_error");
  if (outcome.exit_code == kExitAsyncError) watchdog_.abort_and_exit(kExitAsyncError, "async_error");
  drain();
  if (stop_code_.load() == kStopToRecover) {
    stop_for_recovery(outcome);
    return outcome;
  }
  if (stop_code_.load() != 0) watchdog_.abort_and_exit(stop_code_.load(), "verification_failed");
  finish_.store(true);
  if (poller_.joinable()) poller_.join();
  if (outcome.exit_code == kExitOk && checkpoint != nullptr && checkpoint->latest_step() != total) {
    checkpoint->push({total, digest_, wrong_total_});
    save_checkpoint_file(args_.checkpoint_dir, *checkpoint);
    log_.write(
        ev::kCheckpoint,
        {{"iter", total}, {"path", checkpoint_path(args_.checkpoint_dir, rank_)}, {"digest", digest_}});
  }
  outcome.digest = digest_;
  outcome.wrong_total = wrong_total_;
  return outcome;
}

}  // namespace ncclfi::workload
