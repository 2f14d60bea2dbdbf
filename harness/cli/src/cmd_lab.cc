// `ncclfi lab`: training labs (docs/labs.md). Students: list, start, hint, answer, causes. Instructors:
// debrief, key, gradebook. Exit status: answer 0 right, 1 wrong; 2 bad input; 3 a job could not run.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

#include "commands.h"
#include "gpu_placement.h"
#include "lab_catalogue.h"
#include "lab_grading.h"
#include "lab_workspace.h"
#include "ncclfi/bounded_input.h"
#include "rank_launcher.h"
#include "scenario.h"
#include "scenario_runner.h"
#include "suite_runner.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using namespace ncclfi::cli::lab;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string default_catalogue() {
  const Installation install = Installation::discover();
  const fs::path installed = fs::path(install.data_dir) / "scenarios" / "labs";
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed.string();
  return "scenarios/labs";
}

std::string default_key_dir() {
  if (const char* env = std::getenv("NCCLFI_LAB_KEY_DIR"); env && *env) return env;
  return "lab-keys";
}

std::string random_ticket() {
  std::random_device rd;
  std::ostringstream out;
  out << std::hex << std::setw(8) << std::setfill('0') << rd() << std::setw(8) << rd();
  return out.str();
}

nlohmann::json read_progress(const std::string& key) {
  std::string text;
  if (!read_regular_file((fs::path(key) / "progress.json").string(), 16 << 20, text).empty()) {
    return {{"hints_used", 0}, {"attempts", nlohmann::json::array()}};
  }
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return {{"hints_used", 0}, {"attempts", nlohmann::json::array()}};
  return doc;
}

void write_progress(const std::string& key, const nlohmann::json& progress) {
  write_json_atomically((fs::path(key) / "progress.json").string(), progress);
}

// The instructor's commands, and the student's answer/hint, run the same way: errors are bad input.
template <typename F>
void guarded(int& status, F body) {
  try {
    status = body();
  } catch (const std::exception& e) {
    std::cerr << "ncclfi lab: " << e.what() << "\n";
    status = kBadInput;
  }
}

int cmd_list(const std::string& catalogue, bool as_json) {
  const auto labs = load_lab_catalogue(catalogue);
  nlohmann::json out = nlohmann::json::array();
  for (const Lab& lab : labs) {
    if (as_json) {
      out.push_back({{"lab", lab.name},
                     {"title", lab.title},
                     {"topic", lab.topic},
                     {"difficulty", lab.difficulty},
                     {"needs", lab.needs},
                     {"variants", lab.variant_count()},
                     {"symptom", lab.symptom}});
      continue;
    }
    std::cout << lab.name << "  [" << lab.topic << ", difficulty " << lab.difficulty << "/3, needs "
              << (lab.needs == "cpu"       ? "CPU only"
                  : lab.needs == "one_gpu" ? "one GPU"
                                           : "two GPUs")
              << ", " << lab.variant_count() << " variants]\n    " << lab.symptom << "\n";
  }
  if (as_json) std::cout << out.dump(2) << "\n";
  return kAllPassed;
}

