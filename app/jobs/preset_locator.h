// SPDX-License-Identifier: Apache-2.0
// Where the YAML presets (configs/) are: --configs DIR, $WANSTUDIO_CONFIGS, the installed
// share/wanstudio/configs, or the source tree's configs/ next to a build directory.
#pragma once

#include <QString>
#include <QStringList>

namespace ws {

void setPresetsDirectory(const QString& dir);  // the --configs option; "" = search
QString presetsDirectory();                    // "" when none is found
// Run YAMLs under `dir` (recursively) whose `job:` is `job`, sorted by path.
QStringList presetFiles(const QString& dir, const QString& job);

}  // namespace ws
