// Wrap mode: another net plugin (NCCLFI_NET_INNER) as our backend, any of versions 8-11.
#pragma once

#include <memory>
#include <string>

#include "ncclfi_net/plugin_loader.h"
#include "net_backend.h"

namespace ncclfi::net {

// Loads `entry`; refuses the shim's own library (it would wrap itself for ever). nullptr + *error on failure.
std::unique_ptr<NetBackend> make_inner_backend(const std::string& entry, std::string* error);

}  // namespace ncclfi::net