int cmd_start(const std::string& catalogue, const std::string& name, const std::string& student,
              std::optional<uint64_t> seed, std::string dir, const std::string& key_dir) {
  const auto labs = load_lab_catalogue(catalogue);
  const Lab* lab = find_lab(labs, name);
  if (!lab) {
    std::string names;
    for (const Lab& l : labs) names += " " + l.name;
    throw std::runtime_error("no lab named " + name + " (labs:" + names + ")");
  }
  const uint64_t s = seed.value_or(seed_for_student(student));
  const LabVariant variant = resolve_variant(*lab, pick_variant(*lab, s));
  if (dir.empty()) dir = "lab-" + lab->name + "-" + student;
  if (fs::exists(dir) && !fs::is_empty(dir)) throw std::runtime_error(dir + ": the workspace exists already");
  Ticket ticket{lab->name, student, random_ticket(), fs::absolute(key_dir).lexically_normal().string(),
                now_ns()};
  const std::string key = key_path(ticket);
  fs::create_directories(key);
  // The ranks inherit ncclfi's environment: in quiet mode the shim and the preload say nothing of the
  // plan, the faults or the injections (params.h); the truth stays in the key directory's events.
  ::setenv("NCCLFI_QUIET", "1", 1);
  ScenarioRunOptions options;
  options.out_root = (fs::path(key) / "runs").string();
  options.install = Installation::discover();
  std::vector<harness::RunRecord> runs;
  nlohmann::json run_dirs = nlohmann::json::array();
  std::cerr << "lab " << lab->name << ": running the job for " << student << " ...\n";
  for (const auto& job : variant.jobs) {
    nlohmann::json doc = job.at("scenario");
    doc["name"] = job.at("name");  // runs/<job>/<time>/ in the key directory
    const Scenario scenario = scenario_from_json(doc, lab->file);
    // GPU labs: the same placement as `ncclfi run` (several ranks share a GPU when there are too few).
    options.gpu = place_on_gpus(scenario, count_visible_gpus(), GpuSharing::kAuto);
    if (const std::string why = !options.gpu.skip.empty() ? options.gpu.skip : unmet_requirement(scenario);
        !why.empty()) {
      throw std::runtime_error("lab " + lab->name + " cannot run on this host: " + why);
    }
    runs.push_back(run_scenario(scenario, options));
    if (!runs.back().harness_error.empty()) {
      throw std::runtime_error("the job could not run: " + runs.back().harness_error);
    }
    run_dirs.push_back(fs::absolute(runs.back().run_dir).string());
  }
  write_workspace(dir, *lab, variant, runs, ticket);
  write_json_atomically((fs::path(key) / "key.json").string(),
                        {{"lab", lab->name},
                         {"title", lab->title},
                         {"student", student},
                         {"seed", s},
                         {"variant", variant.index},
                         {"values", variant.values},
                         {"answer", variant.answer},
                         {"hints", variant.hints},
                         {"evidence", variant.evidence},
                         {"explanation", variant.explanation},
                         {"workspace", fs::absolute(dir).lexically_normal().string()},
                         {"runs", run_dirs},
                         {"started_ns", ticket.started_ns}});
  write_progress(key, {{"hints_used", 0}, {"attempts", nlohmann::json::array()}});
  std::cout << lab->title << "\n" << lab->symptom << "\nRead BRIEFING.md in the workspace.\n";
  std::cout << "workspace: " << dir << "\n";
  return kAllPassed;
}

int cmd_hint(const std::string& workspace, const std::string& key_dir) {
  const Ticket ticket = read_ticket(workspace);
  const std::string key = key_path(ticket, key_dir);
  const auto doc = read_key(key);
  auto progress = read_progress(key);
  const auto& hints = doc.at("hints");
  const int used = progress.value("hints_used", 0);
  if (used >= static_cast<int>(hints.size())) {
    std::cout << "No more hints (" << hints.size() << " used). Hint " << hints.size()
              << " again: " << hints.back().get<std::string>() << "\n";
    return kAllPassed;
  }
  progress["hints_used"] = used + 1;
  write_progress(key, progress);
  std::cout << "hint " << used + 1 << " of " << hints.size() << " (-" << kHintPenalty
            << " points): " << hints.at(static_cast<size_t>(used)).get<std::string>() << "\n";
  return kAllPassed;
}

int cmd_answer(const std::string& workspace, const std::vector<int>& ranks, const std::string& cause,
               const std::vector<std::string>& details, const std::string& key_dir) {
  if (!is_known_cause(cause)) {
    std::string names;
    for (const auto& c : cause_vocabulary()) names += " " + c.name;
    throw std::runtime_error("unknown cause '" + cause + "' (causes:" + names + ")");
  }
  StudentAnswer answer;
  answer.ranks = std::set<int>(ranks.begin(), ranks.end());
  answer.cause = cause;
  for (const auto& d : details) {
    const auto eq = d.find('=');
    if (eq == std::string::npos) throw std::runtime_error("--detail " + d + ": expected KEY=VALUE");
    answer.details[d.substr(0, eq)] = d.substr(eq + 1);
  }
  const Ticket ticket = read_ticket(workspace);
  const std::string key = key_path(ticket, key_dir);
  const auto doc = read_key(key);
  auto progress = read_progress(key);
  const Grade g = grade(answer_key_from_json(doc.at("answer")), answer, progress.value("hints_used", 0));
  progress["attempts"].push_back({{"ts_ns", now_ns()},
                                  {"ranks", answer.ranks},
                                  {"cause", answer.cause},
                                  {"details", answer.details},
                                  {"hints_used", progress.value("hints_used", 0)},
                                  {"grade", to_json(g)}});
  write_progress(key, progress);
  std::cout << (g.right ? "RIGHT" : "WRONG") << ": score " << g.score << "/100 (attempt "
            << progress["attempts"].size() << ", hints used " << progress.value("hints_used", 0) << ")\n";
  for (const auto& f : g.feedback) std::cout << "  " << f << "\n";
  return g.right ? kAllPassed : kSomeFailed;
}

