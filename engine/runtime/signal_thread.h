// SPDX-License-Identifier: Apache-2.0
// Signals are taken by one thread of their own, never by a thread that computes.
//
// A handler runs on whichever thread the kernel picks, in the middle of what that thread was
// doing. Debian's oneDNN 2.7 does not survive that: a SIGTERM or SIGUSR1 that lands inside its
// sgemm corrupts the heap (measured: a render sent SIGUSR1 every 5 ms aborts within a second with
// "corrupted size vs. prev_size"; with LibTorch's own GEMM it takes 30 000 and finishes). So the
// worker blocks SIGINT, SIGTERM and SIGUSR1 before it starts any thread (every later thread
// inherits the mask) and one thread waits for them and runs the handler installed for each with
// sigaction, as the kernel would have: the dispositions keep their meaning (SIG_DFL still ends
// the process by that signal, SIG_IGN still ignores it).
#pragma once

namespace ws::runtime {

// Once, first thing in main (and from install_cancel_handlers, for programs without our main).
void route_signals_to_one_thread();
// Ends the process by `sig` with its default action, as if it had not been blocked (a launcher
// that ends the way its rank 0 did).
[[noreturn]] void die_by_signal(int sig);
// For a child between fork and exec: the signals a program expects to receive, unblocked.
void unblock_routed_signals();

}  // namespace ws::runtime
