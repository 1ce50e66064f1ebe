// SPDX-License-Identifier: Apache-2.0
// `wanstudio --batch RUN.yaml [flags]`: runs the YAML's job in a worker without a display,
// prints its events (a progress line on a terminal, plain lines otherwise), the final state
// and the run folder, and exits with the run's final state (0 / 1 / 130).
#pragma once

#include <QObject>
#include <QSet>
#include <QStringList>

#include "batch_progress.h"
#include "jobs/job_result.h"
#include "runfolder/run_event.h"

namespace ws {

class WorkerJob;

class BatchRunner : public QObject {
  Q_OBJECT
 public:
  // Progress is drawn in place when stdout is a terminal.
  BatchRunner(const QString& runYaml, const QStringList& workerArgs, int heartbeatTimeoutMs, QObject* parent = nullptr);

  // Starts the worker. Returns -1 while it runs (done() brings the exit code), or the exit
  // code at once when the YAML cannot be used.
  int start();
  // SIGINT/SIGTERM/SIGHUP: the first cancels after the current step, the second kills.
  void interrupt(int signo);
  // How the run ended, in a few words for a summary ("completed at step 5, /runs/a"); empty
  // until it has.
  QString outcome() const { return outcome_; }

 Q_SIGNALS:
  void done(int exitCode);

 private:
  void onEvent(const RunEvent& ev);
  void onEnded(const JobResult& result);
  void print(std::FILE* f, const QString& line) { progress_.print(f, line); }
  void onStderrLine(const QString& line);
  // The worker says each warning and error twice (a `log`/`error` event and its human log on
  // stderr); whichever arrives first is printed. True the first time `message` is seen.
  bool firstTime(const QString& message);

  QString runYaml_;
  QStringList workerArgs_;
  int heartbeatMs_;
  WorkerJob* job_ = nullptr;
  int interrupts_ = 0;
  qint64 maxSteps_ = 0;
  BatchProgress progress_;
  QSet<QString> said_;
  QString outcome_;
};

}  // namespace ws
