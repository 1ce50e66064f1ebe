// SPDX-License-Identifier: Apache-2.0
// Whether a worker trains in a run folder right now, whoever started it: the engine holds an
// flock on <run>/.lock while it runs (engine/runtime/run_dir.h). The answer is read from
// /proc/locks, so nothing is locked here and a worker starting at the same moment is never
// turned away, and it is exact where a heartbeat is only recent.
#pragma once

#include <QString>

namespace ws {

// The PID holding <runDir>/.lock, or 0 when nobody does (or the system has no /proc/locks).
qint64 runLockHolder(const QString& runDir);

}  // namespace ws
