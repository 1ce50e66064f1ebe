// SPDX-License-Identifier: Apache-2.0
#include "runfolder/run_checkpoints.h"

#include <QDir>

#include <algorithm>

#include "contract/run_layout.h"

namespace ws {

QList<qint64> checkpointSteps(const QString& runDir) {
  QList<qint64> steps;
  if (runDir.isEmpty()) return steps;
  const QStringList names = QDir(runDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
  for (const QString& name : names) {
    int64_t step = 0;
    if (contract::parse_checkpoint_name(name.toStdString(), &step)) steps << step;
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

qint64 latestCheckpointStep(const QString& runDir) {
  const QList<qint64> steps = checkpointSteps(runDir);
  return steps.isEmpty() ? -1 : steps.last();
}

}  // namespace ws
