// Atomic file writes: an interrupted writer leaves either the old file or the new one, never half of one.
#pragma once

#include <string>

namespace ncclfi::harness {

// Writes `content` to `path` atomically (creates parent directories). Throws std::runtime_error
// naming the path and errno text on failure; never leaves the temp file behind. Refuses a `path` that
// exists as anything but a regular file (what not_a_regular_file says).
void write_file_atomic(const std::string& path, const std::string& content);

// Why `path` cannot take a written file: "" when it is absent or a regular file, else what it is ("a
// character device", "a symbolic link", "a FIFO", "a directory", "a socket"). The write renames a new
// file over the path, so `--metrics /dev/full` would replace the host's /dev/full with a regular file
// and a symbolic link would be replaced, not followed: both are refused instead.
std::string not_a_regular_file(const std::string& path);

}  // namespace ncclfi::harness
