// `ncclfi run` and `ncclfi sweep`.
#include <iostream>

#include "commands.h"
#include "gpu_placement.h"
#include "scenario.h"
#include "scenario_params.h"
#include "suite_runner.h"
#include "sweep_runner.h"

namespace ncclfi::cli {

void add_run_command(CLI::App& app, int& status) {
  auto opts = std::make_shared<SuiteOptions>();
  auto params = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("run", "Run scenarios (files or directories) and judge each one.");
  cmd->add_option("paths", opts->paths, "scenario files or directories (searched recursively for *.json)")
      ->required();
  cmd->add_option("--out", opts->out_root, "root of the run directories (runs/<scenario>/<UTC time>/)")
      ->capture_default_str();
  auto reports = std::make_shared<std::vector<std::string>>();
  add_report_options(*cmd, *reports);
  // One value per --filter (and per --set below): `--filter net scenarios/` keeps scenarios/ a path.
  cmd->add_option("--filter", opts->filter_tags,
                  "run only the scenarios whose name or a tag matches: globs (*, ?, [...]), case ignored, "
                  "several by commas or repeated; !PATTERN excludes (docs/cli.md)")
      ->allow_extra_args(false);
  cmd->add_flag("--quiet,-q", opts->quiet, "no progress lines");
  cmd->add_option("--param", *params,
                  "NAME=VALUE for the scenarios' {param:NAME} placeholders (templates: your script, its "
                  "arguments, ranks); repeatable");
  add_gpu_options(*cmd, opts->gpu_sharing, opts->mps);
  cmd->add_option("--repeat", opts->repeat,
                  "run each scenario N times and report its pass rate (a flaky scenario passes only some)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", opts->json,
                "print summary.json on stdout instead of the table (progress stays on stderr); with "
                "--dry-run, the plan");
  cmd->add_flag("--dry-run", opts->dry_run,
                "validate everything and print, per host and rank, what would be injected and when; launch "
                "nothing, write nothing");
  cmd->add_option("--allowed-hosts", opts->allowed_hosts_file,
                  "a file of hosts (names or globs, one or more a line, # comments) outside which nothing is "
                  "injected; adds to NCCLFI_ALLOWED_HOSTS (docs/drills.md)");
  cmd->add_option("--max-faulted-ranks", opts->max_faulted_ranks,
                  "refuse a scenario whose faults reach more ranks (on top of its limits.max_faulted_ranks)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option(
         "--max-faulted-hosts", opts->max_faulted_hosts,
         "refuse a scenario whose faulted ranks span more hosts (on top of limits.max_faulted_hosts)")
      ->check(CLI::Range(1, 4096));
  describe_values(*cmd, {{"paths", ValueKind::kScenario, "PATH"},
                         {"--out", ValueKind::kDirectory, "DIR"},
                         {"--filter", ValueKind::kText, "PATTERN"},
                         {"--param", ValueKind::kText, "NAME=VALUE"},
                         {"--repeat", ValueKind::kText, "N"},
                         {"--allowed-hosts", ValueKind::kFile, "FILE"},
                         {"--max-faulted-ranks", ValueKind::kText, "N"},
                         {"--max-faulted-hosts", ValueKind::kText, "N"}});
  cmd->footer(
      "Every scenario is validated before the first one launches. Each run leaves runs/<scenario>/<time>/\n"
      "(scenario.json, plan.json, events.jsonl, attempt-N/rank-R.log, verdict.json; `latest` links to it);\n"
      "the suite leaves runs/suites/<time>/ (summary.json, junit.xml, report.html; more with --report).\n"
      "Examples:\n"
      "  ncclfi run scenarios/cpu/\n"
      "  ncclfi run scenarios/cpu/net-drop-recv-hang.json --out /tmp/runs --junit junit.xml\n"
      "  ncclfi run scenarios/ --filter cpu --filter net\n"
      "  ncclfi run scenarios/cpu/ --repeat 10 --json > flakiness.json\n"
      "  ncclfi run scenarios/drills/ --dry-run --allowed-hosts staging-hosts.txt\n"
      "    (staging-hosts.txt: host names or globs, one or more a line, # comments; e.g. `hostname > "
      "staging-hosts.txt`)");
  cmd->callback([opts, params, reports, &status] {
    try {
      opts->reports = report_requests(*reports);
    } catch (const std::invalid_argument& e) {
      std::cerr << "ncclfi run: " << e.what() << "\n";
      status = kBadInput;
      return;
    }
    try {
      for (const auto& p : *params) opts->params.insert(parse_param_assignment(p));
      status = run_suite(*opts).exit_status;
    } catch (const std::invalid_argument& e) {
      std::cerr << "ncclfi run: --param: " << e.what() << "\n";
      status = kBadInput;
    } catch (const ScenarioError& e) {
      std::cerr << e.what() << "\n";
      status = kBadInput;
    }
  });
}

void add_report_options(CLI::App& cmd, std::vector<std::string>& texts) {
  std::string names;
  for (const harness::ReportSpec* spec : harness::report_specs()) {
    names += (names.empty() ? "" : ", ") + std::string(spec->name);
    const std::string name(spec->name);
    auto* opt = cmd.add_option_function<std::string>(
        "--" + name, [&texts, name](const std::string& path) { texts.push_back(name + "=" + path); },
        "also write the " + name + " report (" + std::string(spec->default_file) +
            ") here; same as --report " + name + "=PATH");
    describe_value(opt, ValueKind::kFile, "FILE");
  }
  auto* report = cmd.add_option("--report", texts,
                                "FORMAT or FORMAT=PATH: also write this report format (" + names +
                                    "), at PATH or in the suite directory; repeatable (ncclfi list reports)");
  report->allow_extra_args(false);
  describe_value(report, ValueKind::kReportFormat, "FORMAT[=PATH]");
}

std::vector<harness::ReportRequest> report_requests(const std::vector<std::string>& texts) {
  std::vector<harness::ReportRequest> requests;
  for (const auto& text : texts) requests.push_back(harness::parse_report_request(text));
  return requests;
}

void add_gpu_options(CLI::App& cmd, GpuSharing& sharing, bool& mps) {
  add_choice_option<GpuSharing>(
      cmd, "--gpu-sharing", sharing,
      {{"auto", GpuSharing::kAuto}, {"always", GpuSharing::kAlways}, {"never", GpuSharing::kNever}}, "WHEN",
      "several ranks per GPU, each rank a host of its own (NCCL_HOSTID) over the network path: auto (when a "
      "scenario needs more GPUs than are visible), always (every rank on one GPU), never (skip such "
      "scenarios)",
      "auto");
  add_choice_option<bool>(cmd, "--mps", mps, {{"auto", true}, {"never", false}}, "WHEN",
                          "shared-GPU mode: auto (ncclfi starts its own MPS daemon per attempt when "
                          "nvidia-cuda-mps-control is on PATH) or never (the ranks time-slice the GPU)",
                          "auto");
}

void add_sweep_command(CLI::App& app, int& status) {
  auto opts = std::make_shared<SweepOptions>();
  auto* cmd =
      app.add_subcommand("sweep", "Run a scenario over the product of --set values; print the matrix.");
  cmd->add_option("scenario", opts->scenario_path, "the scenario file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--set", opts->sets,
                  "PARAM=v1,v2,... (a parameter the scenario declares in \"params\") or "
                  "JSON_POINTER=v1,v2,...: values for one axis (repeat for more axes)")
      ->required()
      ->allow_extra_args(false);
  cmd->add_option(
         "--hang", opts->hang_scenario_path,
         "the same job with a real hang: each value also runs against it, and the sweep names the "
         "smallest timeout (first axis) that never fired on the stall, with its detection time on the hang")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", opts->out_root, "root of the run directories")->capture_default_str();
  cmd->add_flag("--quiet,-q", opts->quiet, "no progress lines");
  cmd->add_flag("--json", opts->json, "print sweep.json on stdout instead of the matrix");
  describe_values(*cmd, {{"scenario", ValueKind::kScenario, "SCENARIO"},
                         {"--set", ValueKind::kText, "PARAM=V1,V2"},
                         {"--hang", ValueKind::kScenario, "SCENARIO"},
                         {"--out", ValueKind::kDirectory, "DIR"}});
  cmd->footer(
      "Values are JSON (numbers, true, \"text\") except where the field holds a string (workload args).\n"
      "Examples:\n"
      "  ncclfi sweep scenarios/cpu/net-delay-degraded.json --set /faults/0/params/ms=1,5,20\n"
      "  ncclfi sweep scenarios/cpu/net-stall-survived.json --set timeout_s=1,2,4,8 \\\n"
      "      --hang scenarios/cpu/net-drop-recv-hang.json");
  cmd->callback([opts, &status] { status = run_sweep(*opts); });
}

}  // namespace ncclfi::cli
