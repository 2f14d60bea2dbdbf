// The libibverbs calls the wrapper answers itself (default versions only), in one table in intercepts.cc.
#pragma once

namespace ncclfi::verbs {

// The wrapper's function for `name`, or nullptr when the call is forwarded untouched.
void* intercept_for(const char* name);

}  // namespace ncclfi::verbs
