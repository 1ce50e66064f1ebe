// SPDX-License-Identifier: Apache-2.0
#include "batch_runner.h"

#include <QDateTime>
#include <QFileInfo>

#include <unistd.h>

#include <cstdio>

#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "runfolder/event_format.h"
#include "config/run_config.h"
#include "contract/log_lines.h"

namespace ws {
namespace {

QString timestamp(double unixSeconds) {
  const QDateTime when =
      unixSeconds > 0 ? QDateTime::fromMSecsSinceEpoch(qint64(unixSeconds * 1000)) : QDateTime::currentDateTime();
  return when.toString(QStringLiteral("HH:mm:ss  "));
}

// `--output_dir DIR` among the worker flags wins over the YAML (relative: to the current directory).
QString outputDirFlag(const QStringList& args) {
  QString dir;
  for (int i = 0; i < args.size(); ++i) {
    for (const QString& name : {QStringLiteral("--output_dir"), QStringLiteral("--output-dir")}) {
      if (args[i] == name && i + 1 < args.size()) dir = args[i + 1];
      else if (args[i].startsWith(name + QLatin1Char('='))) dir = args[i].mid(name.size() + 1);
    }
  }
  return dir.isEmpty() ? dir : QFileInfo(dir).absoluteFilePath();
}

// `--nproc N` among the worker flags: removed from `args`, N returned (0 when absent, -1 when bad).
int takeNproc(QStringList* args) {
  for (int i = 0; i < args->size(); ++i) {
    QString v;
    if (args->at(i) == QLatin1String("--nproc") && i + 1 < args->size()) {
      v = args->at(i + 1);
      args->remove(i, 2);
    } else if (args->at(i).startsWith(QLatin1String("--nproc="))) {
      v = args->at(i).mid(8);
      args->remove(i);
    } else {
      continue;
    }
    bool ok = false;
    const int n = v.toInt(&ok);
    return ok && n >= 1 ? n : -1;
  }
  return 0;
}

// A terminal that can redraw a line; TERM=dumb (an editor's shell buffer) cannot.
bool isLiveTerminal(std::FILE* f) {
  return ::isatty(fileno(f)) == 1 && qEnvironmentVariable("TERM") != QLatin1String("dumb");
}

}  // namespace

BatchRunner::BatchRunner(const QString& runYaml, const QStringList& workerArgs, int heartbeatTimeoutMs, QObject* parent)
    : QObject(parent),
      runYaml_(runYaml),
      workerArgs_(workerArgs),
      heartbeatMs_(heartbeatTimeoutMs),
      progress_(stdout, isLiveTerminal(stdout)) {}

int BatchRunner::start() {
  QString error;
  const auto cfg = RunConfig::load(runYaml_, &error);
  if (!cfg) {
    print(stderr, QStringLiteral("error: ") + error);
    outcome_ = QStringLiteral("failed: ") + error;
    return 1;
  }
  if (cfg->job.isEmpty()) {
    print(stderr, QStringLiteral("error: %1: no `job:` key (expected %2)").arg(runYaml_, RunConfig::knownJobs()));
    outcome_ = QStringLiteral("failed: no `job:` key");
    return 1;
  }
  const QString verb = RunConfig::verbForJob(cfg->job);
  if (verb.isEmpty()) {
    print(stderr,
          QStringLiteral("error: %1: unknown job '%2' (expected %3)").arg(runYaml_, cfg->job, RunConfig::knownJobs()));
    outcome_ = QStringLiteral("failed: unknown job '%1'").arg(cfg->job);
    return 1;
  }

  QStringList flags = workerArgs_;
  const int nproc = takeNproc(&flags);
  if (nproc < 0) {
    print(stderr, QStringLiteral("error: --nproc needs a number of processes (1 or more)"));
    outcome_ = QStringLiteral("failed: bad --nproc");
    return 1;
  }
  job_ = new WorkerJob(this);
  // Data parallel: the engine's launcher runs the ranks; its stdout is rank 0's event stream.
  job_->setArguments(JobManager::workerArguments(verb, runYaml_, flags, std::max(1, nproc)));
  const QString flagDir = outputDirFlag(workerArgs_);
  job_->setRunDirectory(flagDir.isEmpty() ? cfg->outputDir : flagDir);
  job_->setHeartbeatTimeout(heartbeatMs_);
  connect(job_, &WorkerJob::eventReceived, this, &BatchRunner::onEvent);
  connect(job_, &WorkerJob::stdoutText, this, [this](const QString& line) { print(stdout, line); });
  // The worker's human log goes where ours goes: the terminal's stderr.
  connect(job_, &WorkerJob::stderrLine, this, &BatchRunner::onStderrLine);
  connect(job_, &WorkerJob::ended, this, &BatchRunner::onEnded);
  job_->start();
  return -1;
}

void BatchRunner::interrupt(int /*signo*/) {
  if (!job_ || !job_->isRunning()) return;
  if (++interrupts_ == 1) {
    print(stderr, QStringLiteral("wanstudio: cancelling; the worker stops after the current step "
                                 "(interrupt again to kill it)"));
    job_->cancel();
  } else {
    print(stderr, QStringLiteral("wanstudio: killing the worker; the last complete checkpoint stays valid"));
    job_->kill();
  }
}

bool BatchRunner::firstTime(const QString& message) {
  const QString key = message.trimmed();
  if (key.isEmpty() || said_.contains(key)) return key.isEmpty();
  said_.insert(key);
  return true;
}

void BatchRunner::onStderrLine(const QString& line) {
  // The worker's log line ("[12:00:00] [warning] message", contract/log_lines.h) or "error: message".
  const auto log = contract::parse_stderr_log_line(line.toStdString());
  const bool warns = log && (log->level == "warning" || log->level == "error");
  if (warns && !firstTime(QString::fromStdString(log->message))) return;
  if (!log && line.startsWith(QLatin1String("error: ")) && !firstTime(line.mid(7))) return;
  print(stderr, line);
}

void BatchRunner::onEvent(const RunEvent& ev) {
  if (ev.type == QLatin1String("heartbeat")) return;  // liveness only, not news
  const bool warnsOrFails =
      ev.type == QLatin1String("error") ||
      (ev.type == QLatin1String("log") && (ev.string(QLatin1StringView("level")) == QLatin1String("warning") ||
                                           ev.string(QLatin1StringView("level")) == QLatin1String("error")));
  if (warnsOrFails && !firstTime(ev.string(QLatin1StringView("message")))) return;
  if (ev.type == QLatin1String("started")) maxSteps_ = qint64(ev.number(QLatin1StringView("max_train_steps"), 0));
  const QString text = timestamp(ev.time) + formatEvent(ev, maxSteps_);
  if (ev.type == QLatin1String("step")) {
    progress_.step(RunEvents::StepPoint::fromEvent(ev), maxSteps_, text);
    return;
  }
  // The last progress line stays above the final events.
  if (ev.type == QLatin1String("finished")) progress_.finish();
  print(stdout, text);
}

void BatchRunner::onEnded(const JobResult& r) {
  progress_.finish();
  const QString at = r.step >= 0 ? QStringLiteral(" at step %1").arg(r.step) : QString();
  switch (r.state) {
    case RunState::Completed: print(stdout, QStringLiteral("wanstudio: run completed%1").arg(at)); break;
    case RunState::Cancelled:
      print(stdout, QStringLiteral("wanstudio: run cancelled%1%2")
                        .arg(at, r.reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(r.reason)));
      break;
    default:
      print(stderr, QStringLiteral("error: run failed%1: %2")
                        .arg(at, r.reason.isEmpty() ? QStringLiteral("see the log above") : r.reason));
      break;
  }
  outcome_ =
      r.state == RunState::Completed ? QStringLiteral("completed%1").arg(at)
      : r.state == RunState::Cancelled
          ? QStringLiteral("cancelled%1").arg(at)
          : QStringLiteral("failed%1: %2").arg(at, r.reason.isEmpty() ? QStringLiteral("see its log") : r.reason);
  if (!job_->runDirectory().isEmpty()) outcome_ += QStringLiteral(", ") + job_->runDirectory();
  // Where to look next: checkpoints, samples, logs.
  if (!job_->runDirectory().isEmpty())
    print(r.state == RunState::Failed ? stderr : stdout,
          QStringLiteral("wanstudio: run folder: %1").arg(job_->runDirectory()));
  Q_EMIT done(r.exitStatus());
}

}  // namespace ws
