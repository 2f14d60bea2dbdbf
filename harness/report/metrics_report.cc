// The suite as Prometheus metrics (`ncclfi run --metrics FILE`), in the text exposition format
// (https://prometheus.io/docs/instrumenting/exposition_formats/): one HELP and TYPE line per metric
// family, every sample of a family together, label values escaped, one series per scenario run (the
// `run` label numbers the runs of a repeated scenario, so no two samples share their labels). A
// textfile collector or a push gateway takes the file as it is.
#include <cstdio>
#include <map>

#include "report_spec.h"
#include "report_text.h"
#include "reports.h"

namespace ncclfi::harness {
namespace {

// Label values escape backslash, double quote and line feed; nothing else.
std::string label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

struct Family {
  const char* name;
  const char* help;
  std::string samples;
};

}  // namespace

std::string render_prometheus(const SuiteInfo& suite, const std::vector<RunRecord>& records) {
  Family verdict{"ncclfi_scenario_status",
                 "Status of a scenario run: 1 for the status it had (pass, fail, unknown, skipped, error).",
                 ""};
  Family detection{"ncclfi_scenario_detection_seconds",
                   "Seconds from the first injection to the first detection (runs with a detection only).",
                   ""};
  Family restarts{"ncclfi_scenario_restarts",
                  "Restarts in a scenario run (harness relaunches and torchrun's).", ""};
  Family duration{"ncclfi_scenario_duration_seconds", "Wall time of a scenario run, baselines excluded.", ""};
  std::map<std::string, int> runs_of;
  for (const auto& r : records) {
    const std::string labels =
        "scenario=\"" + label_value(r.scenario) + "\",run=\"" + std::to_string(++runs_of[r.scenario]) + "\"";
    verdict.samples += std::string(verdict.name) + "{" + labels + ",status=\"" +
                       std::string(to_string(run_status(r))) + "\"} 1\n";
    if (r.skipped) continue;
    if (r.judgement.detection_s)
      detection.samples +=
          std::string(detection.name) + "{" + labels + "} " + number(*r.judgement.detection_s) + "\n";
    restarts.samples +=
        std::string(restarts.name) + "{" + labels + "} " + std::to_string(r.judgement.restarts) + "\n";
    if (const auto seconds = run_seconds(r)) {
      duration.samples += std::string(duration.name) + "{" + labels + "} " + number(*seconds) + "\n";
    }
  }
  const StatusCounts c = count_statuses(records);
  Family totals{"ncclfi_suite_scenario_runs", "Scenario runs of the suite, by status.", ""};
  for (const auto& [status, n] : std::vector<std::pair<const char*, size_t>>{{"pass", c.pass},
                                                                             {"fail", c.fail},
                                                                             {"unknown", c.unknown},
                                                                             {"skipped", c.skipped},
                                                                             {"error", c.error}}) {
    totals.samples += std::string(totals.name) + "{status=\"" + status + "\"} " + std::to_string(n) + "\n";
  }
  Family end{"ncclfi_suite_end_timestamp_seconds", "When the suite ended, seconds since the epoch.", ""};
  if (suite.end_ns > 0) {
    char stamp[64];  // milliseconds kept: %g would round an epoch time to 100 s
    std::snprintf(stamp, sizeof stamp, "%.3f", static_cast<double>(suite.end_ns) / 1e9);
    end.samples = std::string(end.name) + " " + stamp + "\n";
  }

  std::string out;
  for (const Family* f : {&verdict, &detection, &restarts, &duration, &totals, &end}) {
    if (f->samples.empty()) continue;
    out += std::string("# HELP ") + f->name + " " + f->help + "\n# TYPE " + f->name + " gauge\n" + f->samples;
  }
  return out;
}

extern const ReportSpec kMetricsReport = {
    .name = "metrics",
    .default_file = "metrics.prom",
    .summary =
        "Prometheus text format: each run's status, detection time, restarts and duration, and the counts",
    .render = render_prometheus,
};

}  // namespace ncclfi::harness
