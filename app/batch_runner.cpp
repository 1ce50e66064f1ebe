#include "batch_runner.h"

#include <QDateTime>

#include <cstdio>

#include "jobs/worker_job.h"
#include "models/event_format.h"
#include "models/run_config.h"

namespace ws {
namespace {

void printLine(std::FILE* f, const QString& line) {
  const QByteArray bytes = line.toUtf8() + '\n';
  std::fwrite(bytes.constData(), 1, size_t(bytes.size()), f);
  std::fflush(f);
}

}  // namespace

BatchRunner::BatchRunner(const QString& runYaml, const QStringList& workerArgs, int heartbeatTimeoutMs,
                         QObject* parent)
    : QObject(parent), runYaml_(runYaml), workerArgs_(workerArgs), heartbeatMs_(heartbeatTimeoutMs) {}

int BatchRunner::start() {
  QString error;
  const auto cfg = RunConfig::load(runYaml_, &error);
  if (!cfg) {
    printLine(stderr, QStringLiteral("error: ") + error);
    return 1;
  }
  if (cfg->job.isEmpty()) {
    printLine(stderr, QStringLiteral("error: %1: no `job:` key (expected %2)").arg(runYaml_, RunConfig::knownJobs()));
    return 1;
  }
  const QString verb = RunConfig::verbForJob(cfg->job);
  if (verb.isEmpty()) {
    printLine(stderr, QStringLiteral("error: %1: unknown job '%2' (expected %3)").arg(runYaml_, cfg->job, RunConfig::knownJobs()));
    return 1;
  }

  job_ = new WorkerJob(this);
  job_->setArguments(QStringList{verb, QStringLiteral("--config"), runYaml_} + workerArgs_);
  job_->setRunDirectory(cfg->outputDir);
  job_->setHeartbeatTimeout(heartbeatMs_);
  connect(job_, &WorkerJob::eventReceived, this, &BatchRunner::onEvent);
  connect(job_, &WorkerJob::stdoutText, this, [](const QString& line) { printLine(stdout, line); });
  // The worker's human log goes where ours goes: the terminal's stderr.
  connect(job_, &WorkerJob::stderrLine, this, [](const QString& line) { printLine(stderr, line); });
  connect(job_, &WorkerJob::ended, this, &BatchRunner::onEnded);
  job_->start();
  return -1;
}

void BatchRunner::interrupt(int /*signo*/) {
  if (!job_ || !job_->isRunning()) return;
  if (++interrupts_ == 1) {
    printLine(stderr, QStringLiteral("wanstudio: cancelling; the worker stops after the current step "
                                     "(interrupt again to kill it)"));
    job_->cancel();
  } else {
    printLine(stderr, QStringLiteral("wanstudio: killing the worker; the last complete checkpoint stays valid"));
    job_->kill();
  }
}

void BatchRunner::onEvent(const RunEvent& ev) {
  if (ev.type == QLatin1String("heartbeat")) return;  // liveness only, not news
  if (ev.type == QLatin1String("started"))
    maxSteps_ = qint64(ev.number(QLatin1StringView("max_train_steps"), 0));
  const QString text = formatEvent(ev, maxSteps_);
  const QDateTime when = ev.time > 0 ? QDateTime::fromMSecsSinceEpoch(qint64(ev.time * 1000)) : QDateTime::currentDateTime();
  printLine(stdout, when.toString(QStringLiteral("HH:mm:ss  ")) + text);
}

void BatchRunner::onEnded(const JobResult& r) {
  const QString at = r.step >= 0 ? QStringLiteral(" at step %1").arg(r.step) : QString();
  switch (r.state) {
    case RunState::Completed:
      printLine(stdout, QStringLiteral("wanstudio: run completed%1").arg(at));
      break;
    case RunState::Cancelled:
      printLine(stdout, QStringLiteral("wanstudio: run cancelled%1%2").arg(at, r.reason.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(r.reason)));
      break;
    default:
      printLine(stderr, QStringLiteral("error: run failed%1: %2").arg(at, r.reason.isEmpty() ? QStringLiteral("see the log above") : r.reason));
      break;
  }
  Q_EMIT done(r.exitStatus());
}

}  // namespace ws
