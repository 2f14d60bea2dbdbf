// getenv and secure_getenv, exported so that libnccl's lookups reach env_reads.h first. Each forwards
// to the C library's own and returns its answer unchanged; the return address tells who asked.
#include <cstdlib>

#include "env_reads.h"
#include "preload_state.h"

extern "C" NCCLFI_EXPORT char* getenv(const char* name) noexcept {
  return ncclfi::preload::getenv_and_record(name, __builtin_return_address(0));
}

extern "C" NCCLFI_EXPORT char* secure_getenv(const char* name) noexcept {
  return ncclfi::preload::secure_getenv_and_record(name, __builtin_return_address(0));
}

// At a normal exit: the reads made since the last communicator call.
__attribute__((destructor)) static void ncclfi_write_env_reads_at_exit() {
  ncclfi::preload::write_env_reads();
}
