// The catalogue as a whole: the order lines are tried in, the sites, and the docs' tables.
#include <string>

#include "signature_family.h"
#include "signature_list.h"

namespace ncclfi::harness {
namespace {

std::string escape_cell(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string code_cell(std::string_view text) {
  if (text.empty()) return "";
  // A backtick inside the text would end the code span: use a double-backtick span then.
  const bool ticks = text.find('`') != std::string_view::npos;
  return (ticks ? "`` " : "`") + escape_cell(text) + (ticks ? " ``" : "`");
}

const char* role_name(SignatureRole role) {
  switch (role) {
    case SignatureRole::kDetection:
      return "detection";
    case SignatureRole::kEvidence:
      return "evidence";
    case SignatureRole::kRestart:
      return "restart";
  }
  return "";
}

void family_table(std::string& out, std::string_view heading, std::string_view software,
                  const std::vector<SignatureLine>& lines, std::string_view owner) {
  out += "#### " + std::string(heading) + "\n\n";
  out += "Printed by " + std::string(software) + ".\n\n";
  out += "| line id | as printed | releases | means | tells the judge | site | printed by | source |\n";
  out += "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const SignatureLine& line : lines) {
    const std::string_view label = line.implies.empty() ? owner : line.implies;
    std::string verdict = role_name(line.role);
    if (!label.empty()) verdict += " `" + std::string(label) + "`";
    std::string source = escape_cell(line.cited);
    if (!line.reported.empty()) source += (source.empty() ? "" : "; seen in ") + escape_cell(line.reported);
    out += "| `" + std::string(line.id) + "` | " +
           (line.format.empty() ? escape_cell(line.shown) : code_cell(line.format)) + " | " +
           escape_cell(line.versions) + " | " + escape_cell(line.meaning) + " | " + verdict + " | " +
           escape_cell(line.site) + " | " + escape_cell(line.printed_by) + " | " + source + " |\n";
  }
  out += "\n";
}

}  // namespace

const std::vector<const SignatureFamily*>& signature_families() {
#define NCCLFI_ADDRESS(family) &family,
  static const std::vector<const SignatureFamily*> families = {NCCLFI_SIGNATURE_FAMILIES(NCCLFI_ADDRESS)};
#undef NCCLFI_ADDRESS
  return families;
}

const std::vector<CatalogueEntry>& signature_catalogue() {
  static const std::vector<CatalogueEntry> entries = [] {
    std::vector<CatalogueEntry> out;
    for (const MechanismSpec* spec : mechanism_specs()) {
      for (const SignatureLine& line : spec->lines) {
        out.push_back(
            {&line, spec->name, SignatureRole::kDetection, line.implies.empty() ? spec->name : line.implies});
      }
    }
    for (const SignatureFamily* family : signature_families()) {
      for (const SignatureLine& line : family->lines)
        out.push_back({&line, family->name, line.role, line.implies});
    }
    return out;
  }();
  return entries;
}

bool is_hardware_record(std::string_view id) {
  for (const SignatureFamily* family : signature_families()) {
    if (!family->hardware_record) continue;
    for (const SignatureLine& line : family->lines)
      if (line.id == id) return true;
  }
  return false;
}

const std::vector<std::string_view>& signature_sites() {
  // The fault sites of docs/faults.md, and the failures that are not a link's: a rank's host or GPU,
  // a dead rank, setting up the job's connections, and its configuration.
  static const std::vector<std::string_view> sites = {"nic",       "congestion", "degraded_link", "nvlink",
                                                      "pcie",      "host_hang",  "gpu_hang",      "gpu_fault",
                                                      "dead_rank", "bootstrap",  "configuration"};
  return sites;
}

std::string signature_catalogue_markdown() {
  std::string out;
  for (const MechanismSpec* spec : mechanism_specs()) {
    if (spec->lines.empty()) continue;
    family_table(out, "`" + std::string(spec->name) + "`: " + std::string(spec->noticed_by), spec->source,
                 spec->lines, spec->name);
  }
  for (const SignatureFamily* family : signature_families())
    family_table(out, family->title, family->software, family->lines, "");
  return out;
}

}  // namespace ncclfi::harness
