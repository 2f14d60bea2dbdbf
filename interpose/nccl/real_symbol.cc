#include "real_symbol.h"

#include <dlfcn.h>

#include <string>

namespace ncclfi::preload {

void* resolve_next(const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) return p;
  std::string strong = std::string("p") + name;
  return dlsym(RTLD_NEXT, strong.c_str());
}

}  // namespace ncclfi::preload
