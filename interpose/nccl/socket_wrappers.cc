// connect, exported so that a rank's connections to its bootstrap reach bootstrap_connect.h first. Every
// other connection, and every one while no plan is loaded, goes to the C library's own unchanged.
#include <sys/socket.h>

#include "bootstrap_connect.h"
#include "preload_state.h"
#include "real_symbol.h"

extern "C" NCCLFI_EXPORT int connect(int fd, const struct sockaddr* addr, socklen_t len) {
  static ncclfi::preload::RealSymbol<ncclfi::preload::ConnectFn> real("connect");
  const auto fn = real.get();
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  return ncclfi::preload::connect_or_refuse(fd, addr, len, fn);
}
