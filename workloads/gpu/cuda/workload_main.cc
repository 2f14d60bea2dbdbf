// ncclfi-workload: an NCCL job with the safety nets of a production framework (the workload contract,
// workload_contract.h). One process per GPU; rendezvous from torchrun-style variables, Open MPI or Slurm.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "nccl_session.h"
#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "ncclfi/workload_contract.h"
#include "op_spec.h"
#include "step_runner.h"
#include "workload_args.h"

namespace ncclfi::workload {
namespace {

int fail(const EventLog& log, int code, const std::string& message) {
  std::fprintf(stderr, "ncclfi-workload: %s\n", message.c_str());
  log.write(ev::kExit, {{"code", code}, {"reason", message}});
  return code;
}

std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", seconds);
  return text;
}

std::string args_string(int argc, char** argv) {
  std::string joined;
  for (int i = 1; i < argc; ++i) joined += (i > 1 ? " " : "") + std::string(argv[i]);
  return joined;
}

// The blob each rank contributes to the rendezvous: rank 0's unique id, everyone's resume step and
// plan fingerprint (ranks started with different arguments are refused before NCCL sees them).
struct Hello {
  ncclUniqueId id;
  uint64_t resume_step;
  uint64_t plan;
};

int run_workload(int argc, char** argv) {
  WorkloadArgs args;
  std::string help;
  const Params& params = Params::get();
  EventLog log(params.events_path, "workload", params.rank);
  try {
    if (!parse_workload_args(argc, argv, args, help)) {
      std::fputs(help.c_str(), stdout);
      return kExitOk;
    }
  } catch (const UsageError& error) {
    return fail(log, kExitUsage, std::string("usage: ") + error.what() + " (see --help)");
  }
  const RunPlan plan = make_run_plan(args);

  RendezvousInfo info;
  try {
    info = rendezvous_from_env();
  } catch (const std::exception& error) {
    return fail(log, kExitBootstrap, std::string("rendezvous: ") + error.what());
  }
  log.set_rank(info.rank);
  log.write(ev::kStart, {{"world_size", info.world_size},
                         {"local_rank", info.local_rank},
                         {"launcher", info.launcher},
                         {"args", args_string(argc, argv)},
                         {"attempt", params.attempt},
                         {"total_steps", plan.total_steps()}});

  int device_count = 0;
  const cudaError_t device_error = cudaGetDeviceCount(&device_count);
  if (device_error != cudaSuccess || device_count == 0) {
    return fail(log, kExitBootstrap,
                std::string("no usable CUDA device (cudaGetDeviceCount: ") +
                    (device_error != cudaSuccess ? cudaGetErrorString(device_error) : "0 devices") +
                    "); this workload needs one GPU per rank");
  }
  const int device = args.device >= 0 ? args.device : info.local_rank % device_count;
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    return fail(log, kExitBootstrap,
                "cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(e));
  }
  for (DType dtype : args.dtypes) {
    if (info.world_size > max_exact_ranks(dtype)) {
      std::fprintf(stderr,
                   "ncclfi-workload: warning: %s sums over %d ranks may overflow; expect mismatches\n",
                   dtype_name(dtype).data(), info.world_size);
    }
  }

  // Resume point: this rank's newest checkpoint, agreed with the others below.
  std::optional<Checkpoint> saved;
  if (!args.checkpoint_dir.empty()) {
    try {
      saved = load_checkpoint_file(args.checkpoint_dir, info.rank);
    } catch (const CheckpointError& error) {
      return fail(log, kExitUsage, std::string("cannot resume: ") + error.what());
    }
    if (saved && (saved->plan != plan.fingerprint(info.world_size) || saved->world_size != info.world_size ||
                  saved->rank != info.rank)) {
      return fail(log, kExitUsage,
                  "cannot resume: " + checkpoint_path(args.checkpoint_dir, info.rank) +
                      " belongs to another plan or world (same --op/--dtype/--bytes/--iters/"
                      "--warmup and world size needed)");
    }
  }

  Hello mine{};
  if (info.rank == 0) {
    if (const ncclResult_t r = ncclGetUniqueId(&mine.id); r != ncclSuccess) {
      return fail(log, kExitBootstrap, std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
    }
  }
  mine.resume_step = saved ? saved->latest_step() : 0;
  mine.plan = plan.fingerprint(info.world_size);
  std::vector<std::string> hellos;
  try {
    Rendezvous rendezvous(info, std::chrono::milliseconds(static_cast<int64_t>(args.rdzv_timeout_s * 1000)));
    hellos = rendezvous.allgather(std::string(reinterpret_cast<const char*>(&mine), sizeof(mine)));
  } catch (const std::exception& error) {
    return fail(log, kExitBootstrap,
                std::string("rendezvous with ") + info.master_addr + ":" + std::to_string(info.master_port) +
                    " failed: " + error.what());
  }
  std::vector<uint64_t> steps;
  Hello root{};
  for (size_t r = 0; r < hellos.size(); ++r) {
    Hello hello{};
    if (hellos[r].size() != sizeof(Hello)) return fail(log, kExitBootstrap, "rendezvous: malformed message");
    std::memcpy(&hello, hellos[r].data(), sizeof(Hello));
    if (hello.plan != mine.plan) {
      return fail(log, kExitUsage, "rank " + std::to_string(r) + " runs another plan (different arguments)");
    }
    if (r == 0) root = hello;
    steps.push_back(hello.resume_step);
  }
  const uint64_t first_step = common_resume_step(steps);
  Checkpoint checkpoint;
  checkpoint.rank = info.rank;
  checkpoint.world_size = info.world_size;
  checkpoint.plan = mine.plan;
  checkpoint.total_steps = plan.total_steps();
  uint64_t digest = 0, wrong_total = 0;
  if (first_step > 0) {
    const auto entry = saved ? saved->entry_at(first_step) : std::nullopt;
    if (!entry) {
      return fail(log, kExitBootstrap,
                  "cannot resume at step " + std::to_string(first_step) +
                      ": this rank's checkpoint no longer holds it");
    }
    checkpoint.push(*entry);  // entries past the resume point are redone
    digest = entry->digest;
    wrong_total = entry->wrong_total;
    log.write(ev::kResume, {{"iter", first_step},
                            {"path", checkpoint_path(args.checkpoint_dir, info.rank)},
                            {"digest", digest},
                            {"wrong_total", wrong_total}});
    if (info.rank == 0) {
      std::printf("# resuming at step %llu of %llu from %s\n", static_cast<unsigned long long>(first_step),
                  static_cast<unsigned long long>(plan.total_steps()), args.checkpoint_dir.c_str());
    }
  }

  Watchdog watchdog(args, log, info.rank);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (args.nonblocking) config.blocking = 0;
  watchdog.start_standalone();
  watchdog.begin_host_call("comm_init", -1);
  ncclResult_t init = ncclCommInitRankConfig(&comm, info.world_size, root.id, info.rank, &config);
  if (comm != nullptr) watchdog.set_comm(comm);
  if (args.nonblocking && comm != nullptr) init = await_nonblocking(comm, init);
  watchdog.end_host_call();
  watchdog.stop_standalone();
  if (init != ncclSuccess) {
    log.write(ev::kNcclError, {{"code", static_cast<int>(init)},
                               {"message", ncclGetErrorString(init)},
                               {"where", "ncclCommInitRankConfig"}});
    if (comm != nullptr) ncclCommAbort(comm);
    return fail(log, kExitBootstrap, std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(init));
  }

  if (info.rank == 0 && !args.quiet) {
    std::printf("# ncclfi-workload: %d ranks, NCCL %s, %s communicator, watchdog %s, check %s\n",
                info.world_size, nccl_version_string().c_str(),
                args.nonblocking ? "non-blocking" : "blocking",
                args.watchdog ? ("on, " + format_seconds(args.timeout_s) + " s").c_str() : "off",
                args.check ? "stops the job" : "reports only");
    for (OpKind op : args.ops) {
      if (op != OpKind::kSendRecv && std::string(op_implementation(op)) != "native") {
        std::printf("# %s: this NCCL lacks it, run as grouped send/recv\n", op_spec(op).name.data());
      }
    }
    std::printf("# %13s %12s %12s %9s %6s %5s %10s %7s %7s %7s\n", "op", "size(B)", "count", "type", "redop",
                "root", "time(us)", "algbw", "busbw", "#wrong");
    std::fflush(stdout);
  }

  const auto started = std::chrono::steady_clock::now();
  RunOutcome outcome;
  try {
    StepRunner runner(args, plan, comm, info.rank, info.world_size, log, watchdog);
    outcome =
        runner.run(first_step, digest, wrong_total, args.checkpoint_dir.empty() ? nullptr : &checkpoint);
  } catch (const CheckpointError& error) {
    watchdog.abort_and_exit(kExitUsage, error.what());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ncclfi-workload: rank %d: %s\n", info.rank, error.what());
    watchdog.abort_and_exit(kExitNcclError, error.what());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t expected = plan.expected_digest(info.rank, info.world_size, plan.total_steps());
  const bool verified = outcome.wrong_total == 0 && outcome.digest == expected;
  watchdog.set_comm(nullptr);
  // On a non-blocking communicator ncclCommFinalize returns ncclInProgress: destroying it before the
  // finalize settles crashes inside NCCL (seen on 2.28.3).
  const ncclResult_t finalized = await_nonblocking(comm, ncclCommFinalize(comm));
  if (finalized != ncclSuccess) {
    log.write(ev::kNcclError, {{"code", static_cast<int>(finalized)},
                               {"message", ncclGetErrorString(finalized)},
                               {"where", "ncclCommFinalize"}});
  }
  ncclCommDestroy(comm);
  log.write(ev::kDone, {{"iters", plan.total_steps()},
                        {"steps_run", outcome.steps_run},
                        {"resumed_from", first_step},
                        {"seconds", seconds},
                        {"verified", verified},
                        {"wrong_total", outcome.wrong_total},
                        {"digest", outcome.digest},
                        {"expected_digest", expected}});
  if (info.rank == 0 && !args.quiet) {
    std::printf("# done: %llu steps (%llu run here), %s, digest %016llx, %.2f s\n",
                static_cast<unsigned long long>(plan.total_steps()),
                static_cast<unsigned long long>(outcome.steps_run),
                verified ? "every result verified" : "WRONG RESULTS",
                static_cast<unsigned long long>(outcome.digest), seconds);
  }
  std::printf("# rank %d: %s (wrong elements: %llu)\n", info.rank, verified ? "verified" : "NOT verified",
              static_cast<unsigned long long>(outcome.wrong_total));
  log.write(ev::kExit, {{"code", kExitOk}});
  return kExitOk;
}

}  // namespace
}  // namespace ncclfi::workload

int main(int argc, char** argv) {
  try {
    return ncclfi::workload::run_workload(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ncclfi-workload: fatal: %s\n", error.what());
    return ncclfi::kExitBootstrap;
  }
}
