// SPDX-License-Identifier: Apache-2.0
// wanstudio: the studio window, or `--batch RUN.yaml` without any display.
#include <QApplication>
#include <QCoreApplication>
#include <QFileInfo>
#include <QTimer>

#include <signal.h>

#include <cstdio>

#include "app_options.h"
#include "app_resources.h"
#include "batch_queue.h"
#include "jobs/engine_locator.h"
#include "jobs/preset_locator.h"
#include "jobs/unix_signal_notifier.h"
#include "main_window.h"
#include "pages/compare_page.h"
#include "pages/run_page.h"

namespace {

void setIdentity() {
  QCoreApplication::setOrganizationName(QStringLiteral("WanStudio"));
  QCoreApplication::setApplicationName(QStringLiteral("wanstudio"));
  QCoreApplication::setApplicationVersion(QStringLiteral(WANSTUDIO_VERSION));
}

int runHeadless(int argc, char** argv, const QStringList& raw) {
  QCoreApplication app(argc, argv);
  setIdentity();
  const ws::AppOptions o = ws::AppOptions::parse(raw);
  switch (o.mode) {
    case ws::AppOptions::Mode::Help: std::fputs(ws::AppOptions::helpText().toUtf8().constData(), stdout); return 0;
    case ws::AppOptions::Mode::Version: {
      // Where this studio finds its worker and presets (an install needs no environment).
      std::printf("wanstudio %s\n", WANSTUDIO_VERSION);
      const QString engine = ws::engineExecutable(), presets = ws::presetsDirectory();
      std::printf("engine: %s\npresets: %s\n", engine.isEmpty() ? "(not found)" : engine.toUtf8().constData(),
                  presets.isEmpty() ? "(not found)" : presets.toUtf8().constData());
      return 0;
    }
    case ws::AppOptions::Mode::Error: std::fprintf(stderr, "error: %s\n", o.error.toUtf8().constData()); return 1;
    default: break;
  }
  // A closed terminal or `| head` must not kill the supervisor: the worker keeps its run.
  ::signal(SIGPIPE, SIG_IGN);
  ws::BatchQueue runner(o.runYamls, o.workerArgs, o.effectiveHeartbeatTimeoutMs());
  ws::UnixSignalNotifier signals_({SIGINT, SIGTERM, SIGHUP});
  QObject::connect(&signals_, &ws::UnixSignalNotifier::received, &runner, &ws::BatchQueue::interrupt);
  QObject::connect(&runner, &ws::BatchQueue::done, &app, [&app](int code) { app.exit(code); });
  const int rc = runner.start();
  return rc >= 0 ? rc : app.exec();
}

}  // namespace

int main(int argc, char** argv) {
  QStringList raw;
  for (int i = 0; i < argc; ++i) raw << QString::fromLocal8Bit(argv[i]);
  if (ws::AppOptions::wantsNoDisplay(raw)) return runHeadless(argc, argv, raw);

  QApplication app(argc, argv);
  setIdentity();
  const ws::AppOptions o = ws::AppOptions::parse(app.arguments());  // Qt's own options removed
  if (o.mode == ws::AppOptions::Mode::Error) {
    std::fprintf(stderr, "error: %s\n", o.error.toUtf8().constData());
    return 1;
  }
  ws::applyStyle(app);
  if (!o.configsDir.isEmpty()) ws::setPresetsDirectory(o.configsDir);
  ws::MainWindow window(o.workspace, o.effectiveHeartbeatTimeoutMs());
  window.show();
  // Ctrl-C in the terminal that started us: cancel our workers and quit; again: kill them.
  ws::UnixSignalNotifier signals_({SIGINT, SIGTERM});
  int interrupts = 0;
  QObject::connect(&signals_, &ws::UnixSignalNotifier::received, &window,
                   [&window, &interrupts] { window.quitStoppingWorkers(++interrupts > 1); });
  if (!o.openRun.isEmpty()) window.openRun(QFileInfo(o.openRun).absoluteFilePath());
  if (!o.openDataset.isEmpty()) window.openDataset(QFileInfo(o.openDataset).absoluteFilePath(), false);
  if (!o.runTab.isEmpty() && !window.runPage()->showTab(o.runTab))
    std::fprintf(stderr, "warning: no run page tab named %s\n", o.runTab.toUtf8().constData());
  auto screenshot = [&window, &app, &o] {
    const bool ok = window.grab().save(o.screenshot, "PNG");
    if (!ok) std::fprintf(stderr, "error: cannot write %s\n", o.screenshot.toUtf8().constData());
    app.exit(ok ? 0 : 1);
  };
  if (!o.screenshot.isEmpty()) window.resize(o.screenshotSize);  // not the size saved last time
  if (!o.compareA.isEmpty()) {
    QString error;
    if (!window.compareCheckpoints(o.compareA, o.compareB, o.compareInput, &error)) {
      std::fprintf(stderr, "error: %s\n", error.toUtf8().constData());
      return 1;
    }
    if (!o.screenshot.isEmpty()) {
      // Once both renders and their chart are done (a failed render: at once).
      QObject::connect(window.comparePage(), &ws::ComparePage::metricsReady, &window,
                       [&] { QTimer::singleShot(o.screenshotDelayMs, &window, screenshot); });
      QObject::connect(window.comparePage(), &ws::ComparePage::renderFinished, &window, [&](bool ok) {
        if (!ok) QTimer::singleShot(0, &window, screenshot);
      });
    }
  } else if (!o.screenshot.isEmpty()) {
    // After loading: events read, charts drawn, first video frames decoded.
    QTimer::singleShot(o.screenshotDelayMs, &window, screenshot);
  }
  if (o.quitAfterMs >= 0) QTimer::singleShot(o.quitAfterMs, &window, &QWidget::close);
  return app.exec();
}
