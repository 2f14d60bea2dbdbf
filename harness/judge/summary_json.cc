// summary.json: one line per run with its status, and the suite's counts.
#include "reports.h"

namespace ncclfi::harness {

nlohmann::json summary_json(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : records) {
    nlohmann::json run = {{"scenario", r.scenario},
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

class SummaryJsonReport : public FileReport {
 public:
  using FileReport::FileReport;

 protected:
  std::string render(const Suite& suite) const override {
    return summary_json(suite.info, suite.records)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
  }
};

}  // namespace

std::unique_ptr<Report> make_summary_json_report(std::vector<std::string> paths) {
  return std::make_unique<SummaryJsonReport>(std::move(paths));
}

}  // namespace ncclfi::harness
