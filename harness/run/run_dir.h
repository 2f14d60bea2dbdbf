// Run directories: runs/<scenario>/<UTC time>/ with a `latest` link next to them.
#pragma once

#include <string>

namespace ncclfi::cli {

// "20261130T194512.123Z": sortable, unique enough per scenario (milliseconds), no ':' for Windows shares.
std::string utc_stamp();
// Creates <out_root>/<scenario>/<stamp>/ (suffixing -2, -3... if taken) and points
// <out_root>/<scenario>/latest at it. Returns the absolute path.
std::string make_run_dir(const std::string& out_root, const std::string& scenario);
// The same for a suite: <out_root>/suites/<stamp>/ and <out_root>/suites/latest. Each directory is
// created exclusively, so two runs into one --out in the same millisecond never share one.
std::string make_suite_dir(const std::string& out_root);
// Points <parent>/latest at `target` atomically (symlink to a temp name, then rename).
void update_latest_link(const std::string& parent, const std::string& target_name);

}  // namespace ncclfi::cli
