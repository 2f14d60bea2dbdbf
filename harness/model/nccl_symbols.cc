#include "nccl_symbols.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>

namespace ncclfi::cli {
namespace {

constexpr const char* kLibNccl = "libnccl.so.2";

std::string first_on_path(const std::string& dirs) {
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = dirs.find(':', start);
    const std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const std::string path = dir + "/" + kLibNccl;
    if (!dir.empty() && access(path.c_str(), R_OK) == 0) return path;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

// ncclGetVersion's code, or -1 when the library does not say.
int code_of(void* handle) {
  using GetVersion = int (*)(int*);
  const auto get = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
  int code = 0;
  if (get == nullptr || get(&code) != 0) return -1;
  return code;
}

std::string version_of(void* handle) {
  const int code = code_of(handle);
  if (code < 0) return "unknown version";
  return "NCCL " + std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

// The libnccl.so.2 the job would load, loaded here to look at it; closed again by the destructor.
struct JobNccl {
  explicit JobNccl(const std::string& ld_library_path) : path(first_on_path(ld_library_path)) {
    handle = dlopen(path.empty() ? kLibNccl : path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle != nullptr && path.empty()) {
      char where[4096] = "";
      if (dlinfo(handle, RTLD_DI_ORIGIN, where) == 0) path = std::string(where) + "/" + kLibNccl;
    }
  }
  ~JobNccl() {
    if (handle != nullptr) dlclose(handle);
  }
  JobNccl(const JobNccl&) = delete;
  JobNccl& operator=(const JobNccl&) = delete;
  // "no libnccl.so.2 could be loaded (path)"
  std::string not_loaded() const {
    return std::string("no ") + kLibNccl + " could be loaded" + (path.empty() ? "" : " (" + path + ")");
  }
  std::string name() const { return path.empty() ? kLibNccl : path; }

  std::string path;
  void* handle = nullptr;
};

}  // namespace

int nccl_version_code(const std::string& release) {
  int major = 0;
  int minor = 0;
  int patch = 0;
  int used = 0;
  const int n = std::sscanf(release.c_str(), "%2d.%2d%n.%2d%n", &major, &minor, &used, &patch, &used);
  if (n < 2 || static_cast<size_t>(used) != release.size() || major < 0 || minor < 0 || patch < 0) return -1;
  return major * 10000 + minor * 100 + patch;
}

std::string nccl_older_than(const std::string& oldest, const std::string& ld_library_path) {
  if (oldest.empty()) return "";
  const int wanted = nccl_version_code(oldest);
  if (wanted < 0) return "needs NCCL >= " + oldest + ", which is not a release MAJOR.MINOR[.PATCH]";
  const JobNccl nccl(ld_library_path);
  if (nccl.handle == nullptr) return "needs NCCL >= " + oldest + ", but " + nccl.not_loaded();
  const int code = code_of(nccl.handle);
  if (code >= wanted) return "";
  return "needs NCCL >= " + oldest + ": " + nccl.name() + " is " + version_of(nccl.handle);
}

std::string missing_nccl_symbols(const std::vector<std::string>& symbols,
                                 const std::string& ld_library_path) {
  if (symbols.empty()) return "";
  const JobNccl nccl(ld_library_path);
  void* handle = nccl.handle;
  if (handle == nullptr) return "needs " + symbols.front() + " from NCCL, but " + nccl.not_loaded();
  const std::string& path = nccl.path;
  std::string why;
  for (const auto& name : symbols) {
    if (dlsym(handle, name.c_str()) != nullptr) continue;
    why =
        "needs " + name + ": " + (path.empty() ? kLibNccl : path) + " (" + version_of(handle) + ") lacks it";
    break;
  }
  return why;
}

}  // namespace ncclfi::cli
