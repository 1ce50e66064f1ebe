// SPDX-License-Identifier: Apache-2.0
#include "jobs/worker_job.h"

#include <signal.h>
#include <unistd.h>
#include <cstring>

#include "jobs/engine_locator.h"
#include "jobs/final_record.h"

namespace ws {
namespace {

QString signalName(int signo) {
  switch (signo) {
    case SIGKILL: return QStringLiteral("SIGKILL");
    case SIGTERM: return QStringLiteral("SIGTERM");
    case SIGINT: return QStringLiteral("SIGINT");
    case SIGSEGV: return QStringLiteral("SIGSEGV");
    case SIGABRT: return QStringLiteral("SIGABRT");
    case SIGBUS: return QStringLiteral("SIGBUS");
    case SIGFPE: return QStringLiteral("SIGFPE");
    case SIGILL: return QStringLiteral("SIGILL");
    case SIGHUP: return QStringLiteral("SIGHUP");
    case SIGPIPE: return QStringLiteral("SIGPIPE");
    default: return QStringLiteral("signal %1").arg(signo);
  }
}

QString seconds(int ms) { return QString::number(ms / 1000.0, 'g', 4); }

// A worker that fails before it can emit events says why on stderr ("error: ...").
QString lastErrorLine(const QStringList& stderrTail) {
  for (auto it = stderrTail.crbegin(); it != stderrTail.crend(); ++it)
    if (it->startsWith(QLatin1String("error:"))) return it->mid(6).trimmed();
  return {};
}

}  // namespace

WorkerJob::WorkerJob(QObject* parent) : QObject(parent), program_(engineExecutable()) {
  watchdog_.setSingleShot(true);
  connect(&watchdog_, &QTimer::timeout, this, &WorkerJob::onWatchdog);
  cancelGrace_.setSingleShot(true);
  connect(&cancelGrace_, &QTimer::timeout, this, &WorkerJob::onCancelGraceOver);
}

WorkerJob::~WorkerJob() {
  if (process_ && process_->state() != QProcess::NotRunning) {
    // Nobody will read its result: do not leave a worker training unsupervised.
    process_->blockSignals(true);
    signalGroup(SIGKILL);
    process_->waitForFinished(3000);
  }
}

void WorkerJob::setProgram(const QString& program) { program_ = program; }
void WorkerJob::setArguments(const QStringList& args) { arguments_ = args; }
void WorkerJob::setWorkingDirectory(const QString& dir) { workingDir_ = dir; }
void WorkerJob::setRunDirectory(const QString& dir) { runDir_ = dir; }
void WorkerJob::setHeartbeatTimeout(int ms) { heartbeatMs_ = qMax(0, ms); }
void WorkerJob::setStderrLineLimit(int lines) { stderrLimit_ = qMax(1, lines); }
void WorkerJob::setCancelGrace(int ms) { cancelGraceMs_ = qMax(0, ms); }

void WorkerJob::start() {
  if (phase_ != Phase::NotStarted) return;
  phase_ = Phase::Running;
  process_ = new QProcess(this);
  process_->setProgram(program_);
  process_->setArguments(arguments_);
  if (!workingDir_.isEmpty()) process_->setWorkingDirectory(workingDir_);
  // Its own process group: a terminal's Ctrl-C reaches only us, and we decide (one cancel,
  // then kill). setpgid is async-signal-safe, as a modifier run after fork() must be.
  process_->setChildProcessModifier([] { ::setpgid(0, 0); });
  connect(process_, &QProcess::readyReadStandardOutput, this, &WorkerJob::onStdout);
  connect(process_, &QProcess::readyReadStandardError, this, &WorkerJob::onStderr);
  connect(process_, &QProcess::finished, this, &WorkerJob::onFinished);
  connect(process_, &QProcess::errorOccurred, this, &WorkerJob::onError);
  connect(process_, &QProcess::started, this, [this] {
    pid_ = process_->processId();
    if (heartbeatMs_ > 0) watchdog_.start(heartbeatMs_);
    Q_EMIT started();
  });
  process_->start(QIODevice::ReadWrite);
}

void WorkerJob::cancel() {
  if (phase_ != Phase::Running || cancelRequested_) return;
  cancelRequested_ = true;
  if (cancelGraceMs_ > 0) cancelGrace_.start(cancelGraceMs_);
  // Not only Running: QProcess reports `started` through the event loop, and under load the
  // worker's first events were seen to arrive before it, so a Cancel clicked then was lost.
  if (process_->state() != QProcess::NotRunning && writeControlLine("cancel\n")) return;
  signalGroup(SIGTERM);
}

bool WorkerJob::writeControlLine(const char* line) {
  const qint64 n = static_cast<qint64>(std::strlen(line));
  if (process_->write(line) != n) return false;
  // Sent now, not when the event loop next finds the pipe writable: under load that wait was
  // seen to last past the cancel grace (the worker never read the line). A few bytes into an
  // empty pipe do not block.
  process_->waitForBytesWritten(1000);
  return true;
}

void WorkerJob::onCancelGraceOver() {
  if (phase_ != Phase::Running) return;
  graceKilled_ = true;
  keepStderr(QStringLiteral("wanstudio: the worker did not stop within %1 s of Cancel; killing it")
                 .arg(seconds(cancelGraceMs_)));
  signalGroup(SIGKILL);
}

bool WorkerJob::requestSave() {
  if (phase_ != Phase::Running || cancelRequested_ || process_->state() == QProcess::NotRunning) return false;
  return writeControlLine("save\n");
}

void WorkerJob::kill() {
  if (phase_ != Phase::Running) return;
  killRequested_ = true;
  signalGroup(SIGKILL);
}

void WorkerJob::detach() {
  if (phase_ != Phase::Running || !process_) return;
  watchdog_.stop();
  cancelGrace_.stop();
  process_->disconnect(this);
  process_->closeWriteChannel();
  process_->closeReadChannel(QProcess::StandardOutput);
  process_->closeReadChannel(QProcess::StandardError);
  // Released, not deleted: ~QProcess would kill the worker. The object lives until the studio exits.
  process_->setParent(nullptr);
  process_ = nullptr;
  detached_ = true;
  phase_ = Phase::Ended;
}

void WorkerJob::signalGroup(int signo) {
  if (!process_ || process_->state() == QProcess::NotRunning) return;
  // QProcess knows the pid from fork on; pid_ only from the `started` signal.
  const auto pid = static_cast<pid_t>(process_->processId());
  if (pid <= 0) return;
  // The worker leads its own group (setpgid above); if that failed, signal just the process.
  if (::kill(-pid, signo) != 0) ::kill(pid, signo);
}

void WorkerJob::onStdout() {
  if (heartbeatMs_ > 0) watchdog_.start(heartbeatMs_);
  stdoutBuf_.append(process_->readAllStandardOutput());
  qsizetype start = 0;
  for (qsizetype nl; (nl = stdoutBuf_.indexOf('\n', start)) >= 0; start = nl + 1)
    handleStdoutLine(QByteArrayView(stdoutBuf_).sliced(start, nl - start));
  stdoutBuf_.remove(0, start);
}

void WorkerJob::handleStdoutLine(QByteArrayView line) {
  if (line.trimmed().isEmpty()) return;
  if (auto ev = parseEventLine(line)) {
    handleEvent(*ev);
  } else {
    const QString text = QString::fromUtf8(line).trimmed();
    keepStderr(text);
    Q_EMIT stdoutText(text);
  }
}

void WorkerJob::handleEvent(const RunEvent& ev) {
  if (ev.type == QLatin1String("started") && runDir_.isEmpty()) {
    // A YAML without output_dir: the resolved config says where the run went.
    const QString out =
        ev.fields.value(QLatin1StringView("config")).toObject().value(QLatin1StringView("output_dir")).toString();
    if (!out.isEmpty()) runDir_ = out;
  }
  if (ev.type == QLatin1String("step")) {
    lastStep_ = qMax(lastStep_, ev.step(lastStep_));
  } else if (ev.type == QLatin1String("error")) {
    errors_ << ev.string(QLatin1StringView("message"));
  } else if (ev.type == QLatin1String("finished")) {
    sawFinished_ = true;
    finishedStatus_ = ev.string(QLatin1StringView("status"));
    finishedStep_ = ev.step(-1);
  }
  Q_EMIT eventReceived(ev);
}

void WorkerJob::onStderr() {
  // Any output is a sign of life; the heartbeat is just the line that always comes.
  if (heartbeatMs_ > 0) watchdog_.start(heartbeatMs_);
  stderrBuf_.append(process_->readAllStandardError());
  qsizetype start = 0;
  for (qsizetype nl; (nl = stderrBuf_.indexOf('\n', start)) >= 0; start = nl + 1) {
    QString line = QString::fromUtf8(QByteArrayView(stderrBuf_).sliced(start, nl - start));
    if (line.endsWith(QLatin1Char('\r'))) line.chop(1);
    keepStderr(line);
    Q_EMIT stderrLine(line);
  }
  stderrBuf_.remove(0, start);
}

void WorkerJob::keepStderr(const QString& line) {
  stderrTail_ << line;
  if (stderrTail_.size() > stderrLimit_) stderrTail_.remove(0, stderrTail_.size() - stderrLimit_);
}

void WorkerJob::onWatchdog() {
  if (phase_ != Phase::Running) return;
  watchdogFired_ = true;
  keepStderr(QStringLiteral("wanstudio: no output from the worker for %1 s; killing it").arg(seconds(heartbeatMs_)));
  signalGroup(SIGKILL);
}

void WorkerJob::onError(QProcess::ProcessError error) {
  if (error != QProcess::FailedToStart || phase_ != Phase::Running) return;
  JobResult r;
  r.state = RunState::Failed;
  r.reason = QStringLiteral("could not start the worker %1: %2 (set WANSTUDIO_ENGINE to its path)")
                 .arg(program_, process_->errorString());
  finish(r);
}

void WorkerJob::onFinished(int exitCode, QProcess::ExitStatus status) {
  if (phase_ != Phase::Running) return;
  // Take what is left in the pipes; a torn last event line is ignored.
  onStdout();
  if (!stdoutBuf_.isEmpty()) {
    if (auto ev = parseEventLine(stdoutBuf_)) handleEvent(*ev);
    stdoutBuf_.clear();
  }
  onStderr();
  if (!stderrBuf_.isEmpty()) {
    const QString line = QString::fromUtf8(stderrBuf_);
    stderrBuf_.clear();
    keepStderr(line);
    Q_EMIT stderrLine(line);
  }

  JobResult r;
  // On a crash exit Qt reports the signal number as the exit code.
  if (status == QProcess::CrashExit) r.signal = exitCode;
  else r.exitCode = exitCode;
  r.sawFinished = sawFinished_;
  r.step = sawFinished_ ? finishedStep_ : lastStep_;

  if (sawFinished_) {
    // The contract: the final state comes from the `finished` event.
    if (finishedStatus_ == QLatin1String("completed")) {
      r.state = RunState::Completed;
    } else if (finishedStatus_ == QLatin1String("cancelled")) {
      r.state = RunState::Cancelled;
    } else {
      r.state = RunState::Failed;
      r.reason = !errors_.isEmpty() ? errors_.join(QStringLiteral("; "))
                 : finishedStatus_ == QLatin1String("failed")
                     ? QStringLiteral("the worker reported failure (exit code %1)").arg(exitCode)
                     : QStringLiteral("unknown status \"%1\"").arg(finishedStatus_);
    }
    if (watchdogFired_) r.reason += QStringLiteral(" (the worker hung after finishing and was killed)");
  } else if (watchdogFired_) {
    r.state = RunState::Failed;
    r.reason = QStringLiteral("no heartbeat for %1 s").arg(seconds(heartbeatMs_));
  } else if (graceKilled_) {
    r.state = RunState::Cancelled;
    r.reason = QStringLiteral(
                   "the worker did not stop within %1 s of Cancel and was killed; its last complete "
                   "checkpoint stays valid")
                   .arg(seconds(cancelGraceMs_));
  } else if (killRequested_) {
    // Killed on request (second Ctrl-C, Kill button): the last complete checkpoint stays valid.
    r.state = RunState::Cancelled;
    r.reason = QStringLiteral("worker killed on request");
  } else if (status == QProcess::CrashExit) {
    r.state = RunState::Failed;
    r.reason = QStringLiteral("worker killed by signal %1 (%2) without a finished event")
                   .arg(r.signal)
                   .arg(signalName(r.signal));
    if (r.signal == SIGKILL)
      r.reason += QStringLiteral("; it was probably out of memory (the kernel's OOM killer, see dmesg)");
  } else {
    r.state = RunState::Failed;
    r.reason = QStringLiteral("worker exited with code %1 without a finished event").arg(exitCode);
  }
  if (r.state == RunState::Failed && !sawFinished_ && !watchdogFired_) {
    const QString last = !errors_.isEmpty() ? errors_.last() : lastErrorLine(stderrTail_);
    if (!last.isEmpty()) r.reason += QStringLiteral("; last error: ") + last;
  }
  // We are the one who saw it end: tell the run folder, not only our own window.
  if (!sawFinished_) appendSupervisorRecord(runDir_, r);
  finish(r);
}

void WorkerJob::finish(JobResult result) {
  watchdog_.stop();
  cancelGrace_.stop();
  phase_ = Phase::Ended;
  result_ = std::move(result);
  Q_EMIT ended(result_);
}

}  // namespace ws
