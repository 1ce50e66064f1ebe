// SPDX-License-Identifier: Apache-2.0
// The compiled-in resources (icons, style sheet) of the static wanstudio_app library.
#pragma once

#include <QIcon>

class QApplication;

namespace ws {

void initResources();  // idempotent; the resources of a static library need an explicit init
QIcon appIcon();
// Window icon, the theme kept in the preferences and resources/style.qss in its colours.
void applyStyle(QApplication& app);
// "system": the platform's style and palette as they were at start; "light" / "dark": Fusion
// with a light or dark palette. The style sheet's status colours follow. Unknown = "system".
void applyTheme(QApplication& app, const QString& theme);

}  // namespace ws
