// Text escaping shared by the XML and HTML reports (internal).
#pragma once

#include <string>
#include <string_view>

namespace ncclfi::harness {

// Escapes & < > " ' and drops characters XML 1.0 forbids (C0 controls other than tab, LF, CR;
// invalid UTF-8 bytes become U+FFFD). Safe in text nodes and in attribute values.
std::string xml_escape(std::string_view text);

// Makes text safe inside an inline <script> JSON blob: escapes "</" and U+2028/2029.
std::string script_safe(std::string_view json_text);

}  // namespace ncclfi::harness
