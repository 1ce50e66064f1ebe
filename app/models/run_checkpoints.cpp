#include "models/run_checkpoints.h"

#include <QDir>

#include <algorithm>

namespace ws {

QList<qint64> checkpointSteps(const QString& runDir) {
  QList<qint64> steps;
  if (runDir.isEmpty()) return steps;
  const QString prefix = QStringLiteral("checkpoint-");
  const QStringList names = QDir(runDir).entryList({prefix + QLatin1Char('*')}, QDir::Dirs | QDir::NoDotAndDotDot);
  for (const QString& name : names) {
    const QStringView digits = QStringView(name).mid(prefix.size());
    if (digits.isEmpty() || !std::all_of(digits.begin(), digits.end(), [](QChar c) { return c.isDigit() && c.unicode() < 128; }))
      continue;
    bool ok = false;
    const qint64 step = digits.toLongLong(&ok);
    if (ok) steps << step;
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

qint64 latestCheckpointStep(const QString& runDir) {
  const QList<qint64> steps = checkpointSteps(runDir);
  return steps.isEmpty() ? -1 : steps.last();
}

}  // namespace ws
