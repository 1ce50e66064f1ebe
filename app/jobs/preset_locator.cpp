// SPDX-License-Identifier: Apache-2.0
#include "jobs/preset_locator.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>

#include <algorithm>

#include "config/run_config.h"
#include "jobs/preferences.h"

namespace ws {
namespace {

QString& overrideDir() {
  static QString dir;
  return dir;
}

}  // namespace

void setPresetsDirectory(const QString& dir) { overrideDir() = dir; }

QString presetsDirectory() {
  if (!overrideDir().isEmpty()) return overrideDir();
  const QString env = qEnvironmentVariable("WANSTUDIO_CONFIGS");
  if (!env.isEmpty()) return env;
  if (const QString chosen = prefs::presetsDir(); !chosen.isEmpty()) return chosen;  // Preferences
  const QDir appDir(QCoreApplication::applicationDirPath());
  QStringList candidates{appDir.filePath(QStringLiteral("../share/wanstudio/configs")),
                         appDir.filePath(QStringLiteral("../configs")),
                         appDir.filePath(QStringLiteral("../../configs"))};
#ifdef WANSTUDIO_SOURCE_DIR
  candidates << QStringLiteral(WANSTUDIO_SOURCE_DIR "/configs");  // a build directory elsewhere
#endif
  for (const QString& c : candidates)
    if (QFileInfo(c).isDir()) return QDir::cleanPath(QFileInfo(c).absoluteFilePath());
  return {};
}

QStringList presetFiles(const QString& dir, const QString& job) {
  QStringList out;
  if (dir.isEmpty()) return out;
  QDirIterator it(dir, {QStringLiteral("*.yaml"), QStringLiteral("*.yml")}, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    // Model configs (VideoX-Fun YAMLs) have no `job:`; only run configs are presets.
    const auto cfg = RunConfig::load(path, nullptr);
    if (cfg && cfg->job == job) out << path;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace ws
