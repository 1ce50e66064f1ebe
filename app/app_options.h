// SPDX-License-Identifier: Apache-2.0
// The command line of `wanstudio`. Parsed without a QApplication so --help, --version and
// --batch never need a display.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

namespace ws {

struct AppOptions {
  enum class Mode { Gui, Batch, Help, Version, Error };
  Mode mode = Mode::Gui;
  QString error;           // Mode::Error: one line
  QString runYaml;         // Mode::Batch: the first run file
  QStringList runYamls;    // Mode::Batch: every run file, run one after another
  QStringList workerArgs;  // Mode::Batch: everything after the run files goes to each worker as is
  QString workspace;       // Mode::Gui: folder whose run directories are listed
  QString configsDir;      // Mode::Gui: the presets folder (default: found by presetsDirectory())
  int quitAfterMs = -1;    // Mode::Gui: smoke tests quit on their own
  QString openRun;         // Mode::Gui: a run folder to show at start
  QString openDataset;     // Mode::Gui: a metadata.json to show on the Dataset page at start
  QString runTab;          // Mode::Gui: the run page tab to show ("events", "validation", ...)
  // Mode::Gui: two checkpoint folders (RUN/checkpoint-N) rendered on the Compare page at start,
  // with a prompt (expert runs) or a clip (upsampler runs).
  QString compareA, compareB, compareInput;
  QString screenshot;  // Mode::Gui: render the window to this PNG once loaded, then quit
  QSize screenshotSize{1320, 820};
  int screenshotDelayMs = 2500;
  int heartbeatTimeoutMs = -1;  // -1: $WANSTUDIO_HEARTBEAT_TIMEOUT (seconds) or 60 s

  static AppOptions parse(const QStringList& args);     // args[0] is the program
  static bool wantsNoDisplay(const QStringList& args);  // --help, --version or --batch
  static QString helpText();
  // The watchdog to use: the option, else $WANSTUDIO_HEARTBEAT_TIMEOUT, else 60 s.
  int effectiveHeartbeatTimeoutMs() const;
};

}  // namespace ws
