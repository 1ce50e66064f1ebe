// SPDX-License-Identifier: Apache-2.0
#include "app_resources.h"

#include <QApplication>
#include <QFile>
#include <QPalette>
#include <QStyle>
#include <QStyleFactory>

#include "jobs/preferences.h"
#include "theme.h"

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

namespace {

QPalette darkPalette() {
  const QColor window(0x24, 0x27, 0x2e), base(0x16, 0x1b, 0x22), text(0xe6, 0xed, 0xf3), mid(0x8b, 0x94, 0x9e);
  QPalette p;
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, mid);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, Qt::white);
  p.setColor(QPalette::Light, window.lighter(160));
  p.setColor(QPalette::Midlight, window.lighter(130));
  p.setColor(QPalette::Mid, mid);
  p.setColor(QPalette::Dark, base.darker(130));
  p.setColor(QPalette::Shadow, Qt::black);
  p.setColor(QPalette::Highlight, QColor(0x1f, 0x6f, 0xeb));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Link, QColor(0x58, 0xa6, 0xff));
  for (QPalette::ColorRole r : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, r, mid.darker(140));
  return p;
}

}  // namespace

void applyTheme(QApplication& app, const QString& theme) {
  // The platform's own look, kept from before the first change, is what "system" goes back to.
  static const QString systemStyle = app.style()->name();
  static const QPalette systemPalette = app.palette();
  if (theme == QLatin1String("dark") || theme == QLatin1String("light")) {
    if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) app.setStyle(fusion);
    app.setPalette(theme == QLatin1String("dark") ? darkPalette() : app.style()->standardPalette());
  } else {
    if (app.style()->name() != systemStyle)
      if (QStyle* s = QStyleFactory::create(systemStyle)) app.setStyle(s);
    app.setPalette(systemPalette);
  }
  initResources();
  QFile qss(QStringLiteral(":/style.qss"));
  if (!qss.open(QIODevice::ReadOnly)) return;
  QString sheet = QString::fromUtf8(qss.readAll());
  const QPalette pal = app.palette();
  for (const auto& [name, tone] : {std::pair{"@running@", Tone::Running}, std::pair{"@completed@", Tone::Completed},
                                   std::pair{"@warning@", Tone::Warning}, std::pair{"@error@", Tone::Error}})
    sheet.replace(QLatin1String(name), toneColor(tone, pal).name());
  app.setStyleSheet(sheet);
}

void applyStyle(QApplication& app) {
  initResources();
  app.setWindowIcon(appIcon());
  applyTheme(app, prefs::theme());
}

}  // namespace ws
