// SPDX-License-Identifier: Apache-2.0
// Supervises one `wanstudio-engine` process (cf. Shotcut's AbstractJob): starts it in its own
// process group, parses stdout as the event stream and keeps stderr as log text, cancels and
// kills it, watches its heartbeat, and turns however it ended into one JobResult.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

#include "jobs/job_result.h"
#include "runfolder/run_event.h"

namespace ws {

class WorkerJob : public QObject {
  Q_OBJECT
 public:
  enum class Phase { NotStarted, Running, Ended };

  static constexpr int kDefaultHeartbeatTimeoutMs = 60'000;
  // How long a cancelled worker may take to finish its step and checkpoint before it is killed.
  static constexpr int kDefaultCancelGraceMs = 120'000;

  explicit WorkerJob(QObject* parent = nullptr);
  ~WorkerJob() override;

  void setProgram(const QString& program);  // default: engineExecutable()
  void setArguments(const QStringList& args);
  void setWorkingDirectory(const QString& dir);
  void setRunDirectory(const QString& dir);  // the run folder it writes, when known
  void setHeartbeatTimeout(int ms);          // 0 switches the watchdog off
  void setStderrLineLimit(int lines);
  void setCancelGrace(int ms);  // 0: never escalate a cancel to a kill

  QString program() const { return program_; }
  QStringList arguments() const { return arguments_; }
  QString runDirectory() const { return runDir_; }
  int heartbeatTimeout() const { return heartbeatMs_; }
  int cancelGrace() const { return cancelGraceMs_; }

  void start();
  // Asks the worker to stop after the current step: one `cancel` line on stdin (SIGTERM to
  // its group when stdin is gone). Repeating it does nothing: a second signal would make
  // the worker exit at once, which is kill()'s job. A worker still running cancelGrace() later
  // is killed, and its result says so.
  void cancel();
  // Asks a training worker for a checkpoint after the current step, without stopping: one
  // `save` line on stdin. False when the worker cannot be asked (not running, stdin gone).
  bool requestSave();
  void kill();  // SIGKILL to the worker's process group
  // Lets the worker go on without this studio (quit, keep training): its pipes are closed (stdin's
  // end means nothing to a worker, a broken stdout neither; the run folder keeps every event), the
  // process is released and never killed. The job counts as ended here; the studio finds the run
  // again as one running elsewhere.
  void detach();
  bool detached() const { return detached_; }

  Phase phase() const { return phase_; }
  bool isRunning() const { return phase_ == Phase::Running; }
  bool cancelRequested() const { return cancelRequested_; }
  qint64 processId() const { return pid_; }
  qint64 lastStep() const { return lastStep_; }
  const JobResult& result() const { return result_; }  // valid once ended()
  QStringList stderrTail() const { return stderrTail_; }

 Q_SIGNALS:
  void started();
  void eventReceived(const ws::RunEvent& ev);
  void stdoutText(const QString& line);  // a stdout line that is not an event
  void stderrLine(const QString& line);
  void ended(const ws::JobResult& result);

 private:
  void onStdout();
  void onStderr();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onError(QProcess::ProcessError error);
  void onWatchdog();
  void onCancelGraceOver();
  void handleStdoutLine(QByteArrayView line);
  void handleEvent(const RunEvent& ev);
  void keepStderr(const QString& line);
  void signalGroup(int signo);
  bool writeControlLine(const char* line);  // "cancel\n", "save\n": written through at once
  void finish(JobResult result);

  QProcess* process_ = nullptr;
  QTimer watchdog_;
  QTimer cancelGrace_;
  QString program_;
  QStringList arguments_;
  QString workingDir_;
  QString runDir_;
  int heartbeatMs_ = kDefaultHeartbeatTimeoutMs;
  int stderrLimit_ = 200;
  int cancelGraceMs_ = kDefaultCancelGraceMs;

  Phase phase_ = Phase::NotStarted;
  bool detached_ = false;
  qint64 pid_ = 0;
  QByteArray stdoutBuf_;
  QByteArray stderrBuf_;
  QStringList stderrTail_;
  QStringList errors_;  // messages of `error` events
  bool sawFinished_ = false;
  QString finishedStatus_;
  qint64 finishedStep_ = -1;
  qint64 lastStep_ = -1;
  bool cancelRequested_ = false;
  bool killRequested_ = false;
  bool watchdogFired_ = false;
  bool graceKilled_ = false;  // killed because a cancel was not honoured in time
  JobResult result_;
};

}  // namespace ws
