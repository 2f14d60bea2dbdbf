// `ncclfi diagnose`'s report: text for a terminal and the same as JSON.
#include <cstdio>

#include "console_text.h"
#include "diagnosis.h"
#include "text_format.h"

namespace ncclfi::diagnose {
namespace {

using harness::terminal_safe;

constexpr size_t kShownEvidence = 40;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string when(const Evidence& e) {
  if (!e.time) return "no time stamp";
  return format_time(*e.time) + (e.time_inferred ? " (or later: last stamp before it)" : "");
}

std::string who(const Evidence& e) {
  std::string text = e.rank >= 0 ? "rank " + std::to_string(e.rank) : "no rank";
  return text + (e.host.empty() ? "" : " on " + e.host);
}

const char* pointer_name(Pointer p) {
  switch (p) {
    case Pointer::kNone:
      return "none";
    case Pointer::kPrinter:
      return "printer";
    case Pointer::kPeer:
      return "peer";
    case Pointer::kEitherEnd:
      return "either_end";
    case Pointer::kNamed:
      return "named";
  }
  return "none";
}

std::string culprit_text(const Diagnosis& d) {
  if (d.candidates.empty()) return "none found: no line points at a rank or host (the ranks failed alike)";
  const Candidate& top = d.candidates.front();
  if (!d.tied_units.empty()) {
    std::string units;
    for (const auto& u : d.tied_units) units += (units.empty() ? "" : ", ") + u;
    return "undecided between " + units + " (tied)";
  }
  if (d.culprit_host.empty()) return top.unit;
  if (d.culprit_ranks.empty()) return "host " + d.culprit_host;
  const std::string ranks = harness::join(d.culprit_ranks);
  const bool several = d.culprit_ranks.size() > 1;
  // The whole host, or some of its ranks.
  if (d.culprit_ranks == top.ranks)
    return "host " + d.culprit_host + " (rank" + (several ? "s " : " ") + ranks + ")";
  return std::string("rank") + (several ? "s " : " ") + ranks + " on host " + d.culprit_host;
}

std::string site_text(const Diagnosis& d) {
  if (d.site.empty()) return "unknown";
  if (d.tied_sites.empty()) return d.site;
  std::string sites;
  for (const auto& s : d.tied_sites) sites += (sites.empty() ? "" : ", ") + s;
  return "undecided between " + sites + " (tied)";
}

std::string target_text(const Evidence& e) {
  if (e.target.empty()) return "";
  if (e.pointer == Pointer::kEitherEnd && e.rank >= 0)
    return " -> either end: rank " + std::to_string(e.rank) + " or " + e.target;
  return " -> " + e.target;
}

nlohmann::json evidence_json(const Evidence& e) {
  nlohmann::json j = {{"file", e.file},     {"line", e.line},       {"rank", e.rank},
                      {"host", e.host},     {"pattern", e.pattern}, {"role", e.role},
                      {"label", e.label},   {"site", e.site},       {"points_at", pointer_name(e.pointer)},
                      {"target", e.target}, {"weight", e.weight},   {"text", e.text}};
  j["time"] = e.time ? nlohmann::json(format_time(*e.time)) : nlohmann::json(nullptr);
  j["time_inferred"] = e.time_inferred;
  if (!e.peer.empty()) j["peer"] = e.peer;
  return j;
}

}  // namespace

std::string diagnosis_text(const Diagnosis& d) {
  std::string out = "ncclfi diagnose: " + std::to_string(d.files) + " file(s), " + std::to_string(d.lines) +
                    " line(s), " + std::to_string(d.evidence.size()) +
                    " matched the signature catalogue; order " +
                    (d.timestamps ? "by time stamps (lines without one: the last stamp before them)"
                                  : "by file position (no time stamps)") +
                    "\n";
  for (const auto& s : d.skipped) out += "  skipped " + terminal_safe(s) + "\n";
  if (!d.failure && d.slow) {
    out += "\nSlow, no failure: " + number(d.slow->seconds_per_iteration * 1e3) + " ms an iteration, " +
           number(d.slow->seconds_per_iteration / d.slow->reference_seconds_per_iteration) +
           "x the slowest of " + std::to_string(d.slow->references) + " fault-free reference run(s) (" +
           number(d.slow->reference_seconds_per_iteration * 1e3) + " ms)\n  " + terminal_safe(d.slow->file) +
           ":" + std::to_string(d.slow->line) + "  " + terminal_safe(d.slow->text) + "\n";
    if (d.culprit_ranks.empty()) {
      out += "Culprit:    undecided: nothing in a slow job's logs names the slow link or rank\n";
    } else {
      out += "Culprit:    " + terminal_safe(culprit_text(d)) + "\n";
      out += "Site:       " + d.site + "\n            site: " + terminal_safe(d.site_why) + "\n";
      for (const Evidence& e : d.evidence)
        out +=
            "  " + terminal_safe(e.file) + ":" + std::to_string(e.line) + "  " + terminal_safe(e.text) + "\n";
    }
    for (const std::string& w : d.what_would_decide) out += "What would decide: " + terminal_safe(w) + "\n";
    return out;
  }
  if (!d.failure) {
    out += "\nNo failure: no line of these logs is a failure the catalogue knows.\n";
    for (const Evidence& e : d.evidence)
      out += "  (" + e.pattern + ") " + terminal_safe(e.file) + ":" + std::to_string(e.line) + "  " +
             terminal_safe(e.text) + "\n";
    return out;
  }
  out += "\nCulprit:    " + terminal_safe(culprit_text(d)) + "\n";
  out += "Site:       " + site_text(d) + "   symptom: " + d.symptom + " (" + d.symptom_why + ")\n";
  if (!d.site_why.empty()) out += "            site: " + d.site_why + "\n";
  for (const std::string& f : d.link_test_findings) out += "Link test:  " + f + "\n";
  out += "Confidence: " + number(d.confidence) + "\n";
  if (d.first_failure) {
    const Evidence& f = *d.first_failure;
    out += "First failure: " + terminal_safe(who(f)) + ", " + when(f) + ", " + terminal_safe(f.file) + ":" +
           std::to_string(f.line) + " (" + f.pattern + ")\n  " + terminal_safe(f.text) + "\n";
  }
  if (!d.candidates.empty()) {
    out += "\nWhy " + terminal_safe(culprit_text(d)) + ":\n";
    for (const auto& r : d.candidates.front().reasons) out += "  - " + terminal_safe(r) + "\n";
  }
  if (!d.lost_peer_ranks.empty())
    out += "Ranks that only lost a peer: " + harness::join(d.lost_peer_ranks) + "\n";
  if (!d.hang_candidates.empty())
    out += "Ranks that printed no failure (hang candidates): " + harness::join(d.hang_candidates) + "\n";
  if (d.candidates.size() > 1) {
    out += "Other candidates:";
    for (size_t i = 1; i < d.candidates.size() && i < 4; ++i)
      out += " " + terminal_safe(d.candidates[i].unit) + " (" + number(d.candidates[i].score) + ")";
    out += "; culprit score " + number(d.candidates.front().score) + "\n";
  }
  out += "Site votes:";
  for (const auto& [site, v] : d.site_votes) out += " " + site + " " + number(v);
  out += "\n";
  if (!d.what_would_decide.empty()) {
    out += "\nWhat would decide:\n";
    for (const auto& w : d.what_would_decide) out += "  - " + terminal_safe(w) + "\n";
  }
  out += "\nEvidence:\n";
  // A terminal gets the lines that point somewhere and the first kShownEvidence others; --json has all.
  size_t shown = 0, hidden = 0;
  for (const Evidence& e : d.evidence) {
    if (e.target.empty() && shown >= kShownEvidence) {
      ++hidden;
      continue;
    }
    ++shown;
    out += "  " + terminal_safe(e.file) + ":" + std::to_string(e.line) + "  " + terminal_safe(who(e)) + ", " +
           (e.time ? format_time(*e.time) + (e.time_inferred ? "~" : "") : "-") + "  " + e.pattern + " (" +
           e.role + (e.site.empty() ? "" : ", " + e.site) + ")" + terminal_safe(target_text(e)) + "\n    " +
           terminal_safe(e.text) + "\n";
  }
  if (hidden > 0)
    out +=
        "  ... " + std::to_string(hidden) + " more matched line(s) that point at no one: --json lists them\n";
  if (d.evidence_dropped > 0)
    out += "  ... " + std::to_string(d.evidence_dropped) + " more matched line(s) not kept\n";
  if (d.quoted_lines_dropped > 0)
    out += "  (" + std::to_string(d.quoted_lines_dropped) +
           " line(s) without a rank that quote a rank's own line word for word were counted once)\n";
  return out;
}

nlohmann::json diagnosis_json(const Diagnosis& d) {
  nlohmann::json j;
  j["failure"] = d.failure;
  j["files"] = d.files;
  j["lines"] = d.lines;
  j["skipped"] = d.skipped;
  j["order"] = d.timestamps ? "timestamps" : "file position";
  nlohmann::json evidence = nlohmann::json::array();
  for (const Evidence& e : d.evidence) evidence.push_back(evidence_json(e));
  j["evidence"] = evidence;
  j["evidence_dropped"] = d.evidence_dropped;
  if (d.slow) {
    j["symptom"] = d.symptom;
    j["slow"] = {{"seconds_per_iteration", d.slow->seconds_per_iteration},
                 {"reference_seconds_per_iteration", d.slow->reference_seconds_per_iteration},
                 {"references", d.slow->references},
                 {"file", d.slow->file},
                 {"line", d.slow->line},
                 {"text", d.slow->text}};
    j["what_would_decide"] = d.what_would_decide;
    if (!d.culprit_ranks.empty()) {  // its logs said which rank held it back
      j["culprit"] = {{"host", d.culprit_host}, {"ranks", d.culprit_ranks}};
      j["site"] = d.site;
      j["site_why"] = d.site_why;
    }
  }
  if (!d.failure) return j;
  j["culprit"] = {
      {"host", d.culprit_host},
      {"ranks", d.culprit_ranks},
      {"unit", d.candidates.empty() ? "" : d.candidates.front().unit},
      {"tied", d.tied_units},
      {"reasons", d.candidates.empty() ? std::vector<std::string>{} : d.candidates.front().reasons}};
  nlohmann::json candidates = nlohmann::json::array();
  for (const Candidate& c : d.candidates)
    candidates.push_back({{"unit", c.unit}, {"ranks", c.ranks}, {"score", c.score}, {"reasons", c.reasons}});
  j["candidates"] = candidates;
  j["first_failure"] = d.first_failure ? evidence_json(*d.first_failure) : nlohmann::json(nullptr);
  j["lost_peer_ranks"] = d.lost_peer_ranks;
  j["hang_candidates"] = d.hang_candidates;
  j["site"] = d.site;
  j["site_votes"] = d.site_votes;
  j["tied_sites"] = d.tied_sites;
  j["symptom"] = d.symptom;
  j["symptom_why"] = d.symptom_why;
  if (!d.site_why.empty()) j["site_why"] = d.site_why;
  if (!d.link_test_findings.empty()) j["link_test"] = d.link_test_findings;
  j["confidence"] = d.confidence;
  j["what_would_decide"] = d.what_would_decide;
  nlohmann::json hosts = nlohmann::json::object();
  for (const auto& [rank, host] : d.rank_hosts) hosts[std::to_string(rank)] = host;
  j["rank_hosts"] = hosts;
  j["address_hosts"] = d.address_hosts;
  j["address_ranks"] = d.address_ranks;
  j["quoted_lines_dropped"] = d.quoted_lines_dropped;
  return j;
}

}  // namespace ncclfi::diagnose
