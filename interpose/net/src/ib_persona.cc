#include "ib_persona.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "ncclfi/params.h"
#include "net_log.h"

namespace ncclfi::net {
namespace {

// The persona's settings are the net shim's alone, read here like NCCL_SOCKET_IFNAME is in net_shim.cc.
std::string env_string(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

NcclVersion version_from_env(const std::string& text) {
  if (text.find('.') != std::string::npos) return NcclVersion::parse(text);
  char* end = nullptr;
  const long code = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0') return {0, 0, 0};
  return NcclVersion::from_code(static_cast<int>(code));
}

int version_code(void* get_version) {
  using GetVersion = int (*)(int*);
  int code = 0;
  if (get_version == nullptr || reinterpret_cast<GetVersion>(get_version)(&code) != 0) return 0;
  return code;
}

// ncclGetVersion of the libnccl whose logger NCCL gave init: the very library that loaded the shim, found
// also where it sits in a local scope (PyTorch's libnccl, loaded under Python's RTLD_LOCAL, is not seen by
// RTLD_DEFAULT: on a GPU the shim then printed the newest release's lines under NCCL 2.28.9).
int logger_library_version() {
  ncclDebugLogger_t logger = current_logger();
  Dl_info info{};
  if (logger == nullptr || dladdr(reinterpret_cast<void*>(logger), &info) == 0 || info.dli_fname == nullptr)
    return 0;
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);  // loaded already: nothing comes in
  if (handle == nullptr) return 0;
  const int code = version_code(dlsym(handle, "ncclGetVersion"));
  dlclose(handle);
  return code;
}

NcclVersion loaded_nccl_version() {
  // The plugin is loaded by libnccl itself, so its ncclGetVersion is already in the process; a stand-in
  // workload (ncclfi-cpu-ring) has none.
  int code = logger_library_version();
  if (code == 0) code = version_code(dlsym(RTLD_DEFAULT, "ncclGetVersion"));
  return NcclVersion::from_code(code);
}

}  // namespace

bool ib_persona() {
  static const bool ib = [] {
    const std::string persona = env_string("NCCLFI_NET_PERSONA");
    return persona == "ib" || Params::get().quiet;
  }();
  return ib;
}

const char* plugin_name() {
  return ib_persona() ? "IB" : "ncclfi";
}

NcclVersion nccl_version_for_lines() {
  static const NcclVersion version = [] {
    if (NcclVersion v = version_from_env(env_string("NCCLFI_NCCL_VERSION")); v.known()) return v;
    if (NcclVersion v = loaded_nccl_version(); v.known()) return v;
    return kNewestKnownNccl;
  }();
  return version;
}

std::string hca_name_for_rank(int rank, int local_rank) {
  const int index = local_rank >= 0 ? local_rank : rank;
  return "mlx5_" + std::to_string(index < 0 ? 0 : index % 8);
}

}  // namespace ncclfi::net