int cmd_causes(bool as_json) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : cause_vocabulary()) {
    if (as_json) {
      out.push_back({{"cause", c.name}, {"meaning", c.meaning}});
    } else {
      std::cout << std::left << std::setw(16) << c.name << c.meaning << "\n";
    }
  }
  if (as_json) std::cout << out.dump(2) << "\n";
  return kAllPassed;
}

// The run's history from its verdict.json: injections, detections and exits on one timeline.
void print_timeline(const std::string& run_dir) {
  std::string text;
  if (!read_regular_file((fs::path(run_dir) / "verdict.json").string(), 256 << 20, text).empty()) return;
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("history")) return;
  const auto& h = doc["history"];
  const int64_t start = h.value("start_ns", int64_t{0});
  std::vector<std::pair<int64_t, std::string>> lines;
  std::map<std::string, int> injections;
  for (const auto& e : h.value("events", nlohmann::json::array())) {
    if (e.value("event", "") != "inject") continue;
    const auto& f = e.value("fields", nlohmann::json::object());
    const std::string id = f.value("fault_id", "?");
    if (injections[id]++ > 0) continue;
    lines.emplace_back(e.value("ts_ns", int64_t{0}), "injection: " + f.value("layer", "") + " " +
                                                         f.value("kind", "") + " on rank " +
                                                         std::to_string(e.value("rank", -1)) + " at " +
                                                         f.value("point", "") + " (fault " + id + ")");
  }
  for (const auto& d : h.value("detections", nlohmann::json::array())) {
    lines.emplace_back(d.value("ts_ns", int64_t{0}), "detection: " + d.value("mechanism", "") + " on rank " +
                                                         std::to_string(d.value("rank", -1)) + ": " +
                                                         d.value("evidence", "").substr(0, 120));
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& [ts, line] : lines) {
    std::cout << "  +" << std::fixed << std::setprecision(3) << static_cast<double>(ts - start) / 1e9
              << " s  " << line << "\n";
  }
  for (const auto& [id, n] : injections) std::cout << "  fault " << id << " fired " << n << " time(s)\n";
}

int cmd_debrief(const std::string& workspace, const std::string& key_dir) {
  const Ticket ticket = read_ticket(workspace);
  const auto doc = read_key(key_path(ticket, key_dir));
  const auto& answer = doc.at("answer");
  std::cout << "# " << doc.value("title", "") << " (" << doc.value("lab", "") << ", variant "
            << doc.value("variant", 0) << ": " << doc.at("values").dump() << ")\n\nThe truth: cause "
            << answer.value("cause", "");
  if (answer.contains("ranks") && !answer["ranks"].is_null())
    std::cout << ", rank(s) " << answer["ranks"].dump();
  if (answer.contains("details") && !answer["details"].empty()) std::cout << ", " << answer["details"].dump();
  std::cout << "\n\n" << doc.value("explanation", "") << "\n\nTimeline:\n";
  for (const auto& run : doc.value("runs", nlohmann::json::array())) {
    std::cout << " " << fs::path(run.get<std::string>()).parent_path().filename().string() << ":\n";
    print_timeline(run.get<std::string>());
  }
  std::cout << "\nThe evidence in the workspace:\n";
  for (const auto& e : doc.value("evidence", nlohmann::json::array()))
    std::cout << "  - " << e.get<std::string>() << "\n";
  return kAllPassed;
}

