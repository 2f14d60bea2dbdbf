// `ncclfi lab`: training labs (docs/labs.md). Students: list, start, hint, answer, causes. Instructors
// (docs/labs-instructor.md): draw, debrief, key, gradebook. Exit status: answer 0 right, 1 wrong;
// gradebook 1 when some student's progress did not verify; 2 bad input (and a progress hint or answer
// cannot trust); 3 a job could not run.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

#include "cmd_lab.h"

#include "commands.h"
#include "gpu_placement.h"
#include "host_env.h"
#include "lab_artefacts.h"
#include "lab_catalogue.h"
#include "lab_class.h"
#include "lab_grading.h"
#include "lab_key_dir.h"
#include "lab_progress.h"
#include "lab_roster.h"
#include "lab_service.h"
#include "lab_ticket.h"
#include "lab_workspace.h"
#include "launch_context.h"
#include "launcher_spec.h"
#include "ncclfi/bounded_input.h"
#include "ncclfi/event_log.h"
#include "scenario.h"
#include "scenario_runner.h"
#include "suite_runner.h"
#include "visible_gpus.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;
using namespace ncclfi::cli::lab;

namespace {

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

// Ranks 0..k-1 run as the first node, the next k as the second, ... (k: the lab's ranks_per_node).
void name_lab_nodes(nlohmann::json& jobs, uint64_t draw, int ranks_per_node) {
  for (auto& job : jobs) {
    auto& scenario = job.at("scenario");
    if (!scenario.contains("launcher") || scenario["launcher"].value("kind", "") != "local") continue;
    if (scenario["launcher"].contains("hostnames")) continue;
    const int ranks = scenario.at("workload").value("ranks", 1);
    const auto nodes = lab_node_names((ranks + ranks_per_node - 1) / ranks_per_node, draw);
    std::vector<std::string> hostnames;
    for (int r = 0; r < ranks; ++r) hostnames.push_back(nodes[static_cast<size_t>(r / ranks_per_node)]);
    scenario["launcher"]["hostnames"] = hostnames;
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

// The variant an instructor's choice gives (`--variant`, or `--seed` and `--cause`), else a secret
// random seed's: the seed is kept in the key directory only, so no student can learn or redo the draw.
struct Draw {
  uint64_t seed = 0;
  size_t variant = 0;
};
Draw draw_for(const Lab& lab, std::optional<uint64_t> seed, std::optional<size_t> variant_index,
              const std::string& cause) {
  Draw d;
  d.seed = seed ? *seed : random_seed();
  if (variant_index) {
    if (*variant_index >= lab.variant_count())
      throw std::runtime_error("--variant " + std::to_string(*variant_index) + ": " + lab.name +
                               " has variants 0 to " + std::to_string(lab.variant_count() - 1));
    d.variant = *variant_index;
  } else {
    d.variant = draw_variant(lab, d.seed, cause.empty() ? std::nullopt : std::optional<std::string>(cause));
  }
  return d;
}

const Lab& lab_named(const std::vector<Lab>& labs, const std::string& name) {
  const Lab* lab = find_lab(labs, name);
  if (!lab) {
    std::string names;
    for (const Lab& l : labs) names += " " + l.name;
    throw std::runtime_error("no lab named " + name + " (labs:" + names + ")");
  }
  return *lab;
}

// `lab draw`: what a seed draws, without running anything (instructors, and the catalogue's tests).
int cmd_draw(const std::string& catalogue, const std::string& name, std::optional<uint64_t> seed,
             std::optional<size_t> variant_index, const std::string& cause) {
  const auto labs = load_lab_catalogue(catalogue);
  const Lab& lab = lab_named(labs, name);
  const Draw d = draw_for(lab, seed, variant_index, cause);
  const LabVariant variant = resolve_variant(lab, d.variant);
  std::cout << nlohmann::json({{"lab", lab.name},
                               {"seed", d.seed},
                               {"variant", variant.index},
                               {"cause_id", variant.cause_id},
                               {"site", variant.site},
                               {"values", variant.values},
                               {"answer", variant.answer}})
                   .dump(2)
            << "\n";
  return kAllPassed;
}

// Runs one job of a lab. A workspace whose fault never fired would grade a student against a failure the
// evidence does not show (a rank drawn to die at start may only be signalled after a short job has
// ended), so a job with faults armed is run again, up to three times in all, until one of them fires.
harness::RunRecord run_job_until_its_fault_fires(const Scenario& scenario,
                                                 const ScenarioRunOptions& options) {
  constexpr int kTries = 3;
  for (int attempt = 1;; ++attempt) {
    harness::RunRecord run = run_scenario(scenario, options);
    if (!run.harness_error.empty()) throw LabJobError("the job could not run: " + run.harness_error);
    if (run.history.armed_faults.empty() || run.judgement.first_injection_ns) return run;
    if (attempt == kTries) {
      throw LabJobError("the job's fault never fired in " + std::to_string(kTries) +
                        " runs (the last: " + run.run_dir + ")");
    }
    std::cerr << "lab: the job's fault never fired (" << run.run_dir << "): running it again\n";
  }
}

}  // namespace

int lab_start(const LabStart& start) {
  const std::string& student = start.student;
  const auto labs = load_lab_catalogue(start.catalogue);
  const Lab* lab = &lab_named(labs, start.lab);
  const Draw d = draw_for(*lab, start.seed, start.variant, start.cause);
  LabVariant variant = resolve_variant(*lab, d.variant);
  Ticket ticket{lab->name,        student,
                random_ticket(),  fs::absolute(start.key_dir).lexically_normal().string(),
                Clock::wall_ns(), start.server};
  // Under `lab serve` the workspace is made in the ticket's private directory and sent to the student.
  std::string dir = start.server.empty() ? start.dir : lab_service_workspace(key_path(ticket));
  if (dir.empty()) dir = "lab-" + lab->name + "-" + student;
  if (fs::exists(dir) && !fs::is_empty(dir)) throw std::runtime_error(dir + ": the workspace exists already");
  // The key directory and each ticket's are private (0700), and the secret that signs progress is made
  // once per key directory (lab_key_dir.h).
  // The ranks run as the lab's nodes, named as a cluster names them (their own host name: lab_artefacts.h),
  // the same nodes for every job of the lab; the names are drawn per workspace.
  name_lab_nodes(variant.jobs, std::hash<std::string>{}(ticket.ticket_id), lab->ranks_per_node);
  make_private_directory(ticket.key_dir);
  const std::string secret = make_or_read_secret(ticket.key_dir);
  const std::string key = key_path(ticket);
  make_private_directory(key);
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
    // Under MPS a client killed in the middle of its kernels takes its peers' GPU work down with it: they
    // report "an illegal memory access was encountered", which ranks on GPUs of their own never do. A
    // job whose fault kills a rank runs its shared GPU time-sliced, so the survivors print what a dead
    // node's peers print.
    options.mps = std::none_of(scenario.plan.faults.begin(), scenario.plan.faults.end(), [](const Fault& f) {
      return (f.layer == Layer::kProc && f.kind == "kill") || f.kind == "crash";
    });
    if (const std::string why = !options.gpu.skip.empty() ? options.gpu.skip : unmet_requirement(scenario);
        !why.empty()) {
      throw std::runtime_error("lab " + lab->name + " cannot run on this host: " + why);
    }
    runs.push_back(run_job_until_its_fault_fires(scenario, options));
    run_dirs.push_back(fs::absolute(runs.back().run_dir).string());
  }
  write_workspace(dir, *lab, variant, runs, ticket, start.shown_dir.empty() ? dir : start.shown_dir);
  write_json_atomically((fs::path(key) / "key.json").string(),
                        {{"lab", lab->name},
                         {"title", lab->title},
                         {"student", student},
                         {"seed", d.seed},
                         {"variant", variant.index},
                         {"cause_id", variant.cause_id},
                         {"site", variant.site},
                         {"values", variant.values},
                         {"answer", variant.answer},
                         {"hints", variant.hints},
                         {"evidence", variant.evidence},
                         {"explanation", variant.explanation},
                         {"workspace", fs::absolute(dir).lexically_normal().string()},
                         {"runs", run_dirs},
                         {"started_ns", ticket.started_ns}});
  const ProgressOwner owner{ticket.lab, ticket.student, ticket.ticket_id};
  write_progress(key, owner, new_progress(owner), secret);
  std::cout << lab->title << "\n" << lab->symptom << "\nRead BRIEFING.md in the workspace.\n";
  // The student's own ncclfi prints the line of a workspace that came from `lab serve`.
  if (start.server.empty()) std::cout << "workspace: " << dir << "\n";
  return kAllPassed;
}

namespace {

// The class's settings (lab_class.h); an answer or hint after its deadline is refused, recording nothing.
ClassSettings open_class(const OpenTicket& t) {
  const ClassSettings settings = read_class_settings(fs::path(t.key_path).parent_path().string());
  if (const std::string why = past_deadline(settings, Clock::wall_ns()); !why.empty())
    throw std::runtime_error(why);
  return settings;
}

}  // namespace

int lab_hint(const std::string& workspace, const std::string& key_dir) {
  const OpenTicket t = open_ticket(workspace, key_dir, WorkspaceCheck::kSameWorkspace);
  open_class(t);
  const ProgressLock lock(t.key_path);
  auto progress = read_verified_progress(t.key_path, t.owner, t.secret);
  const auto& hints = t.key.at("hints");
  const int used = progress.value("hints_used", 0);
  if (used >= static_cast<int>(hints.size())) {
    std::cout << "No more hints (" << hints.size() << " used). Hint " << hints.size()
              << " again: " << hints.back().get<std::string>() << "\n";
    return kAllPassed;
  }
  progress["hints_used"] = used + 1;
  write_progress(t.key_path, t.owner, progress, t.secret);
  std::cout << "hint " << used + 1 << " of " << hints.size() << " (-" << kHintPenalty
            << " points): " << hints.at(static_cast<size_t>(used)).get<std::string>() << "\n";
  return kAllPassed;
}

int lab_answer(const std::string& workspace, const std::vector<int>& ranks, const std::string& cause,
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
    if (eq > kMaxDetailBytes || d.size() - eq - 1 > kMaxDetailBytes)
      throw std::runtime_error("--detail: a name or value longer than " + std::to_string(kMaxDetailBytes) +
                               " bytes");
    answer.details[d.substr(0, eq)] = d.substr(eq + 1);
  }
  // Every attempt is kept in the progress file: what one may hold is bounded (lab_progress.h).
  if (answer.ranks.size() > kMaxAnswerRanks || answer.details.size() > kMaxAnswerDetails) {
    throw std::runtime_error("at most " + std::to_string(kMaxAnswerRanks) + " ranks and " +
                             std::to_string(kMaxAnswerDetails) + " details in one answer");
  }
  const OpenTicket t = open_ticket(workspace, key_dir, WorkspaceCheck::kSameWorkspace);
  const ClassSettings settings = open_class(t);
  const ProgressLock lock(t.key_path);
  auto progress = read_verified_progress(t.key_path, t.owner, t.secret);
  if (progress["attempts"].size() >= settings.attempts) {
    throw std::runtime_error("no attempts left: " + std::to_string(settings.attempts) +
                             " answers are the most this class allows (ask your instructor)");
  }
  const int wrong_before = wrong_attempts(progress["attempts"]);
  const Grade g =
      grade(answer_key_from_json(t.key.at("answer")), answer,
            AttemptContext{progress.value("hints_used", 0), wrong_before, settings.wrong_penalty});
  progress["attempts"].push_back({{"ts_ns", Clock::wall_ns()},
                                  {"ranks", answer.ranks},
                                  {"cause", answer.cause},
                                  {"details", answer.details},
                                  {"hints_used", progress.value("hints_used", 0)},
                                  {"grade", to_json(g)}});
  write_progress(t.key_path, t.owner, progress, t.secret);
  std::cout << (g.right ? "RIGHT" : "WRONG") << ": score " << g.score << "/100 (attempt "
            << progress["attempts"].size() << ", hints used " << progress.value("hints_used", 0) << ")\n";
  if (g.wrong_attempt_penalty > 0)
    std::cout << "  -" << g.wrong_attempt_penalty << " points for " << wrong_before
              << " wrong attempt(s) before this one\n";
  for (const auto& f : g.feedback) std::cout << "  " << f << "\n";
  const AttemptSummary summary = summarize_attempts(progress["attempts"]);
  std::cout << "  first attempt " << summary.first_score << "/100, best " << summary.best_score << "/100, "
            << settings.attempts - progress["attempts"].size() << " attempt(s) left\n";
  return g.right ? kAllPassed : kSomeFailed;
}

