// SPDX-License-Identifier: Apache-2.0
// Cooperative cancellation [contract]: SIGTERM, SIGINT or a `cancel` line on stdin ask the
// worker to finish the current step, checkpoint and exit 130; a second signal exits at once.
// End of file on stdin is not a cancel. A `save` line asks for a checkpoint after the current
// step without stopping.
#pragma once

namespace ws::runtime {

// Installs the signal handlers, ignores SIGPIPE and starts the stdin watcher (once).
void install_cancel_handlers(bool watch_stdin = true);
bool cancel_requested();
// Also stop inside a long computation (ws::interruption_point, core/interrupt.h) once a cancel is
// asked for: for verbs whose work is one long pass with nothing to save halfway (sample, the VAE
// verbs), so that a stop takes effect within seconds. Training keeps the step-end contract.
void stop_inside_computations();
void request_cancel();
// Tests and verbs that run several jobs in one process start clean.
void reset_cancel();
// Save now: set by a `save` line, taken (and cleared) by the training loop after a step.
void request_save();
bool take_save_request();

}  // namespace ws::runtime
