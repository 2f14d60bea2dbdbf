// `ncclfi score`: how often `ncclfi diagnose` is right, over runs and lab tickets with ground truth
// (harness/apps/score/).
#include <iostream>

#include "atomic_file.h"
#include "commands.h"
#include "exit_status.h"
#include "score.h"

namespace ncclfi::cli {

namespace {

struct Floors {
  double rank = 0, site = 0, symptom = 0, rank_and_site = 0;
};

// The accuracies under their floor, as "rank and site 71.4% < 80.0%".
std::vector<std::string> below_floors(const score::ScoreSummary& s, const Floors& f) {
  std::vector<std::string> below;
  auto check = [&](const char* what, const score::Accuracy& a, double floor) {
    if (floor > 0 && a.ratio() < floor)
      below.push_back(std::string(what) + " " + std::to_string(100.0 * a.ratio()).substr(0, 5) + "% < " +
                      std::to_string(100.0 * floor).substr(0, 5) + "%");
  };
  check("rank", s.rank, f.rank);
  check("site", s.site, f.site);
  check("symptom", s.symptom, f.symptom);
  check("rank and site", s.rank_and_site, f.rank_and_site);
  return below;
}

}  // namespace

void add_score_command(CLI::App& app, int& status) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto json_path = std::make_shared<std::string>();
  auto floors = std::make_shared<Floors>();
  auto* cmd = app.add_subcommand(
      "score",
      "How often ncclfi diagnose names the truth: accuracy over runs and lab tickets with ground truth.");
  cmd->add_option("paths", *paths,
                  "run directories, an --out directory of ncclfi run, lab tickets or a lab key directory")
      ->required();
  cmd->add_option("--json", *json_path, "also write the cases and figures as JSON to FILE");
  for (auto [name, field, what] :
       {std::tuple{"--min-rank", &Floors::rank, "rank"}, std::tuple{"--min-site", &Floors::site, "site"},
        std::tuple{"--min-symptom", &Floors::symptom, "symptom"},
        std::tuple{"--min-rank-site", &Floors::rank_and_site, "rank and site together"}})
    cmd->add_option(name, (*floors).*field,
                    std::string("fail (exit 1) when the ") + what + " accuracy is below this share")
        ->check(CLI::Range(0.0, 1.0));
  describe_values(*cmd, {{"paths", ValueKind::kFile, "PATH"}, {"--json", ValueKind::kFile, "FILE"}});
  cmd->footer(
      "Each case is diagnosed from its logs alone (as ncclfi diagnose does), then held against what the\n"
      "harness knows: the ranks the injections hit, the site their fault kind models and the symptom the\n"
      "scenario expected, or a lab's answer key. Prints a row per case, the accuracy for rank, host, site,\n"
      "symptom and rank and site together, and the confusion matrix of the sites. Details: "
      "docs/diagnose.md.\n"
      "Exit status: 0 every floor met, 1 an accuracy below its floor, 2 bad input (nothing to score).\n"
      "Examples:\n"
      "  ncclfi run scenarios/cpu --out runs && ncclfi score runs\n"
      "  ncclfi score lab-keys --min-rank-site 0.9 --json score.json");
  cmd->callback([paths, json_path, floors, &status] {
    std::vector<std::string> errors;
    const auto inputs = score::find_cases(*paths, errors);
    const score::ScoreSummary s = score::score_inputs(inputs, errors);
    std::cout << score::score_text(s);
    if (!json_path->empty()) {
      try {
        harness::write_file_atomic(
            *json_path,
            score::score_json(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      } catch (const std::exception& e) {
        std::cerr << "ncclfi score: " << e.what() << "\n";
        status = kHarnessError;
        return;
      }
    }
    if (s.cases.empty()) {
      std::cerr << "ncclfi score: nothing to score\n";
      status = kBadInput;
      return;
    }
    const auto below = below_floors(s, *floors);
    for (const auto& b : below) std::cerr << "ncclfi score: below the floor: " << b << "\n";
    status = below.empty() ? kAllPassed : kSomeFailed;
  });
}

}  // namespace ncclfi::cli
