// SPDX-License-Identifier: Apache-2.0
#include "jobs/preferences.h"

#include <QSettings>

namespace ws::prefs {

QString enginePath() { return QSettings().value(QStringLiteral("preferences/enginePath")).toString(); }
void setEnginePath(const QString& path) { QSettings().setValue(QStringLiteral("preferences/enginePath"), path); }
QString presetsDir() { return QSettings().value(QStringLiteral("preferences/presetsDir")).toString(); }
void setPresetsDir(const QString& dir) { QSettings().setValue(QStringLiteral("preferences/presetsDir"), dir); }
int heartbeatTimeoutS() { return QSettings().value(QStringLiteral("preferences/heartbeatTimeoutS"), -1).toInt(); }
void setHeartbeatTimeoutS(int seconds) {
  QSettings().setValue(QStringLiteral("preferences/heartbeatTimeoutS"), seconds);
}

QString theme() {
  const QString t = QSettings().value(QStringLiteral("preferences/theme")).toString();
  return t == QLatin1String("light") || t == QLatin1String("dark") ? t : QStringLiteral("system");
}
void setTheme(const QString& theme) { QSettings().setValue(QStringLiteral("preferences/theme"), theme); }

}  // namespace ws::prefs
