#include "score.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <utility>

#include "log_reader.h"
#include "ncclfi/bounded_input.h"
#include "reports.h"

namespace fs = std::filesystem;

namespace ncclfi::score {

Answer answer_of(const diagnose::Diagnosis& d) {
  Answer a;
  a.failure = d.failure;
  if (!d.failure) {
    a.symptom = d.slow ? d.symptom : kSymptomNone;
    // A slow job names a culprit only where its logs say which rank held it back.
    a.ranks.insert(d.culprit_ranks.begin(), d.culprit_ranks.end());
    a.host = d.culprit_host;
    a.site = d.site;
    if (!d.site.empty()) a.sites.insert(d.site);
    return a;
  }
  a.ranks.insert(d.culprit_ranks.begin(), d.culprit_ranks.end());
  a.host = d.culprit_host;
  a.site = d.tied_sites.empty() ? d.site : "undecided";
  if (d.tied_sites.empty()) {
    if (!d.site.empty()) a.sites.insert(d.site);
  } else {
    a.sites.insert(d.tied_sites.begin(), d.tied_sites.end());
  }
  a.symptom = d.symptom;
  a.confidence = d.confidence;
  return a;
}

ScoredCase score_case(const std::string& name, const std::string& kind, const Truth& truth,
                      const diagnose::Diagnosis& d) {
  ScoredCase c{name, kind, truth, answer_of(d), {}, {}, {}, {}, {}};
  const Answer& a = c.answer;
  if (!truth.fault) {
    // Nothing happened: right when the diagnosis blames no one.
    c.rank = a.ranks.empty();
    c.rank_and_site = c.rank;
  } else {
    // A slow job is answered too (no failure, but its culprit where its logs name one).
    const bool answered = a.failure || a.symptom == kSymptomSlow;
    if (truth.ranks_scored) c.rank = answered && a.ranks == truth.ranks;
    if (truth.several_hosts && truth.hosts.size() == 1) c.host = a.host == *truth.hosts.begin();
    if (!truth.site.empty()) {
      c.site = answered && !a.sites.empty() &&
               std::all_of(a.sites.begin(), a.sites.end(),
                           [&](const std::string& site) { return truth.sites.count(site) > 0; });
      c.rank_and_site = c.rank.value_or(true) && *c.site;
    }
  }
  c.symptom = a.symptom == truth.symptom;
  return c;
}

namespace {

void count(Accuracy& acc, const std::optional<bool>& right) {
  if (!right) return;
  ++acc.scored;
  if (*right) ++acc.right;
}

bool is_lab_ticket(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "key.json", ec) && fs::is_directory(dir / "runs", ec);
}

void search(const fs::path& dir, int depth, std::vector<CaseInput>& found) {
  std::error_code ec;
  if (diagnose::is_run_dir(dir.string())) {
    found.push_back({dir.string(), "run"});
    return;
  }
  if (is_lab_ticket(dir)) {
    found.push_back({dir.string(), "lab"});
    return;
  }
  if (fs::is_directory(dir / "latest", ec) && diagnose::is_run_dir((dir / "latest").string())) {
    found.push_back({(dir / "latest").string(), "run"});
    return;
  }
  if (depth == 0) return;
  std::vector<fs::path> children;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // A suite's directory holds its reports, not runs; symlinks are followed only as `latest`.
    if (it->is_directory(ec) && !it->is_symlink(ec) && it->path().filename() != "suites")
      children.push_back(it->path());
  }
  std::sort(children.begin(), children.end());
  for (const auto& child : children) search(child, depth - 1, found);
}

// "nic-failure variant 3 (keys/9b8d...)": a ticket's directory name is random, its lab is not.
std::string lab_case_name(const std::string& ticket_dir) {
  std::string text;
  if (!read_regular_file((fs::path(ticket_dir) / "key.json").string(), kMaxInputFileBytes, text).empty())
    return ticket_dir;
  const nlohmann::json key = nlohmann::json::parse(text, nullptr, false);
  if (!key.is_object() || !key.contains("lab") || !key["lab"].is_string()) return ticket_dir;
  const int variant =
      key.contains("variant") && key["variant"].is_number_integer() ? key["variant"].get<int>() : -1;
  return "lab " + key["lab"].get<std::string>() + " variant " + std::to_string(variant) + " (" +
         fs::path(ticket_dir).filename().string() + ")";
}

}  // namespace

