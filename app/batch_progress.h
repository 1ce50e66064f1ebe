// SPDX-License-Identifier: Apache-2.0
// What `wanstudio --batch` prints. On a terminal: one progress line (step/total, bar, loss,
// clips/s, ETA) redrawn in place, cleared before any other line and drawn again after it.
// Elsewhere (a pipe, a log file): plain lines only, one per step.
#pragma once

#include <QString>

#include <cstdio>

#include "runfolder/run_events.h"

namespace ws {

class BatchProgress {
 public:
  // live: redraw a progress line on `out` (a terminal); otherwise print plain lines.
  BatchProgress(std::FILE* out, bool live);

  bool isLive() const { return live_; }
  // A step: redraws the line when live, else prints it as a plain line with `plainText`.
  void step(const RunEvents::StepPoint& p, qint64 maxSteps, const QString& plainText);
  // Any other line, to `f` (stdout or stderr): the progress line makes way for it.
  void print(std::FILE* f, const QString& line);
  void finish();  // the last progress line stays on screen as an ordinary line

  // "step 12/40 [#####.......]  30%  loss 0.1234  2.1 clips/s  eta 1m05s", cut to `columns`.
  static QString render(const RunEvents::StepPoint& p, qint64 maxSteps, int columns);
  static int terminalColumns(std::FILE* f);  // 80 when unknown

 private:
  void clearLine();
  void draw();

  std::FILE* out_;
  bool live_;
  QString current_;  // the progress line on screen, "" when none
};

}  // namespace ws
