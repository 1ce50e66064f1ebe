// SPDX-License-Identifier: Apache-2.0
#include "runtime/cancel.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <string>
#include <thread>

#include "core/interrupt.h"
#include "runtime/signal_thread.h"

namespace ws::runtime {
namespace {
std::atomic<int> g_cancel{0};
std::atomic<bool> g_save{false};

// Runs on the signal thread (runtime/signal_thread.h), or on any thread in a program that started
// threads before it asked for one.
void on_signal(int) {
  // A second signal means "now": the last complete checkpoint stays valid.
  if (g_cancel.fetch_add(1) >= 1) _exit(130);
}
}  // namespace

void install_cancel_handlers(bool watch_stdin) {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  route_signals_to_one_thread();
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // SIGUSR1 is `save` for whoever did not start the worker (no stdin to write to): the studio
  // that reopens a run training without it, a shell (`kill -USR1 PID`, the PID in <run>/.lock).
  struct sigaction save {};
  save.sa_handler = [](int) { g_save.store(true); };
  sigemptyset(&save.sa_mask);
  save.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &save, nullptr);
  if (watch_stdin) {
    std::thread([] {
      std::string line;
      while (std::getline(std::cin, line)) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (line == "cancel") request_cancel();
        if (line == "save") request_save();
      }
      // EOF: a closed pipe or </dev/null is normal, not a cancel.
    }).detach();
  }
}

bool cancel_requested() { return g_cancel.load() > 0; }
void stop_inside_computations() { set_interrupt_check(&cancel_requested); }
void request_cancel() {
  if (g_cancel.load() == 0) g_cancel.store(1);
}
void reset_cancel() {
  g_cancel.store(0);
  g_save.store(false);
}

void request_save() { g_save.store(true); }
bool take_save_request() { return g_save.exchange(false); }

}  // namespace ws::runtime
