#include "lab_key_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "agent_protocol.h"  // random_hex

namespace ncclfi::cli::lab {
namespace fs = std::filesystem;

namespace {

constexpr size_t kSecretBytes = 32;  // 64 hex digits in the file

std::string errno_text() {
  return std::strerror(errno);
}

// Writes the whole of `text` to `fd`.
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void make_private_directory(const std::string& dir) {
  const fs::path path = fs::absolute(dir).lexically_normal();
  std::error_code ec;
  if (fs::is_directory(path, ec)) return;
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  if (::mkdir(path.c_str(), 0700) != 0) {
    if (errno == EEXIST && fs::is_directory(path, ec)) return;  // another start made it just now
    throw std::runtime_error("cannot make the directory " + path.string() + ": " + errno_text());
  }
  // mkdir's mode passes through the umask, which could take the owner's own bits away; set it whole.
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::replace);
}

std::string make_or_read_secret(const std::string& key_dir) {
  const fs::path secret = fs::path(key_dir) / kSecretFile;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(secret, ec))) return read_secret(key_dir);
  // mkstemp makes the file 0600 whatever the umask; link() puts it in place only when no secret is
  // there yet, so a secret once made is never replaced.
  std::string tmp = (fs::path(key_dir) / (std::string(kSecretFile) + ".XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw std::runtime_error("cannot make a secret in " + key_dir + ": " + errno_text());
  const bool written = write_all(fd, random_hex(kSecretBytes) + "\n") && ::fsync(fd) == 0;
  ::close(fd);
  const bool linked = written && ::link(tmp.c_str(), secret.c_str()) == 0;
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  if (!written) throw std::runtime_error("cannot write " + secret.string() + ": " + errno_text());
  if (!linked && link_errno != EEXIST)
    throw std::runtime_error("cannot make " + secret.string() + ": " + std::strerror(link_errno));
  return read_secret(key_dir);
}

std::string read_secret(const std::string& key_dir) {
  const std::string path = (fs::path(key_dir) / kSecretFile).string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(path + ": the key directory's secret is unreadable (" + errno_text() +
                             "): progress in it cannot be verified");
  }
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = "cannot stat it: " + errno_text();
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem = std::string("its group or others may use it (mode ") + mode +
              "), and anyone who reads it can sign progress: chmod 600 it";
  }
  std::string text(2 * kSecretBytes + 1, '\0');
  ssize_t n = 0;
  if (problem.empty()) {
    n = ::read(fd, text.data(), text.size());
    if (n != static_cast<ssize_t>(text.size()) || text.back() != '\n')
      problem = "not a secret that lab start wrote";
  }
  ::close(fd);
  if (!problem.empty()) throw std::runtime_error(path + ": " + problem);
  text.pop_back();  // the newline
  return text;
}

}  // namespace ncclfi::cli::lab
