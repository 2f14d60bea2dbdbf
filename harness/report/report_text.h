// What several report writers share (internal): text escaping for XML and HTML, a run's duration.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ncclfi::harness {

// Escapes & < > " ' and drops characters XML 1.0 forbids (C0 controls other than tab, LF, CR;
// invalid UTF-8 bytes become U+FFFD). Safe in text nodes and in attribute values.
std::string xml_escape(std::string_view text);

struct RunRecord;
// How long the run took (its history's start to end), or nullopt when the history has no times.
std::optional<double> run_seconds(const RunRecord& record);

}  // namespace ncclfi::harness
