// The last lines of a rank's output file, for the console's failure details: read from its end (a rank
// may have printed gigabytes), control characters dropped (a rank's colours or cursor moves must not
// reach the operator's terminal).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ncclfi::harness {

// At most `count` last lines of `path` that are not blank, oldest first; empty when it cannot be read.
std::vector<std::string> last_log_lines(const std::string& path, size_t count);

}  // namespace ncclfi::harness
