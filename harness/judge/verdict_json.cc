// verdict.json: one run's verdict with its judgement and full history, so reports can be re-rendered.
#include <cstdio>
#include <filesystem>

#include "reports.h"

namespace ncclfi::harness {

std::string format_seconds(std::optional<double> seconds) {
  if (!seconds) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fs", *seconds);
  return buf;
}

std::string expected_summary(const nlohmann::json& expect) {
  if (!expect.is_object() || expect.empty()) return "-";
  std::string s;
  auto words = [](const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    std::string out;
    if (v.is_array()) {
      for (const auto& x : v)
        out += (out.empty() ? "" : "|") + (x.is_string() ? x.get<std::string>() : x.dump());
    }
    return out;
  };
  if (expect.contains("outcome")) s = words(expect["outcome"]);
  if (expect.contains("detected_by")) s += "(" + words(expect["detected_by"]) + ")";
  if (expect.contains("detection_s") && expect["detection_s"].is_object()) {
    const auto& d = expect["detection_s"];
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s-%ss", d.contains("min") ? d["min"].dump().c_str() : "",
                  d.contains("max") ? d["max"].dump().c_str() : "");
    s += buf;
  }
  if (expect.contains("result")) s += " " + words(expect["result"]);
  return s.empty() ? expect.dump() : s;
}

std::string observed_summary(const Judgement& j) {
  std::string s(to_string(j.outcome));
  if (j.first_detection) s += "(" + j.first_detection->mechanism + ")";
  if (j.restarts > 0) s += " restarts=" + std::to_string(j.restarts);
  return s;
}

nlohmann::json verdict_json(const RunRecord& r) {
  return {
      {"scenario", r.scenario},
      {"summary", r.summary},
      {"tags", r.tags},
      {"run_dir", r.run_dir},
      {"expect", r.expect},
      {"verdict", std::string(to_string(r.judgement.verdict))},
      {"outcome", std::string(to_string(r.judgement.outcome))},
      {"mechanisms", r.judgement.mechanisms},
      {"detection_s", r.judgement.detection_s ? nlohmann::json(*r.judgement.detection_s) : nlohmann::json()},
      {"restarts", r.judgement.restarts},
      {"reasons", r.judgement.reasons},
      {"skipped", r.skipped},
      {"skip_reason", r.skip_reason},
      {"harness_error", r.harness_error},
      {"judgement", to_json(r.judgement)},
      {"history", to_json(r.history)}};
}

RunRecord run_record_from_json(const nlohmann::json& doc) {
  RunRecord r;
  r.scenario = doc.at("scenario").get<std::string>();
  r.summary = doc.value("summary", std::string());
  r.tags = doc.value("tags", std::vector<std::string>{});
  r.run_dir = doc.value("run_dir", std::string());
  r.expect = doc.value("expect", nlohmann::json::object());
  r.skipped = doc.value("skipped", false);
  r.skip_reason = doc.value("skip_reason", std::string());
  r.harness_error = doc.value("harness_error", std::string());
  r.judgement = judgement_from_json(doc.value("judgement", nlohmann::json::object()));
  r.history = history_from_json(doc.value("history", nlohmann::json::object()));
  return r;
}

void write_verdict(const RunRecord& record) {
  const std::string path = (std::filesystem::path(record.run_dir) / "verdict.json").string();
  write_file_atomic(
      path, verdict_json(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace ncclfi::harness
