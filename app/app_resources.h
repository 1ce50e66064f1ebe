// SPDX-License-Identifier: Apache-2.0
// The compiled-in resources (icons, style sheet) of the static wanstudio_app library.
#pragma once

#include <QIcon>

class QApplication;

namespace ws {

void initResources();  // idempotent; the resources of a static library need an explicit init
QIcon appIcon();
void applyStyle(QApplication& app);  // window icon + resources/style.qss

}  // namespace ws
