// ncclfi-workload: an NCCL job with the safety nets of a production framework (the workload contract,
// workload_contract.h). One process per GPU; rendezvous from torchrun-style variables, Open MPI or Slurm.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint.h"
#include "nccl_session.h"
#include "ncclfi/event_log.h"
#include "ncclfi/params.h"
#include "ncclfi/workload_contract.h"
#include "op_spec.h"
#include "program_tag.h"
#include "recovery.h"
#include "rendezvous.h"
#include "step_runner.h"
#include "workload_args.h"

namespace ncclfi::workload {
namespace {

int fail(const EventLog& log, int code, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program_tag(), message.c_str());
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

// What the steps of a run share once the arguments are read and the rank knows its place.
struct Job {
  const WorkloadArgs& args;
  const RunPlan& plan;
  const RendezvousInfo& info;
  const EventLog& log;
};

// Each step returns nullopt to go on, else the exit code the run ends with (fail() has logged why).
using Stop = std::optional<int>;

// One GPU per rank: --device, else the local rank's.
Stop select_device(const Job& job) {
  int device_count = 0;
  const cudaError_t device_error = cudaGetDeviceCount(&device_count);
  if (device_error != cudaSuccess || device_count == 0) {
    return fail(job.log, kExitBootstrap,
                std::string("no usable CUDA device (cudaGetDeviceCount: ") +
                    (device_error != cudaSuccess ? cudaGetErrorString(device_error) : "0 devices") +
                    "); this workload needs one GPU per rank");
  }
  const int device = job.args.device >= 0 ? job.args.device : job.info.local_rank % device_count;
  if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    return fail(job.log, kExitBootstrap,
                "cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(e));
  }
  for (DType dtype : job.args.dtypes) {
    if (job.info.world_size > max_exact_ranks(dtype)) {
      std::fprintf(stderr, "%s: warning: %s sums over %d ranks may overflow; expect mismatches\n",
                   program_tag(), dtype_name(dtype).data(), job.info.world_size);
    }
  }
  return std::nullopt;
}

// This rank's newest checkpoint (the resume point is agreed with the others afterwards): none without
// --checkpoint-dir or a file; one of another plan or world stops the run.
Stop load_saved_checkpoint(const Job& job, std::optional<Checkpoint>& saved) {
  if (job.args.checkpoint_dir.empty()) return std::nullopt;
  try {
    saved = load_checkpoint_file(job.args.checkpoint_dir, job.info.rank);
  } catch (const CheckpointError& error) {
    return fail(job.log, kExitUsage, std::string("cannot resume: ") + error.what());
  }
  if (saved && (saved->plan != job.plan.fingerprint(job.info.world_size) ||
                saved->world_size != job.info.world_size || saved->rank != job.info.rank)) {
    return fail(job.log, kExitUsage,
                "cannot resume: " + checkpoint_path(job.args.checkpoint_dir, job.info.rank) +
                    " belongs to another plan or world (same --op/--dtype/--bytes/--iters/"
                    "--warmup and world size needed)");
  }
  return std::nullopt;
}

// What the ranks agree on at the rendezvous: rank 0's NCCL unique id and the step they all resume at.
struct Agreement {
  ncclUniqueId id{};
  uint64_t first_step = 0;
  uint64_t plan = 0;  // this rank's plan fingerprint (every rank's, once agreed)
};

// Every rank's Hello through the rendezvous: the same plan everywhere, rank 0's id, the common step.
// With --recover the rendezvous stays open in `kept` (the survivors agree on the dead through it).
Stop meet_peers(const Job& job, const std::optional<Checkpoint>& saved, Agreement& agreed,
                std::unique_ptr<Rendezvous>& kept) {
  Hello mine{};
  if (job.info.rank == 0) {
    if (const ncclResult_t r = ncclGetUniqueId(&mine.id); r != ncclSuccess) {
      return fail(job.log, kExitBootstrap, std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
    }
  }
  mine.resume_step = saved ? saved->latest_step() : 0;
  mine.plan = job.plan.fingerprint(job.info.world_size);
  std::vector<std::string> hellos;
  try {
    auto rendezvous = std::make_unique<Rendezvous>(
        job.info, std::chrono::milliseconds(static_cast<int64_t>(job.args.rdzv_timeout_s * 1000)));
    hellos = rendezvous->allgather(std::string(reinterpret_cast<const char*>(&mine), sizeof(mine)));
    if (!job.args.recover.empty()) kept = std::move(rendezvous);
  } catch (const std::exception& error) {
    return fail(job.log, kExitBootstrap,
                std::string("rendezvous with ") + job.info.master_addr + ":" +
                    std::to_string(job.info.master_port) + " failed: " + error.what());
  }
  std::vector<uint64_t> steps;
  Hello root{};
  for (size_t r = 0; r < hellos.size(); ++r) {
    Hello hello{};
    if (hellos[r].size() != sizeof(Hello))
      return fail(job.log, kExitBootstrap, "rendezvous: malformed message");
    std::memcpy(&hello, hellos[r].data(), sizeof(Hello));
    if (hello.plan != mine.plan) {
      return fail(job.log, kExitUsage,
                  "rank " + std::to_string(r) + " runs another plan (different arguments)");
    }
    if (r == 0) root = hello;
    steps.push_back(hello.resume_step);
  }
  agreed.id = root.id;
  agreed.first_step = common_resume_step(steps);
  agreed.plan = mine.plan;
  return std::nullopt;
}

// Where the steps start: the checkpoint this run keeps, and the digest and wrong count so far.
struct ResumePoint {
  Checkpoint checkpoint;
  uint64_t digest = 0, wrong_total = 0;
};

Stop resume_at(const Job& job, const std::optional<Checkpoint>& saved, const Agreement& agreed,
               ResumePoint& resume) {
  resume.checkpoint.rank = job.info.rank;
  resume.checkpoint.world_size = job.info.world_size;
  resume.checkpoint.plan = agreed.plan;
  resume.checkpoint.total_steps = job.plan.total_steps();
  const uint64_t first_step = agreed.first_step;
  if (first_step == 0) return std::nullopt;
  const auto entry = saved ? saved->entry_at(first_step) : std::nullopt;
  if (!entry) {
    return fail(job.log, kExitBootstrap,
                "cannot resume at step " + std::to_string(first_step) +
                    ": this rank's checkpoint no longer holds it");
  }
  resume.checkpoint.push(*entry);  // entries past the resume point are redone
  resume.digest = entry->digest;
  resume.wrong_total = entry->wrong_total;
  job.log.write(ev::kResume, {{"iter", first_step},
                              {"path", checkpoint_path(job.args.checkpoint_dir, job.info.rank)},
                              {"digest", resume.digest},
                              {"wrong_total", resume.wrong_total}});
  if (job.info.rank == 0) {
    std::printf("# resuming at step %llu of %llu from %s\n", static_cast<unsigned long long>(first_step),
                static_cast<unsigned long long>(job.plan.total_steps()), job.args.checkpoint_dir.c_str());
  }
  return std::nullopt;
}

// The communicator, created under the watchdog (a hung init is caught like a hung collective).
Stop init_communicator(const Job& job, Watchdog& watchdog, const ncclUniqueId& id, ncclComm_t& comm) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (job.args.nonblocking) config.blocking = 0;
  watchdog.start_standalone();
  watchdog.begin_host_call("comm_init", -1);
  ncclResult_t init = ncclCommInitRankConfig(&comm, job.info.world_size, id, job.info.rank, &config);
  if (comm != nullptr) watchdog.set_comm(comm);
  if (job.args.nonblocking && comm != nullptr) init = await_nonblocking(comm, init);
  watchdog.end_host_call();
  watchdog.stop_standalone();
  if (init != ncclSuccess) {
    job.log.write(ev::kNcclError, {{"code", static_cast<int>(init)},
                                   {"message", ncclGetErrorString(init)},
                                   {"where", "ncclCommInitRankConfig"}});
    if (comm != nullptr) ncclCommAbort(comm);
    return fail(job.log, kExitBootstrap, std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(init));
  }
  return std::nullopt;
}

// Rank 0's header: the job, the ops NCCL lacks, the table's columns.
void print_header(const Job& job) {
  const WorkloadArgs& args = job.args;
  std::printf("# %s: %d ranks, NCCL %s, %s communicator, watchdog %s, check %s\n", program_tag(),
              job.info.world_size, nccl_version_string().c_str(),
              args.nonblocking ? "non-blocking" : "blocking",
              args.watchdog ? ("on, " + format_seconds(args.timeout_s) + " s").c_str() : "off",
              args.check ? "stops the job" : "reports only");
  if (!args.recover.empty()) {
    std::printf("# recover: shrink to the survivors on a peer's failure (ncclCommRevoke %s)\n",
                recovery_api().revoke ? "first" : "missing: NCCL_SHRINK_ABORT instead");
  }
  for (OpKind op : args.ops) {
    if (op != OpKind::kSendRecv && std::string(op_implementation(op)) != "native") {
      std::printf("# %s: this NCCL lacks it, run as grouped send/recv\n", op_spec(op).name.data());
    }
  }
  std::printf("# %13s %12s %12s %9s %6s %5s %10s %7s %7s %7s\n", "op", "size(B)", "count", "type", "redop",
              "root", "time(us)", "algbw", "busbw", "#wrong");
  std::fflush(stdout);
}

// Which rank of how many ran the steps from `from` on: one segment per communicator (a shrink starts a
// new one), so the expected digest follows the job through its recoveries.
struct Segment {
  uint64_t from;
  int rank, nranks;
};

uint64_t expected_digest(const RunPlan& plan, const std::vector<Segment>& segments) {
  uint64_t digest = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const uint64_t upto = i + 1 < segments.size() ? segments[i + 1].from : plan.total_steps();
    digest = plan.expected_digest_from(digest, segments[i].rank, segments[i].nranks, segments[i].from, upto);
  }
  return digest;
}

// --recover shrink: the failed step's aftermath. Returns with the runner rebound to the shrunk
// communicator and `outcome` holding the digest at the resume point; where that cannot be, the process
// ends with exit 8 (kExitNoRecovery) and the reason in its abort and exit events.
void recover_in_place(const Job& job, Membership& m, Rendezvous& rendezvous, StepRunner& runner,
                      Watchdog& watchdog, RunOutcome& outcome, std::vector<Segment>& segments) {
  const std::string failure = watchdog.failure();
  job.log.write(ev::kRecovering, {{"error", failure.empty() ? "a failed NCCL call" : failure},
                                  {"next_step", outcome.next_step},
                                  {"world_size", m.size()}});
  std::fprintf(stderr, "%s: rank %d: step %llu failed (%s): shrinking to the survivors\n", program_tag(),
               job.info.rank, static_cast<unsigned long long>(outcome.next_step),
               failure.empty() ? "a failed NCCL call" : failure.c_str());
  watchdog.set_comm(nullptr);
  const RecoveryResult result = shrink_to_survivors(m, rendezvous, outcome.next_step, job.args);
  if (!result.error.empty()) {
    ncclComm_t comm = m.comm;
    watchdog.set_comm(comm);
    watchdog.abort_and_exit(kExitNoRecovery, "no in-place recovery: " + result.error);
  }
  uint64_t digest = 0, wrong_total = 0;
  if (!runner.state_before(result.resume_step, digest, wrong_total)) {
    watchdog.set_comm(m.comm);
    watchdog.abort_and_exit(kExitNoRecovery,
                            "no in-place recovery: this rank no longer knows its state at step " +
                                std::to_string(result.resume_step));
  }
  try {
    runner.rebind(m.comm, m.rank, m.size(), job.args.timeout_s);
  } catch (const std::exception& error) {
    watchdog.set_comm(m.comm);
    watchdog.abort_and_exit(kExitNoRecovery, std::string("no in-place recovery: ") + error.what());
  }
  watchdog.clear_failure();
  watchdog.set_comm(m.comm);
  segments.push_back({result.resume_step, m.rank, m.size()});
  job.log.write(ev::kRecovered, {{"resume_step", result.resume_step},
                                 {"survivors", m.size()},
                                 {"excluded", result.excluded},
                                 {"members", m.members},
                                 {"comm_rank", m.rank},
                                 {"method", result.method},
                                 {"revoke", result.revoked},
                                 {"parent_error", result.parent_error},
                                 {"shrink_flags", result.method != "shrink" ? ""
                                                  : result.revoked          ? "NCCL_SHRINK_DEFAULT"
                                                                            : "NCCL_SHRINK_ABORT"},
                                 {"nccl_version", nccl_version_string()},
                                 {"recovery_ms", result.ms}});
  const std::string how = result.method == "reinit"
                              ? "a new communicator of the survivors: a parent still "
                                "reported the peer's error, which ncclCommShrink refuses"
                          : result.revoked ? "revoked, then shrunk"
                                           : "shrunk with NCCL_SHRINK_ABORT";
  std::fprintf(stderr, "%s: rank %d: recovered in place: %d survivors, resuming at step %llu (%s, %.0f ms)\n",
               program_tag(), job.info.rank, m.size(), static_cast<unsigned long long>(result.resume_step),
               how.c_str(), result.ms);
  outcome.digest = digest;
  outcome.wrong_total = wrong_total;
}

// The steps from the resume point; a failing step ends the process through the watchdog, or with
// --recover shrinks the communicator to the survivors and goes on.
RunOutcome run_steps(const Job& job, Membership& m, Rendezvous* rendezvous, Watchdog& watchdog,
                     uint64_t first_step, ResumePoint& resume, std::vector<Segment>& segments) {
  RunOutcome outcome;
  try {
    StepRunner runner(job.args, job.plan, m.comm, m.rank, m.size(), job.log, watchdog);
    outcome = runner.run(first_step, resume.digest, resume.wrong_total,
                         job.args.checkpoint_dir.empty() ? nullptr : &resume.checkpoint);
    uint64_t steps_total = outcome.steps_run;
    while (outcome.needs_recovery && rendezvous != nullptr) {
      recover_in_place(job, m, *rendezvous, runner, watchdog, outcome, segments);
      const uint64_t from = segments.back().from;
      outcome = runner.run(from, outcome.digest, outcome.wrong_total, nullptr);
      steps_total += outcome.steps_run;
    }
    outcome.steps_run = steps_total;
  } catch (const CheckpointError& error) {
    watchdog.abort_and_exit(kExitUsage, error.what());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: rank %d: %s\n", program_tag(), job.info.rank, error.what());
    watchdog.abort_and_exit(kExitNcclError, error.what());
  }
  return outcome;
}

// The communicator's end, the done event with the verification, and the closing lines.
int finish(const Job& job, ncclComm_t comm, Watchdog& watchdog, const RunOutcome& outcome,
           uint64_t first_step, double seconds, const std::vector<Segment>& segments) {
  const uint64_t expected = expected_digest(job.plan, segments);
  const bool verified = outcome.wrong_total == 0 && outcome.digest == expected;
  watchdog.set_comm(nullptr);
  // On a non-blocking communicator ncclCommFinalize returns ncclInProgress: destroying it before the
  // finalize settles crashes inside NCCL (seen on 2.28.3).
  const ncclResult_t finalized = await_nonblocking(comm, ncclCommFinalize(comm));
  if (finalized != ncclSuccess) {
    job.log.write(ev::kNcclError, {{"code", static_cast<int>(finalized)},
                                   {"message", ncclGetErrorString(finalized)},
                                   {"where", "ncclCommFinalize"}});
  }
  ncclCommDestroy(comm);
  job.log.write(ev::kDone, {{"iters", job.plan.total_steps()},
                            {"steps_run", outcome.steps_run},
                            {"resumed_from", first_step},
                            {"seconds", seconds},
                            {"verified", verified},
                            {"wrong_total", outcome.wrong_total},
                            {"digest", outcome.digest},
                            {"expected_digest", expected}});
  if (job.info.rank == 0 && !job.args.quiet) {
    std::printf("# done: %llu steps (%llu run here), %s, digest %016llx, %.2f s\n",
                static_cast<unsigned long long>(job.plan.total_steps()),
                static_cast<unsigned long long>(outcome.steps_run),
                verified ? "every result verified" : "WRONG RESULTS",
                static_cast<unsigned long long>(outcome.digest), seconds);
  }
  std::printf("# rank %d: %s (wrong elements: %llu)\n", job.info.rank, verified ? "verified" : "NOT verified",
              static_cast<unsigned long long>(outcome.wrong_total));
  job.log.write(ev::kExit, {{"code", kExitOk}});
  return kExitOk;
}

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
  const Job job{args, plan, info, log};
  std::optional<Checkpoint> saved;
  Agreement agreed;
  ResumePoint resume;
  if (const Stop stop = select_device(job)) return *stop;
  if (const Stop stop = load_saved_checkpoint(job, saved)) return *stop;
  if (!args.recover.empty() && !recovery_api().shrink) {
    return fail(log, kExitNoRecovery,
                "--recover shrink needs ncclCommShrink (NCCL 2.27 or newer); this process loaded NCCL " +
                    nccl_version_string());
  }
  std::unique_ptr<Rendezvous> rendezvous;
  if (const Stop stop = meet_peers(job, saved, agreed, rendezvous)) return *stop;
  if (const Stop stop = resume_at(job, saved, agreed, resume)) return *stop;

  Watchdog watchdog(args, log, info.rank);
  ncclComm_t comm = nullptr;
  if (const Stop stop = init_communicator(job, watchdog, agreed.id, comm)) return *stop;
  // Only the steps recover: a communicator that cannot even be made ends the run as before.
  watchdog.set_recover(!args.recover.empty());
  if (info.rank == 0 && !args.quiet) print_header(job);

  Membership membership{comm, info.rank, {}};
  for (int r = 0; r < info.world_size; ++r) membership.members.push_back(r);
  std::vector<Segment> segments{{0, info.rank, info.world_size}};
  const auto started = std::chrono::steady_clock::now();
  const RunOutcome outcome =
      run_steps(job, membership, rendezvous.get(), watchdog, agreed.first_step, resume, segments);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return finish(job, membership.comm, watchdog, outcome, agreed.first_step, seconds, segments);
}

}  // namespace
}  // namespace ncclfi::workload

int main(int argc, char** argv) {
  try {
    return ncclfi::workload::run_workload(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: fatal: %s\n", ncclfi::workload::program_tag(), error.what());
    return ncclfi::kExitBootstrap;
  }
}
