// ncclfi-bench-preload: the cost the preload adds to an NCCL call when nothing is armed.
//
// The same loop of ncclAllReduce calls into the NCCL test double (which returns at once) runs in child
// processes of this program, alternately without and with LD_PRELOAD=libncclfi-preload.so, several
// rounds side by side; each configuration keeps its fastest round (least disturbed by other load).
// Prints:
//   preload_call_plain_ns=<ns per call without the preload>
//   preload_call_preloaded_ns=<ns per call with the preload, no plan>
//   preload_call_overhead_ns=<the difference>            (budget: < 20)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nccl.h>

namespace {

constexpr long kCalls = 20'000'000;
constexpr int kRounds = 7;

int child() {
  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) return 1;
  auto stream = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(0x5151));
  float buf[1];
  for (long i = 0; i < kCalls / 20; ++i)
    ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, stream);  // warm
  auto t0 = std::chrono::steady_clock::now();
  unsigned failures = 0;
  for (long i = 0; i < kCalls; ++i)
    failures += ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, stream) != 0;
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%.4f %u\n", ns / static_cast<double>(kCalls), failures);
  return failures == 0 ? 0 : 1;
}

std::string self_dir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.find_last_of('/'));
}

// Runs this program as a child; returns its ns per call, or a negative value on failure.
double run_child(const std::string& preload) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    for (const char* v :
         {"NCCLFI_PLAN", "NCCLFI_EVENTS", "NCCLFI_TRACE_OPS", "NCCL_DOUBLE_LOG", "LD_PRELOAD"}) {
      unsetenv(v);
    }
    if (!preload.empty()) setenv("LD_PRELOAD", preload.c_str(), 1);
    execl("/proc/self/exe", "ncclfi-bench-preload", "--child", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char out[256] = {};
  ssize_t got = read(fds[0], out, sizeof out - 1);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::atof(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return child();
  const std::string preload = self_dir() + "/../lib/libncclfi-preload.so";
  if (access(preload.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "ncclfi-bench-preload: %s not found\n", preload.c_str());
    return 1;
  }
  std::vector<double> plain, pre;
  for (int round = 0; round < kRounds; ++round) {
    double a = run_child("");
    double b = run_child(preload);
    if (a < 0 || b < 0) {
      std::fprintf(stderr, "ncclfi-bench-preload: a child failed\n");
      return 1;
    }
    plain.push_back(a);
    pre.push_back(b);
  }
  const double best_plain = *std::min_element(plain.begin(), plain.end());
  const double best_pre = *std::min_element(pre.begin(), pre.end());
  std::printf("preload_call_plain_ns=%.2f\n", best_plain);
  std::printf("preload_call_preloaded_ns=%.2f\n", best_pre);
  std::printf("preload_call_overhead_ns=%.2f\n", best_pre - best_plain);
  return 0;
}
