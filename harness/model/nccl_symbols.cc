#include "nccl_symbols.h"

#include <dlfcn.h>
#include <unistd.h>

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

std::string version_of(void* handle) {
  using GetVersion = int (*)(int*);
  const auto get = reinterpret_cast<GetVersion>(dlsym(handle, "ncclGetVersion"));
  int code = 0;
  if (get == nullptr || get(&code) != 0) return "unknown version";
  return "NCCL " + std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

}  // namespace

std::string missing_nccl_symbols(const std::vector<std::string>& symbols,
                                 const std::string& ld_library_path) {
  if (symbols.empty()) return "";
  std::string path = first_on_path(ld_library_path);
  void* handle = dlopen(path.empty() ? kLibNccl : path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    return "needs " + symbols.front() + " from NCCL, but no " + kLibNccl + " could be loaded" +
           (path.empty() ? "" : " (" + path + ")");
  }
  if (path.empty()) {
    char where[4096] = "";
    if (dlinfo(handle, RTLD_DI_ORIGIN, where) == 0) path = std::string(where) + "/" + kLibNccl;
  }
  std::string why;
  for (const auto& name : symbols) {
    if (dlsym(handle, name.c_str()) != nullptr) continue;
    why =
        "needs " + name + ": " + (path.empty() ? kLibNccl : path) + " (" + version_of(handle) + ") lacks it";
    break;
  }
  dlclose(handle);
  return why;
}

}  // namespace ncclfi::cli
