// The real libibverbs behind libncclfi-ibverbs.so: which file it is, and the functions the wrapper calls
// itself. Every other exported symbol reaches the real library through the generated forwarders.
#pragma once

#include <string>

namespace ncclfi::verbs {

// The real library's default-version function `name` (dlvsym), or nullptr when it lacks one.
void* real_function(const char* name);
// The file the wrapper forwards to, or an explanation of why none could be loaded.
const std::string& real_library_status();

}  // namespace ncclfi::verbs
