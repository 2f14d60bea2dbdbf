// `requires.nccl_symbols`: whether the libnccl.so.2 a job would load exports the NCCL API a scenario
// needs (ncclCommShrink, ncclCommRevoke, ...), so a scenario skips with the reason on an older NCCL
// instead of failing in the middle of its run.
#pragma once

#include <string>
#include <vector>

namespace ncclfi::cli {

// "" when every name in `symbols` is exported by the libnccl.so.2 found first on `ld_library_path`
// (the job's LD_LIBRARY_PATH, colon-separated), else by the one this process's loader finds; otherwise
// why not: "needs ncclCommRevoke: /path/libnccl.so.2 (NCCL 2.28.3) lacks it", or that no libnccl.so.2
// was found. The library is loaded in this process to look (RTLD_LAZY | RTLD_LOCAL) and closed again.
std::string missing_nccl_symbols(const std::vector<std::string>& symbols, const std::string& ld_library_path);

}  // namespace ncclfi::cli
