// api bootstrap_unreachable: libc's connect(), seen by the preload before libc, fails where a rank
// connects to its job's bootstrap and a fault fires there. Two points: NCCL's bootstrap root (the address
// in the unique id the rank creates its communicator with, or NCCL_COMM_ID) and the job's rendezvous
// (MASTER_ADDR:MASTER_PORT). Every other connection goes straight to libc.
#pragma once

#include <sys/socket.h>

namespace ncclfi::preload {

// The unique id a rank creates a communicator with: NCCL's bootstrap handle, a magic then the root's
// socket address (src/include/bootstrap.h, ncclBootstrapHandle, NCCL 2.12 to 2.30).
void note_nccl_bootstrap_root(const void* unique_id, size_t size);

// What the exported connect() does: the real connect, or -1 with errno when a fault fires.
using ConnectFn = int (*)(int, const sockaddr*, socklen_t);
int connect_or_refuse(int fd, const sockaddr* addr, socklen_t len, ConnectFn real);

}  // namespace ncclfi::preload
