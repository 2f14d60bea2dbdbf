#include "child_signals.h"

#include <signal.h>

namespace ncclfi::cli {

void reset_signals_in_child() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  // SIGKILL and SIGSTOP cannot be changed, and glibc keeps two real-time signals for itself: sigaction
  // refuses those (EINVAL), which leaves them as they are.
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

void reset_signals_on_spawn(posix_spawnattr_t* attr) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
  short flags = 0;
  posix_spawnattr_getflags(attr, &flags);
  posix_spawnattr_setflags(attr, static_cast<short>(flags | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK));
}

}  // namespace ncclfi::cli
