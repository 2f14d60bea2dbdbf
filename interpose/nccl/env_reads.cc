#include "env_reads.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/auxv.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ncclfi/event_log.h"
#include "ncclfi/params.h"

extern char**
    environ;  // NOLINT(readability-redundant-declaration): unistd.h declares it only with _GNU_SOURCE

namespace ncclfi::preload {
namespace {

using GetenvFn = char* (*)(const char*);

constexpr size_t kMaxName = 64;    // NCCL's longest names have about 40 characters
constexpr size_t kMaxValue = 256;  // a longer value is kept cut, and the event says so
constexpr size_t kMaxReads = 512;  // NCCL 2.28.9 declares about 190 variables
constexpr size_t kMaxPath = 4096;

struct EnvRead {
  char name[kMaxName];
  char value[kMaxValue];
  bool set;  // false: NCCL found the variable unset
  bool cut;  // the value was longer than kMaxValue - 1 bytes
};

// Zero-initialised memory, valid before any constructor runs; every field below is under g_lock.
EnvRead g_reads[kMaxReads];
size_t g_count = 0;
size_t g_written = 0;       // entries already in an nccl_env_read event
char g_nccl_lib[kMaxPath];  // the first libnccl.so* that read: whose ncclGetVersion the event names
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

// Set while this thread holds g_lock or is inside the loader for us: a getenv reached from there (a
// signal handler, an allocator that reads its settings) is forwarded without being recorded, so the
// thread never waits on a lock it holds.
__attribute__((tls_model("initial-exec"))) thread_local bool t_busy = false;

class Locked {
 public:
  Locked() {
    t_busy = true;
    while (g_lock.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  ~Locked() {
    g_lock.clear(std::memory_order_release);
    t_busy = false;
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
};

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

// What glibc's getenv does, for the moments before dlsym has answered (or while it runs).
char* scan_environ(const char* name) {
  const size_t len = std::strlen(name);
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, name, len) == 0 && (*e)[len] == '=') return *e + len + 1;
  }
  return nullptr;
}

GetenvFn real_function(const char* symbol, std::atomic<void*>& slot) {
  void* p = slot.load(std::memory_order_acquire);
  if (p != nullptr || t_busy) return reinterpret_cast<GetenvFn>(p);
  t_busy = true;
  p = dlsym(RTLD_NEXT, symbol);
  t_busy = false;
  if (p != nullptr) slot.store(p, std::memory_order_release);
  return reinterpret_cast<GetenvFn>(p);
}

void keep(const char* name, const char* value, const char* object) {
  const size_t name_len = strnlen(name, kMaxName);
  if (name_len == kMaxName) return;  // no NCCL variable is that long
  Locked lock;
  for (size_t i = 0; i < g_count; ++i) {
    if (std::strcmp(g_reads[i].name, name) == 0) return;  // NCCL got this one before: its first value
  }
  if (g_count == kMaxReads) return;
  EnvRead& r = g_reads[g_count++];
  std::memcpy(r.name, name, name_len + 1);
  r.set = value != nullptr;
  const size_t value_len = value != nullptr ? strnlen(value, kMaxValue) : 0;
  r.cut = value_len == kMaxValue;
  const size_t copied = r.cut ? kMaxValue - 1 : value_len;
  if (copied > 0) std::memcpy(r.value, value, copied);
  r.value[copied] = '\0';
  // NCCL's own library, not a plugin of it (libnccl-net*.so, whose reads count as NCCL's too).
  if (g_nccl_lib[0] == '\0' && std::strncmp(base_name(object), "libnccl.so", 10) == 0 &&
      std::strlen(object) < kMaxPath) {
    std::strcpy(g_nccl_lib, object);  // NOLINT(clang-analyzer-security.insecureAPI.strcpy): length checked
  }
}

void record(const char* name, const char* value, const void* caller) {
  if (t_busy || std::strncmp(name, "NCCL_", 5) != 0) return;
  t_busy = true;
  Dl_info info{};
  const bool found = dladdr(caller, &info) != 0 && info.dli_fname != nullptr;
  t_busy = false;
  if (found && std::strstr(base_name(info.dli_fname), "libnccl") != nullptr)
    keep(name, value, info.dli_fname);
}

// "2.28.9" from ncclGetVersion's code (major*10000 + minor*100 + patch since 2.9, *1000 before).
std::string version_text(int code) {
  const int major = code / (code >= 10000 ? 10000 : 1000);
  const int rest = code % (code >= 10000 ? 10000 : 1000);
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}

// The version of the libnccl that read, asked of that very object (a process may hold two NCCLs).
// RTLD_NOLOAD: it is loaded already, nothing else can come in.
nlohmann::json nccl_version(const std::string& lib) {
  if (lib.empty()) return nullptr;
  void* handle = dlopen(lib.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  using VersionFn = int (*)(int*);
  auto fn = reinterpret_cast<VersionFn>(dlsym(handle, "ncclGetVersion"));
  int code = 0;
  const bool ok = fn != nullptr && fn(&code) == 0 && code > 0;
  dlclose(handle);
  return ok ? nlohmann::json(version_text(code)) : nlohmann::json();
}

// Leaked on purpose, and made from Params::from_env rather than Params::get: the exit hook writes after
// the static destructors ran.
const EventLog* env_event_log() {
  static const EventLog* log = []() -> const EventLog* {
    const Params params = Params::from_env();
    if (!params.record_nccl_env || params.events_path.empty()) return nullptr;
    return new EventLog(params.events_path, "preload", params.rank);
  }();
  return log;
}

}  // namespace

char* getenv_and_record(const char* name, const void* caller) {
  static std::atomic<void*> real{nullptr};
  const GetenvFn fn = real_function("getenv", real);
  char* value = fn != nullptr ? fn(name) : scan_environ(name);
  record(name, value, caller);
  return value;
}

char* secure_getenv_and_record(const char* name, const void* caller) {
  static std::atomic<void*> real{nullptr};
  const GetenvFn fn = real_function("secure_getenv", real);
  char* value = fn != nullptr ? fn(name) : (getauxval(AT_SECURE) != 0 ? nullptr : scan_environ(name));
  record(name, value, caller);
  return value;
}

void write_env_reads() {
  std::vector<EnvRead> fresh;
  std::string lib;
  {
    Locked lock;
    if (g_written == g_count) return;
    fresh.assign(g_reads + g_written, g_reads + g_count);
    g_written = g_count;
    lib = g_nccl_lib;
  }
  // Called from wrappers on their way out and from the exit hook: nothing may escape.
  try {
    const EventLog* log = env_event_log();
    if (log == nullptr) return;
    nlohmann::json read = nlohmann::json::object();
    nlohmann::json cut = nlohmann::json::array();
    for (const EnvRead& r : fresh) {
      read[r.name] = r.set ? nlohmann::json(r.value) : nlohmann::json();
      if (r.cut) cut.push_back(r.name);
    }
    nlohmann::json fields = {
        {"nccl_version", nccl_version(lib)}, {"nccl_lib", lib}, {"read", std::move(read)}};
    if (!cut.empty()) fields["cut"] = std::move(cut);
    log->write(ev::kNcclEnvRead, fields);
  } catch (const std::exception&) {
    // Out of memory at exit: the record is lost, the job is not disturbed.
  }
}

}  // namespace ncclfi::preload
