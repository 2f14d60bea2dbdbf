// The key directory's privacy: the directories `lab start` makes there (the key directory itself when it
// is new, and one per ticket) are 0700, and the key directory holds one secret, `progress-secret`
// (0600), under which every ticket's progress.json is signed (lab_progress.h). The secret is made once,
// by the first `lab start` into that key directory, and read by every later command.
#pragma once

#include <string>

namespace ncclfi::cli::lab {

// The file of the secret in a key directory.
inline constexpr const char* kSecretFile = "progress-secret";

// Makes `dir` (and any missing parent) when it does not exist; the directory itself is made 0700. An
// existing directory keeps its mode: the instructor chose it.
void make_private_directory(const std::string& dir);

// The key directory's secret, made (0600) when there is none yet. Safe against two starts at once: the
// secret is written whole to a private temporary file and linked into place, and the one that loses
// the race reads the winner's.
std::string make_or_read_secret(const std::string& key_dir);

// The key directory's secret. Throws, naming the file, when there is none, when it is not a regular
// file, or when its group or others may read or write it (anyone who can read it can sign progress).
std::string read_secret(const std::string& key_dir);

}  // namespace ncclfi::cli::lab
