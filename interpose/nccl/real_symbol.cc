#include "real_symbol.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

namespace ncclfi::preload {
namespace {

int collect_path(struct dl_phdr_info* info, size_t, void* out) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
  }
  return 0;
}

// NCCL loaded in a local scope (a library dlopen'ed with RTLD_LOCAL that depends on libnccl: PyTorch
// loads its pip NCCL this way) is invisible to RTLD_NEXT, although the library's calls reach our
// wrappers through the global scope. Find it among the objects already loaded: RTLD_NOLOAD never
// loads anything, so no second NCCL can enter the process. `strong` (pncclX) exists only in NCCL.
void* find_in_loaded_objects(const std::string& strong) {
  std::vector<std::string> paths;
  dl_iterate_phdr(&collect_path, &paths);  // no dlopen inside the iteration: the loader lock is held
  Dl_info self{};
  dladdr(reinterpret_cast<void*>(&find_in_loaded_objects), &self);
  for (const auto& path : paths) {
    if (self.dli_fname != nullptr && path == self.dli_fname) continue;
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* p = dlsym(handle, strong.c_str());
    dlclose(handle);  // only drops the reference RTLD_NOLOAD took
    if (p != nullptr) return p;
  }
  return nullptr;
}

}  // namespace

void* resolve_next(const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) return p;
  std::string strong = std::string("p") + name;
  if (void* p = dlsym(RTLD_NEXT, strong.c_str())) return p;
  return find_in_loaded_objects(strong);
}

}  // namespace ncclfi::preload
