// The list of report formats, and reading `--report NAME[=PATH]` (report_spec.h).
#include <stdexcept>

#include "atomic_file.h"
#include "report_spec.h"

namespace ncclfi::harness {

// One line per format file. An explicit list, as the fault kinds and the launchers have: ncclfi_report is
// a static library, and the linker would drop a format file that registered itself from a static
// initialiser.
#define NCCLFI_REPORTS(X) \
  X(kSummaryJsonReport)   \
  X(kJunitReport)         \
  X(kHtmlReport)          \
  X(kMetricsReport)       \
  X(kCsvReport)

#define NCCLFI_DECLARE(spec) extern const ReportSpec spec;
NCCLFI_REPORTS(NCCLFI_DECLARE)
#undef NCCLFI_DECLARE

const std::vector<const ReportSpec*>& report_specs() {
#define NCCLFI_ADDRESS(spec) &spec,
  static const std::vector<const ReportSpec*> specs = {NCCLFI_REPORTS(NCCLFI_ADDRESS)};
#undef NCCLFI_ADDRESS
  return specs;
}

const ReportSpec* find_report(std::string_view name) {
  for (const ReportSpec* spec : report_specs()) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

ReportRequest parse_report_request(std::string_view text) {
  const size_t eq = text.find('=');
  const std::string_view name = text.substr(0, eq);
  ReportRequest request{find_report(name),
                        eq == std::string_view::npos ? "" : std::string(text.substr(eq + 1))};
  if (request.spec == nullptr) {
    std::string names;
    for (const ReportSpec* spec : report_specs())
      names += (names.empty() ? "" : ", ") + std::string(spec->name);
    throw std::invalid_argument("--report " + std::string(text) +
                                ": expected FORMAT or FORMAT=PATH, FORMAT one of " + names);
  }
  if (eq != std::string_view::npos && request.path.empty()) {
    throw std::invalid_argument("--report " + std::string(text) + ": expected a path after '='");
  }
  // Refused before anything runs, not after the suite: the write would replace what is there.
  if (const std::string what = not_a_regular_file(request.path); !what.empty()) {
    throw std::invalid_argument("--" + std::string(name) + " " + request.path +
                                ": expected a path for a regular file, got " + what);
  }
  return request;
}

std::string report_catalogue_markdown() {
  std::string out =
      "| format | file in the suite directory | written | what it holds |\n"
      "| --- | --- | --- | --- |\n";
  for (const ReportSpec* spec : report_specs()) {
    out += "| `" + std::string(spec->name) + "` | `" + std::string(spec->default_file) + "` | " +
           (spec->in_every_suite ? "always" : "with `--report " + std::string(spec->name) + "`") + " | " +
           std::string(spec->summary) + " |\n";
  }
  return out;
}

}  // namespace ncclfi::harness
