#include "workload_args.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <sstream>

#include "checkpoint.h"
#include "dtype.h"
#include "op_spec.h"

namespace ncclfi::workload {
namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.empty()) throw UsageError("empty item in list '" + text + "'");
    items.push_back(item);
  }
  if (items.empty()) throw UsageError("empty list");
  return items;
}

std::vector<OpKind> parse_op_list(const std::string& text) {
  std::vector<OpKind> ops;
  if (text == "all") {
    for (const OpSpec& spec : all_ops()) ops.push_back(spec.kind);
    return ops;
  }
  for (const std::string& name : split_list(text)) {
    const auto op = parse_op(name);
    if (!op) {
      throw UsageError("--op: unknown operation '" + name +
                       "' (all_reduce, all_gather, reduce_scatter, reduce, broadcast, all_to_all, sendrecv, "
                       "gather, scatter, all)");
    }
    ops.push_back(*op);
  }
  return ops;
}

std::vector<DType> parse_dtype_list(const std::string& text) {
  if (text == "all") return {all_dtypes().begin(), all_dtypes().end()};
  std::vector<DType> dtypes;
  for (const std::string& name : split_list(text)) {
    const auto dtype = parse_dtype(name);
    if (!dtype) {
      throw UsageError("--dtype: unknown type '" + name +
                       "' (float, double, half, bfloat16, int8, uint8, int32, int64, all)");
    }
    dtypes.push_back(*dtype);
  }
  return dtypes;
}

}  // namespace

uint64_t parse_byte_size(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])) != 0) ++pos;
  if (pos == 0)
    throw UsageError("bad size '" + text + "': expected a number with an optional K/M/G/T suffix");
  std::string suffix = text.substr(pos);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
    shift = 30;
  } else if (suffix == "T" || suffix == "TB" || suffix == "TIB") {
    shift = 40;
  } else {
    throw UsageError("bad size '" + text + "': unknown suffix '" + text.substr(pos) + "'");
  }
  if (pos > 15) throw UsageError("bad size '" + text + "': too large");
  const uint64_t number = std::stoull(text.substr(0, pos));
  if (number == 0) throw UsageError("bad size '" + text + "': must be at least 1 byte");
  if (number > (UINT64_MAX >> shift) || (number << shift) > (uint64_t{1} << 44)) {
    throw UsageError("bad size '" + text + "': too large (at most 16T)");
  }
  return number << shift;
}

