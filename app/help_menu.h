// SPDX-License-Identifier: Apache-2.0
// The Help menu: Getting Started (F1, the start page), Keyboard Shortcuts (every menu shortcut and
// the player's and dataset page's keys), Documentation (the README and design notes shipped with
// the program, read offline; the path is shown when no viewer opens) and About.
#pragma once

#include <QString>
#include <QStringList>

#include <functional>

class QMainWindow;

namespace ws {

void addHelpMenu(QMainWindow* window, const std::function<void()>& gettingStarted);
// Where the shipped documentation is: the installed share/doc/wanstudio, else the source tree's
// (a build directory); "" when neither holds README.md.
QString documentationDir();
// "Ctrl+N\tNew Run…" lines: the window's menu shortcuts, then the keys that are not in a menu.
QStringList shortcutLines(QMainWindow* window);

}  // namespace ws
