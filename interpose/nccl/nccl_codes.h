// Fault parameters that name NCCL results and signals, as plans write them.
#pragma once

#include <nlohmann/json.hpp>

#include <nccl.h>

namespace ncclfi::preload {

// `code` of error/async_error/init_fail: a number 1-8 or a name (ncclRemoteError, RemoteError,
// remote_error, remote). Anything else gives `fallback`.
ncclResult_t parse_nccl_code(const nlohmann::json& params, ncclResult_t fallback);

// `signal` of crash: a number or a name (SIGKILL, KILL, kill). Anything else gives `fallback`.
int parse_signal(const nlohmann::json& params, int fallback);

}  // namespace ncclfi::preload
