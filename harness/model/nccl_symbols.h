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

// `requires.nccl_version`: "" when the same libnccl.so.2 reports (ncclGetVersion) release `oldest`
// ("2.29.7") or newer; otherwise why not: "needs NCCL >= 2.29.7: /path/libnccl.so.2 is NCCL 2.28.9", or
// that no libnccl.so.2 was found.
std::string nccl_older_than(const std::string& oldest, const std::string& ld_library_path);
// NCCL's version code for a release "2.29.7" (22907: major x 10000 + minor x 100 + patch, NCCL_VERSION_CODE
// since 2.9); -1 for text that is not MAJOR.MINOR[.PATCH].
int nccl_version_code(const std::string& release);

}  // namespace ncclfi::cli
