// SPDX-License-Identifier: Apache-2.0
#include "app_resources.h"

#include <QApplication>
#include <QFile>

// Q_INIT_RESOURCE must be used outside any namespace.
static void initWanstudioResources() { Q_INIT_RESOURCE(wanstudio); }

namespace ws {

void initResources() {
  static const bool done = (initWanstudioResources(), true);
  (void)done;
}

QIcon appIcon() {
  initResources();
  // The PNG renders without the Qt SVG plugin; the SVG is the source (and the .desktop icon).
  QIcon icon(QStringLiteral(":/icons/wanstudio.png"));
  if (icon.isNull()) icon = QIcon(QStringLiteral(":/icons/wanstudio.svg"));
  return icon;
}

void applyStyle(QApplication& app) {
  initResources();
  app.setWindowIcon(appIcon());
  QFile qss(QStringLiteral(":/style.qss"));
  if (qss.open(QIODevice::ReadOnly)) app.setStyleSheet(QString::fromUtf8(qss.readAll()));
}

}  // namespace ws
