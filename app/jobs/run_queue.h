// SPDX-License-Identifier: Apache-2.0
// The run queue: runs waiting to train one after another, kept in the workspace on disk
// (<workspace>/.wanstudio-queue.json, written atomically on every change) so it survives a
// restart or a crash of the studio. The queue starts its next run when no worker trains in the
// workspace, whoever started it (this studio, another one, a terminal: a run folder whose .lock a
// worker holds), and it is not paused; while another's run trains it looks again every few seconds. A run leaves the
// queue only once its worker has said `started` (the run trains); one that cannot start, or whose worker ends before
// `started`, stays in the queue as failed with the reason, until it is retried or removed. Entries can be reordered,
// edited (their run.yaml) and removed until they start.
#pragma once

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

class QTimer;

namespace ws {

class JobManager;
class WorkerJob;

struct QueueEntry {
  enum class State { Waiting, Starting, Failed };
  QString id;       // stable across restarts
  QString runYaml;  // absolute: the run's own run.yaml in its folder
  QString runDir;   // absolute: where it trains (the YAML's output_dir)
  QString job;      // upsampler | experts | vae
  int processes = 1;
  State state = State::Waiting;
  QString reason;         // Failed: why, in one line
  qint64 addedMs = 0;     // ms since the epoch
  qint64 startingMs = 0;  // Starting: when its worker was launched
};

class RunQueue : public QObject {
  Q_OBJECT
 public:
  static constexpr const char* kFileName = ".wanstudio-queue.json";

  explicit RunQueue(JobManager* jobs, QObject* parent = nullptr);

  // Loads <workspace>/.wanstudio-queue.json (none: an empty queue) and starts the next run when
  // it can. An entry that was starting when the studio died is dropped if its run has said
  // `started` since, and waits again otherwise. False with *error for an unreadable file,
  // which is kept aside as .wanstudio-queue.json.bad so nothing is lost.
  bool open(const QString& workspace, QString* error = nullptr);
  QString filePath() const;
  QString workspace() const { return workspace_; }

  const QList<QueueEntry>& entries() const { return entries_; }
  int indexOf(const QString& id) const;
  bool paused() const { return paused_; }

  // Adds a run (its run.yaml, already written) at the end; its id, or "" with *error.
  QString add(const QString& runYaml, int processes, QString* error = nullptr);
  bool remove(const QString& id);
  bool move(const QString& id, int delta);  // -1 up, +1 down; not a starting entry
  bool retry(const QString& id);            // failed -> waiting
  // Replaces a waiting or failed entry's run.yaml with `text` (checked first, written
  // atomically) and takes its job and folder from it; false with *error, the file untouched.
  bool editRunYaml(const QString& id, const QString& text, QString* error);
  void setPaused(bool paused);
  // Estimated start of entry `index` (ms since the epoch): now for the next one when nothing
  // trains, the live run's ETA for the next one while one trains, -1 when unknown (later
  // entries: their runs have no length known before they train).
  qint64 estimatedStartMs(int index) const;
  WorkerJob* currentJob() const;
  // The run folder (under the workspace) a worker this studio did not start trains in, which the
  // next entry waits for; empty when none.
  QString waitingFor() const { return waitingFor_; }
  // Looks again now (the studio calls it when its runs list changes).
  void poke() { pump(); }
  static constexpr int kElsewherePollMs = 3000;

 Q_SIGNALS:
  void changed();
  void runStarted(const QString& runDir);  // a run left the queue: it trains
  // The next entry was held back because a worker this studio did not start trains in `runDir`
  // (each look, every kElsewherePollMs while it lasts).
  void heldBack(const QString& runDir);

 private:
  // Starts the next waiting entry when nothing trains and the queue is not paused.
  void pump();
  void startEntry(int index);
  void onJobEvent(const QString& id, const QString& type);
  void onJobEnded(const QString& id);
  void fail(const QString& id, const QString& reason);
  bool save();

  JobManager* jobs_;
  QString workspace_;
  QList<QueueEntry> entries_;
  bool paused_ = false;
  QPointer<WorkerJob> current_;
  QString currentId_;
  QString waitingFor_;
  QTimer* elsewhereTimer_ = nullptr;
  double lastEtaS_ = -1;
  qint64 lastEtaAtMs_ = 0;
  int nextId_ = 1;
};

}  // namespace ws