ScoreSummary summarise(std::vector<ScoredCase> cases, std::vector<std::string> errors) {
  ScoreSummary s;
  s.errors = std::move(errors);
  for (const ScoredCase& c : cases) {
    count(s.rank, c.rank);
    count(s.host, c.host);
    count(s.site, c.site);
    count(s.symptom, c.symptom);
    count(s.rank_and_site, c.rank_and_site);
    const std::string truth = !c.truth.fault ? "none" : c.truth.site.empty() ? "(no site)" : c.truth.site;
    const std::string answer = !c.answer.failure && c.answer.site.empty() ? "none" : c.answer.site;
    ++s.confusion[truth][answer];
  }
  s.cases = std::move(cases);
  return s;
}

std::vector<CaseInput> find_cases(const std::vector<std::string>& paths, std::vector<std::string>& errors) {
  std::vector<CaseInput> found;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      errors.push_back(path + ": not a directory (a run directory, a lab ticket or a folder of them)");
      continue;
    }
    const size_t before = found.size();
    search(fs::path(path), 3, found);
    if (found.size() == before)
      errors.push_back(path + ": holds no run directory of ncclfi and no lab ticket (key.json beside runs/)");
  }
  return found;
}

namespace {

// What a lab's diagnosis reads: what the student was given, the job folders of `workspace` (the one its
// key names: rank logs, the launcher's srun.err, exit times), while it is there; else the logs of the
// jobs' runs the ticket keeps.
std::vector<std::string> lab_logs(const std::string& ticket, const std::string& workspace) {
  std::vector<std::string> logs;
  std::error_code ec;
  if (!workspace.empty() && fs::is_regular_file(fs::path(workspace) / "lab.json", ec)) {
    for (fs::directory_iterator it(workspace, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec)) logs.push_back(it->path().string());
  }
  if (logs.empty()) {
    for (fs::directory_iterator it(fs::path(ticket) / "runs", ec), end; !ec && it != end; it.increment(ec))
      if (diagnose::is_run_dir((it->path() / "latest").string()))
        logs.push_back((it->path() / "latest").string());
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

}  // namespace

ScoreSummary score_inputs(const std::vector<CaseInput>& inputs, std::vector<std::string> errors) {
  std::vector<ScoredCase> cases;
  for (const CaseInput& in : inputs) {
    try {
      const Truth truth = in.kind == "lab" ? truth_of_lab_ticket(in.path) : truth_of_run(in.path);
      const std::vector<std::string> logs =
          in.kind == "lab" ? lab_logs(in.path, truth.workspace) : std::vector{in.path};
      const diagnose::InputSet set = diagnose::collect_inputs(logs);
      cases.push_back(score_case(in.kind == "lab" ? lab_case_name(in.path) : in.path, in.kind, truth,
                                 diagnose::diagnose(set)));
    } catch (const std::exception& e) {
      errors.push_back(in.path + ": " + e.what());
    }
  }
  return summarise(std::move(cases), std::move(errors));
}

std::optional<harness::LogDiagnosis> diagnose_beside_truth(const harness::RunRecord& record) {
  if (record.skipped || record.run_dir.empty()) return std::nullopt;
  try {
    std::string text;
    const std::string plan_path = (fs::path(record.run_dir) / "plan.json").string();
    if (!read_regular_file(plan_path, kMaxInputFileBytes, text).empty()) return std::nullopt;
    const Truth truth = truth_of_verdict(parse_json_input(text), harness::verdict_json(record));
    const diagnose::Diagnosis d = diagnose::diagnose(diagnose::collect_inputs({record.run_dir}));
    const ScoredCase c = score_case(record.run_dir, "run", truth, d);
    harness::LogDiagnosis out;
    out.failure = c.answer.failure;
    out.ranks.assign(c.answer.ranks.begin(), c.answer.ranks.end());
    out.host = c.answer.host;
    out.site = c.answer.site;
    out.symptom = c.answer.symptom;
    out.confidence = c.answer.confidence;
    if (d.first_failure)
      out.first_failure =
          d.first_failure->file + ":" + std::to_string(d.first_failure->line) + ": " + d.first_failure->text;
    out.truth_ranks.assign(truth.ranks.begin(), truth.ranks.end());
    out.truth_site = truth.site;
    out.truth_symptom = truth.symptom;
    out.ranks_agree = c.rank;
    out.site_agrees = c.site;
    out.symptom_agrees = c.symptom;
    return out;
  } catch (const std::exception&) {
    return std::nullopt;  // the diagnosis is an aside: it never costs a run its verdict
  }
}

}  // namespace ncclfi::score
