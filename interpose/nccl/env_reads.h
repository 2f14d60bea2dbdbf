// What libnccl read from the environment: every NCCL_* variable it looked up through getenv (NCCL's
// ncclGetEnv and its NCCL_PARAM values end there) and the value it got, so the harness can name the
// settings NCCL never read (NCCL_TIMEOUT does not exist; NCCL_IB_TIMOUT is a typo).
//
// getenv is called from the first instructions of a process, before any constructor of ours: the
// record is a fixed table in zero-initialised memory guarded by a spinlock, nothing is allocated and
// nothing but the loader (dladdr) is called until the record is written.
#pragma once

namespace ncclfi::preload {

// The real getenv/secure_getenv (dlsym RTLD_NEXT, resolved once), then the record: when `name` starts
// with NCCL_ and `caller` (the return address of our getenv) lies in an object whose file name
// contains "libnccl" (the system's libnccl.so.2, PyTorch's torch/lib or nvidia/nccl/lib one), the
// first lookup of each name is kept with its value or as unset.
char* getenv_and_record(const char* name, const void* caller);
char* secure_getenv_and_record(const char* name, const void* caller);

// Writes the lookups not written yet as one nccl_env_read event: the NCCL version (ncclGetVersion of
// the libnccl that read), its file, and {name: value or null}. Only with NCCLFI_RECORD_NCCL_ENV=1 and
// NCCLFI_EVENTS; else nothing. Called when a communicator was created or torn down and at exit, so a
// rank killed later still left what NCCL read during its initialisation.
void write_env_reads();

// Writes the reads when the wrapper that holds it returns (constructors and teardown calls).
struct WriteEnvReadsOnReturn {
  WriteEnvReadsOnReturn() = default;
  WriteEnvReadsOnReturn(const WriteEnvReadsOnReturn&) = delete;
  WriteEnvReadsOnReturn& operator=(const WriteEnvReadsOnReturn&) = delete;
  ~WriteEnvReadsOnReturn() { write_env_reads(); }
};

}  // namespace ncclfi::preload
