// SPDX-License-Identifier: Apache-2.0
// `wanstudio --batch A.yaml B.yaml ... [flags]`: the runs one after another, each through its
// own BatchRunner (the same output as a single --batch), then one summary line per run. A failed
// run does not stop the queue; a cancel (Ctrl-C) does, and the runs after it are not started.
// Exit code: 0 when every run completed, 130 when the queue was cancelled, else 1.
#pragma once

#include <QObject>
#include <QStringList>
#include <vector>

namespace ws {

class BatchRunner;

class BatchQueue : public QObject {
  Q_OBJECT
 public:
  BatchQueue(const QStringList& runYamls, const QStringList& workerArgs, int heartbeatTimeoutMs,
             QObject* parent = nullptr);

  // Starts the first run. Returns -1 while runs are going (done() brings the exit code), or the
  // exit code at once when no run could start.
  int start();
  // The first interrupt cancels the current run and the queue; the second kills the worker.
  void interrupt(int signo);

 Q_SIGNALS:
  void done(int exitCode);

 private:
  // Starts runs until one is running (true) or none is left (false).
  bool startNext();
  void finishRun(int exitCode);
  int summarize();

  QStringList runYamls_;
  QStringList workerArgs_;
  int heartbeatMs_;
  int next_ = 0;
  bool cancelled_ = false;
  BatchRunner* current_ = nullptr;
  std::vector<int> codes_;  // per started run: 0 / 1 / 130
  QStringList outcomes_;    // per started run
};

}  // namespace ws
