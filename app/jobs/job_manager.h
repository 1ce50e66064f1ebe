// SPDX-License-Identifier: Apache-2.0
// The workers this studio supervises, by run directory (cf. Shotcut's JobQueue). The runs
// list and the run page ask it whether a live worker owns a run and how a finished one ended.
#pragma once

#include <QList>
#include <QObject>
#include <QPointer>
#include <QStringList>

#include <optional>

#include "runfolder/run_status.h"

namespace ws {

struct RunSummary;
class WorkerJob;

class JobManager : public QObject {
  Q_OBJECT
 public:
  explicit JobManager(QObject* parent = nullptr);

  void setHeartbeatTimeout(int ms) { heartbeatMs_ = ms; }
  int heartbeatTimeout() const { return heartbeatMs_; }
  // Events newer than this (seconds) without a live worker of ours: someone else runs it.
  void setStaleAfter(double seconds) { staleAfterS_ = seconds; }
  double staleAfter() const { return staleAfterS_; }

  // Starts `wanstudio-engine <verb> --config RUN.yaml [extra]` for the YAML's job; with
  // processes > 1 through `wanstudio-engine launch --nproc N` (data parallel on this machine,
  // rank 0's events on the job's stdout). nullptr with a one-line *error when the YAML cannot be used.
  WorkerJob* startRun(const QString& runYaml, const QStringList& extraArgs, QString* error, int processes = 1);
  // Continues a run from its latest checkpoint: the run's own run.yaml with
  // `--output_dir RUN_DIR --resume_from_checkpoint latest [extra]` (the folder wins over the
  // YAML's output_dir, which names the machine it ran on when the run was copied here). A
  // data-parallel run resumes with the number of processes of its last start.
  // `checkpoint`: a checkpoint folder to resume from instead of the latest (an earlier one: the
  // steps after it are trained again).
  WorkerJob* resumeRun(const QString& runDir, const QStringList& extraArgs, QString* error,
                       const QString& checkpoint = {});
  // Tracks (and owns) a job configured elsewhere, then starts it.
  WorkerJob* addJob(WorkerJob* job);

  WorkerJob* liveJobForRun(const QString& runDir) const;
  WorkerJob* lastJobForRun(const QString& runDir) const;  // live or ended this session
  std::optional<RunStatus> outcomeForRun(const QString& runDir) const;
  QList<WorkerJob*> liveJobs() const;
  // The one rule for a run's state (deriveRunStatus) with this manager's knowledge.
  RunStatus statusFor(const QString& runDir, const RunSummary& summary) const;

  static QString normalizedPath(const QString& dir);
  static QStringList resumeArguments(const QString& runDir, const QString& checkpoint = {});
  // The worker's arguments for `verb` (the launcher in front for processes > 1).
  static QStringList workerArguments(const QString& verb, const QString& runYaml, const QStringList& extraArgs,
                                     int processes);

 Q_SIGNALS:
  void jobStarted(ws::WorkerJob* job);
  void jobEnded(ws::WorkerJob* job);
  void changed();

 private:
  // runDir "" means the YAML's output_dir.
  WorkerJob* startVerb(const QString& runYaml, const QString& runDir, const QStringList& extraArgs, QString* error,
                       int processes);

  QList<WorkerJob*> jobs_;
  int heartbeatMs_;
  double staleAfterS_ = 30;
};

}  // namespace ws
