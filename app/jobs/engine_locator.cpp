// SPDX-License-Identifier: Apache-2.0
#include "jobs/engine_locator.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include "jobs/preferences.h"

namespace ws {

QString engineExecutable() {
  const QString env = qEnvironmentVariable("WANSTUDIO_ENGINE");
  if (!env.isEmpty()) return env;
  if (const QString chosen = prefs::enginePath(); !chosen.isEmpty()) return chosen;  // Preferences
  const QString name = QStringLiteral("wanstudio-engine");
  const QDir appDir(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {appDir.filePath(name), appDir.filePath(QStringLiteral("../engine/") + name)}) {
    const QFileInfo fi(candidate);
    if (fi.isFile() && fi.isExecutable()) return QDir::cleanPath(fi.absoluteFilePath());
  }
  return name;
}

}  // namespace ws
