// SPDX-License-Identifier: Apache-2.0
// The state a run is shown with, derived from its events and from whether a live worker owns it.
#pragma once

#include <QString>

#include <optional>

namespace ws {

struct RunSummary;

enum class RunState { NotStarted, Running, Completed, Cancelled, Failed, Interrupted };

struct RunStatus {
  RunState state = RunState::NotStarted;
  QString reason;          // why it failed / was interrupted; empty otherwise
  bool elsewhere = false;  // running, but not by a worker this app supervises

  static QString stateName(RunState s);  // "running", "failed", ... (also the QSS property)
  QString label() const;                 // "failed: no heartbeat for 60 s"
  bool operator==(const RunStatus& o) const {
    return state == o.state && reason == o.reason && elsewhere == o.elsewhere;
  }
};

// Rules, in order: a live supervised worker -> running; no events -> not started; a `finished` event of the current
// attempt -> its status; the outcome this session's supervisor saw -> that; events newer than
// `staleAfterS` -> running elsewhere (another wanstudio or a terminal is writing them);
// older events without `finished` -> interrupted: nobody is running it any more.
RunStatus deriveRunStatus(const RunSummary& summary, bool liveJob, const std::optional<RunStatus>& sessionOutcome,
                          double nowUnix, double staleAfterS);

}  // namespace ws
