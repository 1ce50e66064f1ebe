// SPDX-License-Identifier: Apache-2.0
// What the Preferences dialog keeps (QSettings): the worker executable, the presets folder and
// the heartbeat timeout (and the theme, chosen in View ▸ Theme). Each is the fallback after the command line and the
// environment, which win for a single launch: --configs / $WANSTUDIO_CONFIGS, $WANSTUDIO_ENGINE,
// --heartbeat-timeout / $WANSTUDIO_HEARTBEAT_TIMEOUT.
#pragma once

#include <QString>

namespace ws::prefs {

QString enginePath();  // "" = find it beside the studio
void setEnginePath(const QString& path);
QString presetsDir();  // "" = find them beside the studio
void setPresetsDir(const QString& dir);
int heartbeatTimeoutS();  // -1 = the built-in default
void setHeartbeatTimeoutS(int seconds);
QString theme();  // "system" (the default) | "light" | "dark"
void setTheme(const QString& theme);

}  // namespace ws::prefs
