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

}  // namespace ws::prefs
