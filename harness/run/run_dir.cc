#include "run_dir.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "ncclfi/event_log.h"

namespace ncclfi::cli {
namespace fs = std::filesystem;

std::string utc_stamp() {
  const int64_t now = Clock::wall_ns();
  const time_t seconds = static_cast<time_t>(now / 1000000000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02d.%03ldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long>(now % 1000000000 / 1000000));
  return buf;
}

void update_latest_link(const std::string& parent, const std::string& target_name) {
  const fs::path tmp = fs::path(parent) / (".latest." + std::to_string(getpid()));
  std::error_code ec;
  fs::remove(tmp, ec);
  fs::create_directory_symlink(target_name, tmp, ec);
  if (!ec) fs::rename(tmp, fs::path(parent) / "latest", ec);
}

namespace {

// mkdir is the lock: it fails when the name exists, whoever made it, so a taken name moves on to the
// next suffix.
std::string make_stamped_dir(const fs::path& parent) {
  fs::create_directories(parent);
  const std::string stamp = utc_stamp();
  for (int n = 1; n < 1000; ++n) {
    const std::string name = n == 1 ? stamp : stamp + "-" + std::to_string(n);
    std::error_code ec;
    if (fs::create_directory(parent / name, ec)) {
      update_latest_link(parent.string(), name);
      return (parent / name).string();
    }
    if (ec) throw std::runtime_error("cannot create " + (parent / name).string() + ": " + ec.message());
  }
  throw std::runtime_error("cannot create a run directory under " + parent.string());
}

}  // namespace

std::string make_run_dir(const std::string& out_root, const std::string& scenario) {
  return make_stamped_dir(fs::absolute(fs::path(out_root) / scenario));
}

std::string make_suite_dir(const std::string& out_root) {
  return make_stamped_dir(fs::absolute(fs::path(out_root) / "suites"));
}

}  // namespace ncclfi::cli
