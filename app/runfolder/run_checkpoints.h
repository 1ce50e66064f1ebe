// SPDX-License-Identifier: Apache-2.0
// A run's checkpoints: directories named exactly `checkpoint-` followed by digits
// (docs/design/architecture.md "Run directory"); `.checkpoint-N.tmp`, `checkpoint-final` and files are not.
#pragma once

#include <QList>
#include <QString>

namespace ws {

QList<qint64> checkpointSteps(const QString& runDir);  // ascending
qint64 latestCheckpointStep(const QString& runDir);    // -1 when there is none

}  // namespace ws
