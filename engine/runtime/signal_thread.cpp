// SPDX-License-Identifier: Apache-2.0
#include "runtime/signal_thread.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <initializer_list>
#include <thread>

namespace ws::runtime {
namespace {

sigset_t routed_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGUSR1}) sigaddset(&set, s);
  return set;
}

// What the kernel would do with `info` had the signal not been blocked.
void dispatch(const siginfo_t& info) {
  const int sig = info.si_signo;
  struct sigaction now {};
  if (sigaction(sig, nullptr, &now) != 0) return;
  if (now.sa_flags & SA_SIGINFO) {
    siginfo_t copy = info;
    now.sa_sigaction(sig, &copy, nullptr);
  } else if (now.sa_handler == SIG_DFL) {
    die_by_signal(sig);  // all three end the process by default
  } else if (now.sa_handler != SIG_IGN) {
    now.sa_handler(sig);
  }
}

}  // namespace

void route_signals_to_one_thread() {
  static std::atomic<bool> started{false};
  if (started.exchange(true)) return;
  const sigset_t set = routed_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      siginfo_t info{};
      if (sigwaitinfo(&set, &info) > 0) dispatch(info);
    }
  }).detach();
}

void die_by_signal(int sig) {
  signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  // raise() sends to this thread: unblocked here, the default action ends the whole process.
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(sig);
  _exit(128 + sig);  // a signal whose default is not to end the process
}

void unblock_routed_signals() {
  const sigset_t set = routed_set();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace ws::runtime
