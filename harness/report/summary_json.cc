// summary.json: one line per run with its status, and the suite's counts.
#include "report_spec.h"
#include "reports.h"
#include "run_names.h"

namespace ncclfi::harness {

nlohmann::json summary_json(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  nlohmann::json runs = nlohmann::json::array();
  const std::vector<std::string> names = run_names(records);
  for (size_t i = 0; i < records.size(); ++i) {
    const RunRecord& r = records[i];
    nlohmann::json run = {{"scenario", r.scenario},
                          {"run_name", names[i]},
                          {"tags", r.tags},
                          {"run_dir", r.run_dir},
                          {"status", std::string(to_string(run_status(r)))},
                          {"expected", expected_summary(r.expect)}};
    if (r.skipped) {
      run["skip_reason"] = r.skip_reason;  // not run: no outcome, no observation
    } else {
      run["observed"] = observed_summary(r.judgement);
      run["outcome"] = std::string(to_string(r.judgement.outcome));
      run["mechanisms"] = r.judgement.mechanisms;
      run["detection_s"] =
          r.judgement.detection_s ? nlohmann::json(*r.judgement.detection_s) : nlohmann::json();
      run["restarts"] = r.judgement.restarts;
      run["reasons"] = r.judgement.reasons;
      run["harness_error"] = r.harness_error;
    }
    runs.push_back(std::move(run));
  }
  const StatusCounts c = count_statuses(records);
  nlohmann::json doc = {{"suite", suite.name},  {"start_ns", suite.start_ns}, {"end_ns", suite.end_ns},
                        {"total", c.total()},   {"passed", c.pass},           {"failed", c.fail},
                        {"unknown", c.unknown}, {"skipped", c.skipped},       {"errors", c.error},
                        {"runs", runs}};
  // Repeated runs (--repeat): how often each scenario passed.
  if (const auto rates = pass_rates(records); has_repeats(rates)) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& p : rates) {
      list.push_back({{"scenario", p.scenario},
                      {"runs", p.runs},
                      {"passed", p.passed},
                      {"pass_rate", p.runs > 0 ? nlohmann::json(static_cast<double>(p.passed) /
                                                                static_cast<double>(p.runs))
                                               : nlohmann::json()},
                      {"flaky", p.flaky()}});
    }
    doc["pass_rates"] = std::move(list);
  }
  return doc;
}

namespace {

std::string render_summary_json(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  return summary_json(suite, records).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

extern const ReportSpec kSummaryJsonReport = {
    .name = "summary",
    .default_file = "summary.json",
    .summary =
        "JSON: each run's status, outcome and detection, and the suite's counts (what `run --json` prints)",
    .in_every_suite = true,
    .render = render_summary_json,
};

}  // namespace ncclfi::harness