std::string format_byte_size(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

bool parse_workload_args(int argc, const char* const* argv, WorkloadArgs& args, std::string& help_text) {
  CLI::App app{
      "ncclfi-workload: an NCCL job with production safety nets (one process per GPU).\n"
      "Runs each --op x --dtype x --bytes case for --warmup + --iters steps, verifying every element of\n"
      "every result. Without arguments: a short float all_reduce of 1M.\n"
      "Exit codes: 0 ok, 2 NCCL error, 3 watchdog timeout, 4 verification failed (--check),\n"
      "5 async error, 6 bootstrap failure or no GPU, 8 in-place recovery impossible (--recover), 64 usage.\n"
      "--recover shrink: on a peer's failure (an async error, a failed call, or no progress for\n"
      "--timeout-s) the surviving ranks revoke the communicator (ncclCommRevoke, where this NCCL has it),\n"
      "agree on the dead ranks through the rendezvous (rank 0 hosts it and must survive), shrink the\n"
      "communicator to themselves (ncclCommShrink, NCCL 2.27 or newer) and run the remaining steps,\n"
      "resuming at the first step some survivor had not completed. Implies --nonblocking.",
      "ncclfi-workload"};
  app.set_help_flag("-h,--help", "Print this help and exit");
  std::string ops = "all_reduce", dtypes = "float", bytes = "1M";
  bool no_watchdog = false;
  app.add_option("--op", ops, "Operations, comma-separated, or 'all'")->capture_default_str();
  app.add_option("--dtype", dtypes, "Element types, comma-separated, or 'all'")->capture_default_str();
  app.add_option("--bytes", bytes, "Sizes, comma-separated (8, 64K, 1M, 1G)")->capture_default_str();
  app.add_option("--iters", args.iters, "Timed steps per case")->capture_default_str();
  app.add_option("--warmup", args.warmup, "Warm-up steps per case (verified, not timed)")
      ->capture_default_str();
  app.add_flag("--check", args.check, "Stop with exit 4 on the first wrong result");
  app.add_flag("--nonblocking", args.nonblocking, "Non-blocking communicator (config.blocking = 0)");
  app.add_flag("--no-watchdog", no_watchdog, "No watchdog: a hang lasts until someone kills the job");
  app.add_option("--timeout-s", args.timeout_s, "Watchdog: abort after this long without progress")
      ->capture_default_str();
  app.add_option("--poll-ms", args.poll_ms, "Watchdog polling period")->capture_default_str();
  app.add_option("--abort-wait-s", args.abort_wait_s, "Wait at most this long for ncclCommAbort")
      ->capture_default_str();
  app.add_option("--rdzv-timeout-s", args.rdzv_timeout_s, "Rendezvous timeout")->capture_default_str();
  app.add_option("--checkpoint", args.checkpoint_dir, "Save progress in DIR and resume from it");
  app.add_option("--checkpoint-every", args.checkpoint_every, "Steps between checkpoints")
      ->capture_default_str();
  app.add_option("--op-events", args.op_events_every, "Write an op event every N steps (0: none)")
      ->capture_default_str();
  app.add_option("--window", args.window, "Steps in flight at most")->capture_default_str();
  app.add_option("--step-delay-ms", args.step_delay_ms, "Host sleep between steps")->capture_default_str();
  app.add_option("--device", args.device, "CUDA device (default: LOCAL_RANK modulo the device count)");
  app.add_flag("--quiet", args.quiet, "No per-case lines on stdout");
  app.add_option("--recover", args.recover, "In-place recovery on a peer's failure: 'shrink'");
  app.add_option("--recover-wait-s", args.recover_wait_s,
                 "--recover: how long rank 0 waits for the survivors to report before counting a rank dead")
      ->capture_default_str();
  help_text = app.help();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return false;
  } catch (const CLI::ParseError& error) {
    throw UsageError(error.what());
  }
  args.ops = parse_op_list(ops);
  args.dtypes = parse_dtype_list(dtypes);
  args.sizes.clear();
  for (const std::string& size : split_list(bytes)) args.sizes.push_back(parse_byte_size(size));
  args.watchdog = !no_watchdog;
  if (args.iters == 0) throw UsageError("--iters must be at least 1");
  if (!(args.timeout_s > 0)) throw UsageError("--timeout-s must be positive");
  if (!(args.poll_ms > 0) || args.poll_ms > 1000) throw UsageError("--poll-ms must be in (0, 1000]");
  if (args.abort_wait_s < 0) throw UsageError("--abort-wait-s must not be negative");
  if (!(args.rdzv_timeout_s > 0)) throw UsageError("--rdzv-timeout-s must be positive");
  if (args.checkpoint_every == 0) throw UsageError("--checkpoint-every must be at least 1");
  if (args.window == 0 || args.window > 64) throw UsageError("--window must be in 1..64");
  if (args.step_delay_ms < 0) throw UsageError("--step-delay-ms must not be negative");
  if (!args.recover.empty() && args.recover != "shrink")
    throw UsageError("--recover: unknown mode '" + args.recover + "' (known: shrink)");
  if (!(args.recover_wait_s > 0)) throw UsageError("--recover-wait-s must be positive");
  if (!args.recover.empty() && !args.checkpoint_dir.empty())
    throw UsageError(
        "--recover and --checkpoint do not combine (a shrunk job's checkpoints fit no relaunch)");
  // A blocking communicator would hold the failing step's call forever: recovery needs it non-blocking.
  if (!args.recover.empty()) args.nonblocking = true;
  return true;
}

RunPlan make_run_plan(const WorkloadArgs& args) {
  RunPlan plan;
  for (OpKind op : args.ops) {
    for (DType dtype : args.dtypes) {
      for (uint64_t bytes : args.sizes) plan.cases.push_back({op, dtype, bytes});
    }
  }
  plan.steps_per_case = args.warmup + args.iters;
  return plan;
}

uint64_t RunPlan::fingerprint(int world_size) const {
  uint64_t hash = digest_mix(uint64_t{0x6e63636c66692d77} ^ static_cast<uint64_t>(world_size));
  hash = digest_mix(hash ^ steps_per_case);
  for (const WorkloadCase& c : cases) {
    hash = digest_mix(hash ^ static_cast<uint64_t>(c.op));
    hash = digest_mix(hash ^ static_cast<uint64_t>(c.dtype));
    hash = digest_mix(hash ^ c.bytes);
  }
  return hash;
}

uint64_t RunPlan::expected_digest(int rank, int nranks, uint64_t upto) const {
  return expected_digest_from(0, rank, nranks, 0, upto);
}

uint64_t RunPlan::expected_digest_from(uint64_t digest, int rank, int nranks, uint64_t from,
                                       uint64_t upto) const {
  for (uint64_t step = from; step < upto && step < total_steps(); ++step) {
    const WorkloadCase& c = cases[case_of(step)];
    const OpLayout layout = make_layout(c.op, c.bytes, dtype_size(c.dtype), rank, nranks, step);
    digest = digest_step(digest, step, static_cast<int>(c.op), static_cast<int>(c.dtype),
                         defined_elements(layout), 0);
  }
  return digest;
}

}  // namespace ncclfi::workload
