// The allow-list of hosts a drill may inject on. Outside it the preload, the net shim, the harness (before
// launch) and a node's agent refuse to inject, loudly: one warning line naming the host and the list.
//
// Format (docs/drills.md): entries are host names or shell globs (`gpu-[0-9]*`, `*.staging.example.com`),
// matched without regard to case against this host's name and its short name (up to the first dot).
//   NCCLFI_ALLOWED_HOSTS       entries separated by commas or white space
//   NCCLFI_ALLOWED_HOSTS_FILE  a file: one or more entries per line, `#` starts a comment
// Both may be set (their entries add up). Neither set: no allow-list, every host may inject. A list that is
// set but empty, or a file that cannot be read, allows no host (fail closed).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ncclfi {

struct AllowList {
  bool configured = false;            // some allow-list was given (else every host is allowed)
  std::vector<std::string> patterns;  // host names and globs
  std::string problem;                // why the list could not be read ("" when it could): nothing allowed

  bool allows(const std::string& host) const;
  // The entries as one line for messages: "node-1, node-[2-4]" ("(empty)" when none).
  std::string describe() const;
};

// Entries from text (commas, white space, newlines, `#` comments).
AllowList parse_allow_list(std::string_view text);
// The allow-list of this process's environment (NCCLFI_ALLOWED_HOSTS, NCCLFI_ALLOWED_HOSTS_FILE).
AllowList allow_list_from_env();
// Reads an allow-list file (bounded_input.h limits); a problem is recorded in `problem`, never thrown.
AllowList read_allow_list_file(const std::string& path);

// The one check every injecting component makes: true when no allow-list is configured or `host` (default:
// this host's name) is in it. Otherwise false, and `warning` (when given) gets the line to print once:
// "ncclfi: host 'x' is not in the allowed hosts (a, b*): no fault is injected here".
bool host_allowed(std::string* warning = nullptr, const std::string& host = "");

}  // namespace ncclfi
