// SPDX-License-Identifier: Apache-2.0
// View ▸ Theme: Light, Dark and Follow the System switch the whole studio live, charts and
// status colours included, and the choice is kept; the status colours of both themes read on
// their background (WCAG contrast of at least 4.5:1).
#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

#include <qcustomplot.h>

#include "app_resources.h"
#include "jobs/preferences.h"
#include "main_window.h"
#include "pages/compare_page.h"
#include "theme.h"

using namespace ws;

namespace {

double luminance(const QColor& c) {
  auto lin = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * lin(c.redF()) + 0.7152 * lin(c.greenF()) + 0.0722 * lin(c.blueF());
}

double contrast(const QColor& a, const QColor& b) {
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QAction* themeAction(QWidget* w, const QString& key) {
  for (QAction* a : w->findChildren<QAction*>())
    if (a->isCheckable() && a->data().toString() == key) return a;
  return nullptr;
}

// The lightness of the middle of a widget as drawn.
int drawnLightness(QWidget* w) {
  const QImage image = w->grab().toImage();
  return image.pixelColor(image.width() / 2, image.height() / 2).lightness();
}

}  // namespace

class TestTheme : public QObject {
  Q_OBJECT
  QTemporaryDir ws_;

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("WanStudioTest"));
    QCoreApplication::setApplicationName(QStringLiteral("wanstudio-theme-test"));
    QSettings().clear();
    QVERIFY(ws_.isValid());
  }

  void switchesLiveAndIsKept() {
    applyStyle(*qApp);  // as main() does: the kept theme ("system" at first)
    const QPalette system = qApp->palette();
    MainWindow w(ws_.path());
    w.resize(1280, 720);
    w.show();
    w.showPage(w.comparePage());
    QCustomPlot* chart = w.comparePage()->chart();
    auto* status = new QLabel(QStringLiteral("failed"), &w);
    setTone(status, Tone::Error);

    QAction* dark = themeAction(&w, QStringLiteral("dark"));
    QVERIFY(dark && themeAction(&w, QStringLiteral("light")) && themeAction(&w, QStringLiteral("system")));
    QVERIFY(themeAction(&w, QStringLiteral("system"))->isChecked());
    dark->trigger();
    QVERIFY(isDarkPalette(qApp->palette()));
    QCOMPARE(prefs::theme(), QStringLiteral("dark"));
    QCoreApplication::processEvents();
    // The chart follows: drawn dark, its tick labels light.
    QTRY_VERIFY2(drawnLightness(chart) < 80, qPrintable(QString::number(drawnLightness(chart))));
    QVERIFY(chart->xAxis->tickLabelColor().lightness() > 160);
    // The status colour is the dark theme's, through the style sheet.
    QCOMPARE(status->palette().color(QPalette::WindowText), toneColor(Tone::Error, qApp->palette()));
    const QColor darkError = toneColor(Tone::Error, qApp->palette());

    themeAction(&w, QStringLiteral("light"))->trigger();
    QCoreApplication::processEvents();
    QVERIFY(!isDarkPalette(qApp->palette()));
    QTRY_VERIFY2(drawnLightness(chart) > 200, qPrintable(QString::number(drawnLightness(chart))));
    QVERIFY(chart->xAxis->tickLabelColor().lightness() < 100);
    QCOMPARE(status->palette().color(QPalette::WindowText), toneColor(Tone::Error, qApp->palette()));
    QVERIFY(status->palette().color(QPalette::WindowText) != darkError);

    // Kept for the next launch; Follow the System goes back to the platform's palette.
    QCOMPARE(prefs::theme(), QStringLiteral("light"));
    themeAction(&w, QStringLiteral("system"))->trigger();
    QCOMPARE(qApp->palette().color(QPalette::Window), system.color(QPalette::Window));
    QCOMPARE(prefs::theme(), QStringLiteral("system"));

    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {
      dark->trigger();
      QTest::qWait(300);
      w.grab().save(QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("dark-theme.png")));
      themeAction(&w, QStringLiteral("system"))->trigger();
    }
  }

  void statusColoursReadOnBothThemes() {
    for (const char* theme : {"light", "dark"}) {
      applyTheme(*qApp, QLatin1String(theme));
      const QPalette pal = qApp->palette();
      for (Tone t : {Tone::Running, Tone::Completed, Tone::Warning, Tone::Error}) {
        const double c = contrast(toneColor(t, pal), pal.color(QPalette::Base));
        QVERIFY2(
            c >= 4.5,
            qPrintable(QStringLiteral("%1 theme, tone %2: contrast %3").arg(QLatin1String(theme)).arg(int(t)).arg(c)));
        const double w = contrast(toneColor(t, pal), pal.color(QPalette::Window));
        QVERIFY2(w >= 4.5, qPrintable(QStringLiteral("%1 theme, tone %2 on the window: contrast %3")
                                          .arg(QLatin1String(theme))
                                          .arg(int(t))
                                          .arg(w)));
      }
    }
    applyTheme(*qApp, QStringLiteral("system"));
  }
};

QTEST_MAIN(TestTheme)
#include "test_theme.moc"
