// SPDX-License-Identifier: Apache-2.0
// How a supervised worker ended: the final state a run is shown with.
#pragma once

#include <QMetaType>
#include <QString>

#include "runfolder/run_status.h"

namespace ws {

struct JobResult {
  RunState state = RunState::Failed;  // Completed, Cancelled or Failed
  QString reason;                     // for Failed (and a killed cancel): why, in one line
  int exitCode = -1;                  // when it exited normally
  int signal = 0;                     // when a signal ended it
  bool sawFinished = false;           // the worker emitted `finished`
  qint64 step = -1;                   // from `finished`, else the last `step` seen

  RunStatus status() const { return {state, reason, false}; }
  // The contract's exit codes: 0 completed, 130 cancelled, 1 otherwise.
  int exitStatus() const { return state == RunState::Completed ? 0 : state == RunState::Cancelled ? 130 : 1; }
};

}  // namespace ws

Q_DECLARE_METATYPE(ws::JobResult)
