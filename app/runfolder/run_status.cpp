// SPDX-License-Identifier: Apache-2.0
#include "runfolder/run_status.h"

#include "runfolder/run_summary.h"

namespace ws {

QString RunStatus::stateName(RunState s) {
  switch (s) {
    case RunState::NotStarted: return QStringLiteral("not started");
    case RunState::Running: return QStringLiteral("running");
    case RunState::Completed: return QStringLiteral("completed");
    case RunState::Cancelled: return QStringLiteral("cancelled");
    case RunState::Failed: return QStringLiteral("failed");
    case RunState::Interrupted: return QStringLiteral("interrupted");
  }
  return {};
}

QString RunStatus::label() const {
  QString s = stateName(state);
  if (elsewhere) s += QStringLiteral(" (elsewhere)");
  if (!reason.isEmpty()) s += QStringLiteral(": ") + reason;
  return s;
}

RunStatus deriveRunStatus(const RunSummary& summary, bool liveJob, const std::optional<RunStatus>& sessionOutcome,
                          double nowUnix, double staleAfterS) {
  if (liveJob) return {RunState::Running, {}, false};
  if (summary.finished) {
    if (summary.finishedStatus == QLatin1String("completed")) return {RunState::Completed, {}, false};
    // A worker stops itself on Cancel without an error; an `error` before `cancelled` is the
    // supervisor's account of a kill ("worker killed on request"), which the label keeps.
    if (summary.finishedStatus == QLatin1String("cancelled"))
      return {RunState::Cancelled, summary.errors.isEmpty() ? QString() : summary.errors.last(), false};
    QString reason = summary.errors.isEmpty() ? QString() : summary.errors.join(QStringLiteral("; "));
    if (summary.finishedStatus != QLatin1String("failed"))
      reason = QStringLiteral("unknown status \"%1\"").arg(summary.finishedStatus);
    return {RunState::Failed, reason, false};
  }
  // Our own supervisor saw the worker end: it knows the exit code or signal.
  if (sessionOutcome) return *sessionOutcome;
  // A prepared run.yaml without events: nothing ran yet.
  if (!summary.hasEvents()) return {RunState::NotStarted, {}, false};
  // The worker heartbeats every 5 s, so fresh events mean someone is still running it.
  if (nowUnix - summary.lastTime < staleAfterS) return {RunState::Running, {}, true};
  return {RunState::Interrupted, QStringLiteral("worker gone (no finished event)"), false};
}

}  // namespace ws