int cmd_key(const std::string& workspace, const std::string& key_dir) {
  const Ticket ticket = read_ticket(workspace);
  const std::string key = key_path(ticket, key_dir);
  auto doc = read_key(key);
  doc["progress"] = read_progress(key);
  std::cout << doc.dump(2) << "\n";
  return kAllPassed;
}

nlohmann::json gradebook_row(const std::string& workspace, const std::string& key_dir) {
  const Ticket ticket = read_ticket(workspace);
  const std::string key = key_path(ticket, key_dir);
  const auto doc = read_key(key);
  const auto progress = read_progress(key);
  const auto& attempts = progress.at("attempts");
  int score = 0;
  bool right = false;
  nlohmann::json time_to_answer = nullptr;
  for (const auto& a : attempts) {
    const auto& g = a.at("grade");
    if (g.value("right", false)) {
      right = true;
      score = g.value("score", 0);
      time_to_answer =
          static_cast<double>(a.value("ts_ns", int64_t{0}) - doc.value("started_ns", int64_t{0})) / 1e9;
      break;
    }
    score = std::max(score, g.value("score", 0));
  }
  return {{"student", doc.value("student", "")},
          {"lab", doc.value("lab", "")},
          {"variant", doc.value("variant", 0)},
          {"attempts", attempts.size()},
          {"hints", progress.value("hints_used", 0)},
          {"score", score},
          {"right", right},
          {"time_to_answer_s", time_to_answer},
          {"workspace", workspace}};
}

int cmd_gradebook(const std::vector<std::string>& workspaces, const std::string& key_dir, bool as_json) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& ws : workspaces) rows.push_back(gradebook_row(ws, key_dir));
  if (as_json) {
    std::cout << rows.dump(2) << "\n";
    return kAllPassed;
  }
  std::cout << "student,lab,variant,attempts,hints,score,right,time_to_answer_s\n";
  for (const auto& r : rows) {
    auto csv = [](std::string s) {
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string out = "\"";
      for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
      return out + "\"";
    };
    std::cout << csv(r["student"]) << "," << csv(r["lab"]) << "," << r["variant"] << "," << r["attempts"]
              << "," << r["hints"] << "," << r["score"] << "," << (r["right"].get<bool>() ? "yes" : "no")
              << ",";
    if (!r["time_to_answer_s"].is_null())
      std::cout << std::fixed << std::setprecision(1) << r["time_to_answer_s"].get<double>();
    std::cout << "\n";
  }
  return kAllPassed;
}

}  // namespace