namespace {

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

}  // namespace

int start_lab_for_student(const LabArgs& args, const std::string& student, const std::string& dir) {
  // Each student draws from a secret seed of their own; an instructor's --cause or --variant holds for all.
  LabStart start;
  start.catalogue = args.catalogue;
  start.lab = args.lab;
  start.student = student;
  start.variant = args.variant;
  start.cause = args.lab_cause;
  start.dir = dir;
  start.key_dir = args.start_key_dir;
  return lab_start(start);
}

std::string default_lab_catalogue() {
  const Installation install = Installation::discover();
  const fs::path installed = fs::path(install.data_dir) / "scenarios" / "labs";
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed.string();
  return "scenarios/labs";
}

namespace {

// A student's name becomes part of paths (the workspace lab-LAB-NAME, the key directory's entries): a
// name with '/' or "..", or one that starts with '-' or '.', would reach outside them or read as an option.
// (lab_roster.h: the same check for every name of a roster.)
const CLI::Validator kStudentName(student_name_problem, "NAME");

void add_start_command(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* start =
      lab.add_subcommand("start", "Run a lab's job with a hidden fault and leave a student workspace.");
  start->add_option("lab", args->lab, "the lab (ncclfi lab list)")->required();
  auto* student =
      start->add_option("--student", args->student, "the student's name (or --roster)")->check(kStudentName);
  start
      ->add_option("--roster", args->roster,
                   "a whole class: one student a line (or CSV with a student column); each gets DIR/NAME")
      ->excludes(student);
  start->add_option(
      "--class", args->class_file,
      "the class's settings (JSON or YAML: attempts, deadline, wrong_penalty), copied into the key "
      "directory");
  start->add_option("--seed", args->seed,
                    "for instructors: draws the variant (default: a secret random seed, kept in the key "
                    "directory)");
  start->add_option("--cause", args->lab_cause,
                    "for instructors: draw only this cause's variants (the ids: docs/labs-instructor.md)");
  start->add_option("--variant", args->variant,
                    "for instructors: run this variant (0 to the lab's count - 1) instead of the seed's");
  start->add_option("--dir", args->dir, "the workspace (default lab-LAB-STUDENT)");
  start->add_option("--key-dir", args->start_key_dir,
                    "where the truth goes (default $NCCLFI_LAB_KEY_DIR or lab-keys)");
  start->add_option("--catalogue", args->catalogue, "the lab directory")->capture_default_str();
  start->add_option("--server", args->server,
                    "the class's lab service (`ncclfi lab serve`; default $NCCLFI_LAB_SERVER, else " +
                        std::string(kDefaultLabSocket) +
                        " when it is there and no instructor option is given)");
  start->footer("The last line printed is `workspace: PATH`.");
  describe_values(*start, {{"lab", ValueKind::kLab, "LAB"},
                           {"--student", ValueKind::kText, "NAME"},
                           {"--roster", ValueKind::kFile, "FILE"},
                           {"--class", ValueKind::kFile, "FILE"},
                           {"--seed", ValueKind::kText, "N"},
                           {"--cause", ValueKind::kText, "ID"},
                           {"--variant", ValueKind::kText, "N"},
                           {"--dir", ValueKind::kDirectory, "DIR"},
                           {"--key-dir", ValueKind::kDirectory, "DIR"},
                           {"--catalogue", ValueKind::kDirectory, "DIR"},
                           {"--server", ValueKind::kFile, "SOCKET"}});
  start->callback([args, start, &status] {
    try {
      // What only a local start takes: the student's name, the draw, the key directory, a class.
      std::string local_only;
      for (const char* name :
           {"--student", "--roster", "--class", "--seed", "--cause", "--variant", "--key-dir"})
        if (start->count(name) > 0) local_only = name;
      if (const std::string server = lab_server_socket(args->server, local_only.empty()); !server.empty()) {
        if (!local_only.empty())
          throw std::runtime_error(local_only +
                                   " is for a start without a lab service (the service names the "
                                   "student by their account and draws in secret)");
        status = start_from_service(*args, server);
        return;
      }
      if (!args->class_file.empty()) install_class_file(args->start_key_dir, args->class_file);
      if (!args->roster.empty()) {
        status = start_roster(*args);
        return;
      }
      if (args->student.empty())
        throw std::runtime_error("start needs --student NAME or --roster FILE, or a lab service (--server)");
      LabStart local;
      local.catalogue = args->catalogue;
      local.lab = args->lab;
      local.student = args->student;
      local.seed = args->seed;
      local.variant = args->variant;
      local.cause = args->lab_cause;
      local.dir = args->dir;
      local.key_dir = args->start_key_dir;
      status = lab_start(local);
    } catch (const LabJobError& e) {
      std::cerr << "ncclfi lab: " << e.what() << "\n";
      status = kHarnessError;
    } catch (const std::exception& e) {
      std::cerr << "ncclfi lab: " << e.what() << "\n";
      status = kBadInput;
    }
  });
}

// Instructors: what a seed draws (the cause, its values and the answer), without running the jobs.
void add_draw_command(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* draw = lab.add_subcommand("draw", "Instructor: the variant a seed draws, as JSON (runs nothing).");
  draw->add_option("lab", args->lab, "the lab (ncclfi lab list)")->required();
  draw->add_option("--seed", args->seed, "the seed (default: a random one, printed)");
  draw->add_option("--cause", args->lab_cause, "draw only this cause's variants");
  draw->add_option("--variant", args->variant, "this variant instead of the seed's");
  draw->add_option("--catalogue", args->catalogue, "the lab directory")->capture_default_str();
  describe_values(*draw, {{"lab", ValueKind::kLab, "LAB"},
                          {"--seed", ValueKind::kText, "N"},
                          {"--cause", ValueKind::kText, "ID"},
                          {"--variant", ValueKind::kText, "N"},
                          {"--catalogue", ValueKind::kDirectory, "DIR"}});
  draw->callback([args, &status] {
    guarded(status,
            [&] { return cmd_draw(args->catalogue, args->lab, args->seed, args->variant, args->lab_cause); });
  });
}

void add_answer_command(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* answer = lab.add_subcommand("answer", "Grade a diagnosis: exit 0 right, 1 wrong.");
  answer->add_option("workspace", args->workspace, "the workspace")->required();
  answer->add_option("--rank", args->ranks, "a rank where the fault is (repeat for two)")->take_all();
  answer->add_option("--cause", args->cause, "the cause (ncclfi lab causes)")->required();
  answer->add_option("--detail", args->details, "KEY=VALUE the lab asks for (e.g. code=ncclRemoteError)")
      ->take_all();
  answer->add_option("--key-dir", args->key_dir, "the key directory (default: the one the workspace names)");
  answer->add_option("--server", args->server, "the lab service (default: the one the workspace came from)");
  describe_values(*answer, {{"workspace", ValueKind::kDirectory, "WORKSPACE"},
                            {"--rank", ValueKind::kText, "R"},
                            {"--cause", ValueKind::kCause, "CAUSE"},
                            {"--detail", ValueKind::kText, "KEY=VALUE"},
                            {"--key-dir", ValueKind::kDirectory, "DIR"},
                            {"--server", ValueKind::kFile, "SOCKET"}});
  answer->callback([args, &status] {
    try {
      const std::string server = service_of_workspace(*args);
      status = server.empty()
                   ? lab_answer(args->workspace, args->ranks, args->cause, args->details, args->key_dir)
                   : ask_service_about_ticket(*args, server, "answer");
    } catch (const std::exception& e) {
      std::cerr << "ncclfi lab: " << e.what() << "\n";
      status = kBadInput;
    }
  });
}

// list, start, hint, answer, causes.
void add_student_commands(CLI::App& lab, const std::shared_ptr<LabArgs>& args, int& status) {
  auto* list = lab.add_subcommand("list", "Every lab: topic, difficulty, what it needs, the symptom.");
  list->add_option("--catalogue", args->catalogue, "the lab directory")->capture_default_str();
  list->add_flag("--json", args->as_json, "one JSON document on stdout");
  describe_values(*list, {{"--catalogue", ValueKind::kDirectory, "DIR"}});
  list->callback(
      [args, &status] { guarded(status, [&] { return cmd_list(args->catalogue, args->as_json); }); });

  add_start_command(lab, args, status);
  add_draw_command(lab, args, status);

  auto* hint = lab.add_subcommand("hint", "The next hint (each one used costs points).");
  hint->add_option("workspace", args->workspace, "the workspace")->required();
  hint->add_option("--key-dir", args->key_dir, "the key directory (default: the one the workspace names)");
  hint->add_option("--server", args->server, "the lab service (default: the one the workspace came from)");
  describe_values(*hint, {{"workspace", ValueKind::kDirectory, "WORKSPACE"},
                          {"--key-dir", ValueKind::kDirectory, "DIR"},
                          {"--server", ValueKind::kFile, "SOCKET"}});
  hint->callback([args, &status] {
    guarded(status, [&] {
      const std::string server = service_of_workspace(*args);
      return server.empty() ? lab_hint(args->workspace, args->key_dir)
                            : ask_service_about_ticket(*args, server, "hint");
    });
  });

  add_answer_command(lab, args, status);

  auto* causes = lab.add_subcommand("causes", "The words for --cause.");
  causes->add_flag("--json", args->as_json, "one JSON document on stdout");
  causes->callback([args, &status] { status = cmd_causes(args->as_json); });
}

}  // namespace

void add_lab_command(CLI::App& app, int& status) {
  auto* lab = app.add_subcommand("lab", "Training labs: a hidden fault, real symptoms, a graded diagnosis.");
  lab->require_subcommand(1);
  lab->footer(
      "Students: list, start, hint, answer, causes, debrief (docs/labs.md). Instructors: class, draw, "
      "debrief, key,\n"
      "gradebook (docs/labs-instructor.md).\n"
      "Examples:\n"
      "  ncclfi lab list\n"
      "  ncclfi lab start job-died --student ada --key-dir /srv/lab-keys\n"
      "  ncclfi lab answer lab-job-died-ada --rank 2 --cause nic\n"
      "  ncclfi lab gradebook --key-dir /srv/lab-keys lab-*");
  auto args = std::make_shared<LabArgs>();
  args->catalogue = default_lab_catalogue();
  args->start_key_dir = default_key_dir();
  add_student_commands(*lab, args, status);
  add_instructor_commands(*lab, args, status);
  add_class_commands(*lab, args, status);
  add_serve_command(*lab, args, status);
}

}  // namespace ncclfi::cli
