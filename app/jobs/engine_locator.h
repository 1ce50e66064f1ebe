// SPDX-License-Identifier: Apache-2.0
// Where the worker executable is: $WANSTUDIO_ENGINE, next to wanstudio (installed), or
// ../engine/ (the build tree), else plain "wanstudio-engine" from PATH.
#pragma once

#include <QString>

namespace ws {

QString engineExecutable();

}  // namespace ws
