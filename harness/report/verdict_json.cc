// verdict.json: one run's verdict with its judgement and full history, so reports can be re-rendered.
#include <cstdio>
#include <filesystem>

#include "reports.h"

namespace ncclfi::harness {

namespace {

nlohmann::json optional_bool(const std::optional<bool>& b) {
  return b ? nlohmann::json(*b) : nlohmann::json();
}

std::optional<bool> optional_bool(const nlohmann::json& doc, const char* key) {
  if (doc.contains(key) && doc[key].is_boolean()) return doc[key].get<bool>();
  return std::nullopt;
}

nlohmann::json diagnosis_json(const LogDiagnosis& d) {
  return {{"failure", d.failure},
          {"ranks", d.ranks},
          {"host", d.host},
          {"site", d.site},
          {"symptom", d.symptom},
          {"confidence", d.confidence},
          {"first_failure", d.first_failure},
          {"truth", {{"ranks", d.truth_ranks}, {"site", d.truth_site}, {"symptom", d.truth_symptom}}},
          {"agrees",
           {{"ranks", optional_bool(d.ranks_agree)},
            {"site", optional_bool(d.site_agrees)},
            {"symptom", optional_bool(d.symptom_agrees)}}}};
}

// Read back leniently (a verdict.json may be old or edited): a field of another type reads as absent.
LogDiagnosis diagnosis_from_json(const nlohmann::json& doc) {
  auto text = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  auto ranks = [](const nlohmann::json& j, const char* key) {
    std::vector<int> out;
    if (j.contains(key) && j[key].is_array())
      for (const auto& r : j[key])
        if (r.is_number_integer() && out.size() < 4096) out.push_back(r.get<int>());
    return out;
  };
  LogDiagnosis d;
  d.failure = doc.value("failure", false);
  d.ranks = ranks(doc, "ranks");
  d.host = text(doc, "host");
  d.site = text(doc, "site");
  d.symptom = text(doc, "symptom");
  d.confidence =
      doc.contains("confidence") && doc["confidence"].is_number() ? doc["confidence"].get<double>() : 0;
  d.first_failure = text(doc, "first_failure");
  const nlohmann::json truth =
      doc.contains("truth") && doc["truth"].is_object() ? doc["truth"] : nlohmann::json::object();
  d.truth_ranks = ranks(truth, "ranks");
  d.truth_site = text(truth, "site");
  d.truth_symptom = text(truth, "symptom");
  const nlohmann::json agrees =
      doc.contains("agrees") && doc["agrees"].is_object() ? doc["agrees"] : nlohmann::json::object();
  d.ranks_agree = optional_bool(agrees, "ranks");
  d.site_agrees = optional_bool(agrees, "site");
  d.symptom_agrees = optional_bool(agrees, "symptom");
  return d;
}

}  // namespace

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
  if (r.diagnosis) doc["diagnosis"] = diagnosis_json(*r.diagnosis);
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
  if (const auto d = doc.find("diagnosis"); d != doc.end() && d->is_object())
    r.diagnosis = diagnosis_from_json(*d);
  return r;
}

void write_verdict(const RunRecord& record) {
  if (record.run_dir.empty()) return;
  write_file_atomic(
      (std::filesystem::path(record.run_dir) / "verdict.json").string(),
      verdict_json(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace ncclfi::harness