void add_lab_command(CLI::App& app, int& status) {
  auto* lab = app.add_subcommand("lab", "Training labs: a hidden fault, real symptoms, a graded diagnosis.");
  lab->require_subcommand(1);
  lab->footer(
      "Students: list, start, hint, answer, causes. Instructors: debrief, key, gradebook (docs/labs.md).\n"
      "Examples:\n"
      "  ncclfi lab list\n"
      "  ncclfi lab start nic-failure --student ada --key-dir /srv/lab-keys\n"
      "  ncclfi lab answer lab-nic-failure-ada --rank 2 --cause nic\n"
      "  ncclfi lab gradebook --key-dir /srv/lab-keys lab-*");
  auto catalogue = std::make_shared<std::string>(default_catalogue());
  auto as_json = std::make_shared<bool>(false);

  auto* list = lab->add_subcommand("list", "Every lab: topic, difficulty, what it needs, the symptom.");
  list->add_option("--catalogue", *catalogue, "the lab directory")->capture_default_str();
  list->add_flag("--json", *as_json, "one JSON document on stdout");
  list->callback([=, &status] { guarded(status, [&] { return cmd_list(*catalogue, *as_json); }); });

  struct StartArgs {
    std::string lab, student, dir, key_dir = default_key_dir();
    std::optional<uint64_t> seed;
  };
  auto start_args = std::make_shared<StartArgs>();
  auto* start =
      lab->add_subcommand("start", "Run a lab's job with a hidden fault and leave a student workspace.");
  start->add_option("lab", start_args->lab, "the lab (ncclfi lab list)")->required();
  start->add_option("--student", start_args->student, "the student's name")->required();
  start->add_option("--seed", start_args->seed, "picks the variant (default: from the student's name)");
  start->add_option("--dir", start_args->dir, "the workspace (default lab-LAB-STUDENT)");
  start->add_option("--key-dir", start_args->key_dir,
                    "where the truth goes (default $NCCLFI_LAB_KEY_DIR or lab-keys)");
  start->add_option("--catalogue", *catalogue, "the lab directory")->capture_default_str();
  start->footer("The last line printed is `workspace: PATH`.");
  start->callback([=, &status] {
    try {
      status = cmd_start(*catalogue, start_args->lab, start_args->student, start_args->seed, start_args->dir,
                         start_args->key_dir);
    } catch (const ScenarioError& e) {
      std::cerr << "ncclfi lab: " << e.what() << "\n";
      status = kBadInput;
    } catch (const std::exception& e) {
      std::cerr << "ncclfi lab: " << e.what() << "\n";
      status = std::string(e.what()).rfind("the job could not run", 0) == 0 ? kHarnessError : kBadInput;
    }
  });

  auto ws = std::make_shared<std::string>();
  auto key_dir = std::make_shared<std::string>();
  auto* hint = lab->add_subcommand("hint", "The next hint (each one used costs points).");
  hint->add_option("workspace", *ws, "the workspace")->required();
  hint->add_option("--key-dir", *key_dir, "the key directory (default: the one the workspace names)");
  hint->callback([=, &status] { guarded(status, [&] { return cmd_hint(*ws, *key_dir); }); });

  auto ranks = std::make_shared<std::vector<int>>();
  auto cause = std::make_shared<std::string>();
  auto details = std::make_shared<std::vector<std::string>>();
  auto* answer = lab->add_subcommand("answer", "Grade a diagnosis: exit 0 right, 1 wrong.");
  answer->add_option("workspace", *ws, "the workspace")->required();
  answer->add_option("--rank", *ranks, "a rank where the fault is (repeat for two)")->take_all();
  answer->add_option("--cause", *cause, "the cause (ncclfi lab causes)")->required();
  answer->add_option("--detail", *details, "KEY=VALUE the lab asks for (e.g. code=ncclRemoteError)")
      ->take_all();
  answer->add_option("--key-dir", *key_dir, "the key directory (default: the one the workspace names)");
  answer->callback([=, &status] {
    try {
      status = cmd_answer(*ws, *ranks, *cause, *details, *key_dir);
    } catch (const std::exception& e) {
      std::cerr << "ncclfi lab: " << e.what() << "\n";
      status = kBadInput;
    }
  });

  auto* causes = lab->add_subcommand("causes", "The words for --cause.");
  causes->add_flag("--json", *as_json, "one JSON document on stdout");
  causes->callback([=, &status] { status = cmd_causes(*as_json); });

  auto* debrief =
      lab->add_subcommand("debrief", "The truth, the timeline with the injection, and the evidence.");
  debrief->add_option("workspace", *ws, "the workspace")->required();
  debrief->add_option("--key-dir", *key_dir, "the key directory")->required();
  debrief->callback([=, &status] { guarded(status, [&] { return cmd_debrief(*ws, *key_dir); }); });

  auto* key = lab->add_subcommand("key", "Instructor: the truth of a workspace as JSON.");
  key->add_option("workspace", *ws, "the workspace")->required();
  key->add_option("--key-dir", *key_dir, "the key directory")->required();
  key->callback([=, &status] { guarded(status, [&] { return cmd_key(*ws, *key_dir); }); });

  auto workspaces = std::make_shared<std::vector<std::string>>();
  auto* book = lab->add_subcommand("gradebook", "Instructor: one CSV (or JSON) line per workspace.");
  book->add_option("workspaces", *workspaces, "the workspaces")->required();
  book->add_option("--key-dir", *key_dir, "the key directory")->required();
  book->add_flag("--json", *as_json, "JSON instead of CSV");
  book->callback(
      [=, &status] { guarded(status, [&] { return cmd_gradebook(*workspaces, *key_dir, *as_json); }); });
}

}  // namespace ncclfi::cli
