// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_manager.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

#include "jobs/worker_job.h"
#include "config/run_config.h"
#include "runfolder/run_events.h"
#include "runfolder/run_summary.h"
#include "runfolder/run_paths.h"

namespace ws {

JobManager::JobManager(QObject* parent) : QObject(parent), heartbeatMs_(WorkerJob::kDefaultHeartbeatTimeoutMs) {}

QString JobManager::normalizedPath(const QString& dir) {
  if (dir.isEmpty()) return {};
  const QFileInfo fi(dir);
  const QString canonical = fi.canonicalFilePath();
  return canonical.isEmpty() ? QDir::cleanPath(fi.absoluteFilePath()) : canonical;
}

WorkerJob* JobManager::startRun(const QString& runYaml, const QStringList& extraArgs, QString* error, int processes) {
  return startVerb(runYaml, {}, extraArgs, error, processes);
}

QStringList JobManager::workerArguments(const QString& verb, const QString& runYaml, const QStringList& extraArgs,
                                        int processes) {
  QStringList args = QStringList{verb, QStringLiteral("--config"), runYaml} + extraArgs;
  if (processes > 1)
    args = QStringList{QStringLiteral("launch"), QStringLiteral("--nproc"), QString::number(processes)} + args;
  return args;
}

QStringList JobManager::resumeArguments(const QString& runDir, const QString& checkpoint) {
  return {QStringLiteral("--output_dir"), runDir, QStringLiteral("--resume_from_checkpoint"),
          checkpoint.isEmpty() ? QStringLiteral("latest") : checkpoint};
}

WorkerJob* JobManager::resumeRun(const QString& runDir, const QStringList& extraArgs, QString* error,
                                 const QString& checkpoint) {
  const QString dir = normalizedPath(runDir);
  const QString yaml = runFile(dir, contract::kRunYaml);
  if (!QFileInfo::exists(yaml)) {
    if (error) *error = QStringLiteral("%1: no run.yaml, so the run cannot be resumed from here").arg(dir);
    return nullptr;
  }
  // The same number of processes as the run's last start (its `world_size`).
  RunEvents events;
  events.setKeepHistory(false);
  const int world = events.loadFile(runFile(dir, contract::kEventsFile)) ? events.summary().worldSize : 1;
  return startVerb(yaml, dir, resumeArguments(dir, checkpoint) + extraArgs, error, std::max(1, world));
}

WorkerJob* JobManager::startVerb(const QString& runYaml, const QString& runDir, const QStringList& extraArgs,
                                 QString* error, int processes) {
  const auto cfg = RunConfig::load(runYaml, error);
  if (!cfg) return nullptr;
  const QString verb = RunConfig::verbForJob(cfg->job);
  if (verb.isEmpty()) {
    if (error)
      *error =
          cfg->job.isEmpty()
              ? QStringLiteral("%1: no `job:` key (expected %2)").arg(runYaml, RunConfig::knownJobs())
              : QStringLiteral("%1: unknown job '%2' (expected %3)").arg(runYaml, cfg->job, RunConfig::knownJobs());
    return nullptr;
  }
  const QString out = runDir.isEmpty() ? cfg->outputDir : runDir;
  if (!out.isEmpty() && liveJobForRun(out)) {
    if (error) *error = QStringLiteral("%1 is already running").arg(out);
    return nullptr;
  }
  auto* job = new WorkerJob;
  job->setArguments(workerArguments(verb, cfg->path, extraArgs, processes));
  job->setWorkingDirectory(QFileInfo(cfg->path).absolutePath());
  job->setRunDirectory(out);
  job->setHeartbeatTimeout(heartbeatMs_);
  return addJob(job);
}

WorkerJob* JobManager::addJob(WorkerJob* job) {
  job->setParent(this);
  jobs_ << job;
  connect(job, &WorkerJob::ended, this, [this, job] {
    Q_EMIT jobEnded(job);
    Q_EMIT changed();
  });
  job->start();
  Q_EMIT jobStarted(job);
  Q_EMIT changed();
  return job;
}

WorkerJob* JobManager::lastJobForRun(const QString& runDir) const {
  const QString want = normalizedPath(runDir);
  for (auto it = jobs_.crbegin(); it != jobs_.crend(); ++it)
    if (!(*it)->runDirectory().isEmpty() && normalizedPath((*it)->runDirectory()) == want) return *it;
  return nullptr;
}

WorkerJob* JobManager::liveJobForRun(const QString& runDir) const {
  WorkerJob* job = lastJobForRun(runDir);
  return job && job->isRunning() ? job : nullptr;
}

std::optional<RunStatus> JobManager::outcomeForRun(const QString& runDir) const {
  WorkerJob* job = lastJobForRun(runDir);
  if (!job || job->phase() != WorkerJob::Phase::Ended) return std::nullopt;
  return job->result().status();
}

QList<WorkerJob*> JobManager::liveJobs() const {
  QList<WorkerJob*> live;
  for (WorkerJob* j : jobs_)
    if (j->isRunning()) live << j;
  return live;
}

RunStatus JobManager::statusFor(const QString& runDir, const RunSummary& summary) const {
  const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
  return deriveRunStatus(summary, liveJobForRun(runDir) != nullptr, outcomeForRun(runDir), now, staleAfterS_);
}

}  // namespace ws
