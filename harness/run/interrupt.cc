#include "interrupt.h"

#include <signal.h>

#include <csignal>
#include <initializer_list>

namespace ncclfi::cli {
namespace {
volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_abort = 0;
extern "C" void on_interrupt(int sig) {
  g_signal = sig;
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

bool interrupted() {
  return g_signal != 0 || g_abort != 0;
}
void note_abort_request() {
  g_abort = 1;
}
bool abort_requested() {
  return g_abort != 0;
}
int interrupt_signal() {
  return g_signal;
}

}  // namespace ncclfi::cli
