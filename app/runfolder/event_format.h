// SPDX-License-Identifier: Apache-2.0
// One human-readable line per event: the GUI's event log and `wanstudio --batch` share it.
#pragma once

#include <QString>

#include "runfolder/run_event.h"
#include "runfolder/run_events.h"

namespace ws {

// Ordered so a "minimum level" filter works; steps sit below debug so they can be hidden.
enum class LogLevel { Step = 0, Debug, Info, Warning, Error };

LogLevel eventLevel(const RunEvent& ev);
QString formatEvent(const RunEvent& ev, qint64 maxSteps = 0);  // maxSteps: for "step 5/40"
QString formatStep(const RunEvents::StepPoint& p, qint64 maxSteps);
QString formatDuration(double seconds);  // "1h02m", "3m05s", "12s"
QString formatBytes(double bytes);       // "2.1 GB"

}  // namespace ws
