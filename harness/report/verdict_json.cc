// verdict.json: one run's verdict with its judgement and full history, so reports can be re-rendered.
#include <cstdio>
#include <filesystem>

#include "reports.h"

namespace ncclfi::harness {

nlohmann::json verdict_json(const RunRecord& r) {
  nlohmann::json doc = {{"scenario", r.scenario}, {"summary", r.summary},
                        {"tags", r.tags},         {"run_dir", r.run_dir},
                        {"expect", r.expect.doc}, {"status", std::string(to_string(run_status(r)))},
                        {"skipped", r.skipped}};
  if (r.skipped) {
    doc["skip_reason"] = r.skip_reason;  // not run: no verdict, outcome or history
    return doc;
  }
  doc["verdict"] = std::string(to_string(r.judgement.verdict));
  doc["outcome"] = std::string(to_string(r.judgement.outcome));
  doc["mechanisms"] = r.judgement.mechanisms;
  doc["detection_s"] = r.judgement.detection_s ? nlohmann::json(*r.judgement.detection_s) : nlohmann::json();
  doc["restarts"] = r.judgement.restarts;
  doc["reasons"] = r.judgement.reasons;
  doc["notes"] = r.judgement.notes;  // settings NCCL did not read (nccl_env.h): never the verdict
  doc["harness_error"] = r.harness_error;
  if (!r.gpu.placement.empty()) {
    doc["gpu"] = {{"placement", r.gpu.placement}, {"shared", r.gpu.shared}, {"mps", r.gpu.mps}};
  }
  // Where each rank ran ("0": "node1"): a drill's reader asks which host first.
  nlohmann::json hosts = nlohmann::json::object();
  for (const auto& [rank, host] : rank_hosts(r.history)) hosts[std::to_string(rank)] = host;
  doc["rank_hosts"] = hosts;
  doc["judgement"] = to_json(r.judgement);
  doc["history"] = to_json(r.history);
  return doc;
}

RunRecord run_record_from_json(const nlohmann::json& doc) {
  RunRecord r;
  r.scenario = doc.at("scenario").get<std::string>();
  r.summary = doc.value("summary", std::string());
  r.tags = doc.value("tags", std::vector<std::string>{});
  r.run_dir = doc.value("run_dir", std::string());
  r.expect = parse_expectation(doc.value("expect", nlohmann::json::object()));
  r.skipped = doc.value("skipped", false);
  r.skip_reason = doc.value("skip_reason", std::string());
  r.harness_error = doc.value("harness_error", std::string());
  if (const auto gpu = doc.find("gpu"); gpu != doc.end() && gpu->is_object()) {
    r.gpu.placement = gpu->value("placement", std::string());
    r.gpu.shared = gpu->value("shared", false);
    r.gpu.mps = gpu->value("mps", std::string());
  }
  r.judgement = judgement_from_json(doc.value("judgement", nlohmann::json::object()));
  r.history = history_from_json(doc.value("history", nlohmann::json::object()));
  return r;
}

void write_verdict(const RunRecord& record) {
  if (record.run_dir.empty()) return;
  write_file_atomic(
      (std::filesystem::path(record.run_dir) / "verdict.json").string(),
      verdict_json(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace ncclfi::harness
