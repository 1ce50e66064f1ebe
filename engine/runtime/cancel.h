// Cooperative cancellation [contract]: SIGTERM, SIGINT or a `cancel` line on stdin ask the
// worker to finish the current step, checkpoint and exit 130; a second signal exits at once.
// End of file on stdin is not a cancel.
#pragma once

namespace ws::runtime {

// Installs the signal handlers, ignores SIGPIPE and starts the stdin watcher (once).
void install_cancel_handlers(bool watch_stdin = true);
bool cancel_requested();
void request_cancel();
// Tests and verbs that run several jobs in one process start clean.
void reset_cancel();

}  // namespace ws::runtime
