// SPDX-License-Identifier: Apache-2.0
#include "jobs/run_queue.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTimer>

#include <algorithm>

#include "config/run_config.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "runfolder/run_lock.h"
#include "runfolder/run_event.h"
#include "runfolder/run_paths.h"
#include "runfolder/regular_file.h"

namespace ws {
namespace {

qint64 nowMs() { return QDateTime::currentMSecsSinceEpoch(); }

const char* stateName(QueueEntry::State s) {
  switch (s) {
    case QueueEntry::State::Waiting: return "waiting";
    case QueueEntry::State::Starting: return "starting";
    case QueueEntry::State::Failed: return "failed";
  }
  return "waiting";
}

QueueEntry::State stateFromName(const QString& s) {
  if (s == QLatin1String("starting")) return QueueEntry::State::Starting;
  if (s == QLatin1String("failed")) return QueueEntry::State::Failed;
  return QueueEntry::State::Waiting;
}

// Whether the run in `runDir` said `started` at or after `sinceMs` (its events.jsonl).
bool startedSince(const QString& runDir, qint64 sinceMs) {
  QFile f(runFile(runDir, contract::kEventsFile));
  if (!openRegularFile(f, QIODevice::ReadOnly)) return false;
  while (!f.atEnd()) {
    const auto ev = parseEventLine(f.readLine());
    if (ev && ev->type == QLatin1String("started") && ev->time * 1000.0 >= double(sinceMs) - 1000.0) return true;
  }
  return false;
}

}  // namespace

RunQueue::RunQueue(JobManager* jobs, QObject* parent) : QObject(parent), jobs_(jobs) {
  // Another worker of this studio ending frees the machine for the next queued run.
  connect(jobs_, &JobManager::jobEnded, this, [this] {
    lastEtaS_ = -1;
    pump();
  });
  // The live run's ETA is when the next queued run starts.
  connect(jobs_, &JobManager::jobStarted, this, [this](WorkerJob* job) {
    connect(job, &WorkerJob::eventReceived, this, [this](const RunEvent& ev) {
      if (ev.type != QLatin1String("step")) return;
      lastEtaS_ = ev.number(QLatin1StringView("eta_s"), -1);
      lastEtaAtMs_ = nowMs();
    });
  });
}

QString RunQueue::filePath() const {
  return workspace_.isEmpty() ? QString() : QDir(workspace_).filePath(QLatin1String(kFileName));
}

bool RunQueue::open(const QString& workspace, QString* error) {
  workspace_ = workspace.isEmpty() ? QString() : QFileInfo(workspace).absoluteFilePath();
  entries_.clear();
  paused_ = false;
  bool ok = true, changedOnOpen = false;
  QFile f(filePath());
  if (!workspace_.isEmpty() && f.exists()) {
    QJsonParseError pe{};
    const QJsonDocument doc =
        openRegularFile(f, QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll(), &pe) : QJsonDocument();
    f.close();
    if (!doc.isObject()) {
      // Keep the unreadable file for the user; the queue starts empty.
      const QString bad = filePath() + QStringLiteral(".bad");
      QFile::remove(bad);
      QFile::rename(filePath(), bad);
      if (error) *error = QStringLiteral("%1: not a run queue (%2); kept as %3").arg(filePath(), pe.errorString(), bad);
      ok = false;
    } else {
      const QJsonObject root = doc.object();
      paused_ = root.value(QLatin1String("paused")).toBool();
      for (const QJsonValue& v : root.value(QLatin1String("entries")).toArray()) {
        const QJsonObject o = v.toObject();
        QueueEntry e;
        e.id = o.value(QLatin1String("id")).toString();
        e.runYaml = o.value(QLatin1String("run_yaml")).toString();
        e.runDir = o.value(QLatin1String("run_dir")).toString();
        e.job = o.value(QLatin1String("job")).toString();
        e.processes = std::max(1, o.value(QLatin1String("processes")).toInt(1));
        e.state = stateFromName(o.value(QLatin1String("state")).toString());
        e.reason = o.value(QLatin1String("reason")).toString();
        e.addedMs = qint64(o.value(QLatin1String("added_ms")).toDouble());
        e.startingMs = qint64(o.value(QLatin1String("starting_ms")).toDouble());
        if (e.id.isEmpty() || e.runYaml.isEmpty()) continue;
        if (e.state == QueueEntry::State::Starting) {
          // The studio died while this run was starting: it either trains now or never started.
          changedOnOpen = true;
          if (startedSince(e.runDir, e.startingMs)) continue;
          e.state = QueueEntry::State::Waiting;
        }
        nextId_ = std::max(nextId_, e.id.toInt() + 1);
        entries_ << e;
      }
    }
  }
  // Written back only when opening changed it (a starting entry sorted out, a bad file set
  // aside): a workspace without a queue gets no file just for being opened.
  if (changedOnOpen || !ok) save();
  Q_EMIT changed();
  pump();
  return ok;
}

WorkerJob* RunQueue::currentJob() const { return current_; }

int RunQueue::indexOf(const QString& id) const {
  for (int i = 0; i < entries_.size(); ++i)
    if (entries_[i].id == id) return i;
  return -1;
}

QString RunQueue::add(const QString& runYaml, int processes, QString* error) {
  if (workspace_.isEmpty()) {
    if (error) *error = QStringLiteral("no workspace: choose one first");
    return {};
  }
  const auto cfg = RunConfig::load(runYaml, error);
  if (!cfg) return {};
  if (RunConfig::verbForJob(cfg->job).isEmpty()) {
    if (error)
      *error = QStringLiteral("%1: unknown job '%2' (expected %3)").arg(runYaml, cfg->job, RunConfig::knownJobs());
    return {};
  }
  QueueEntry e;
  e.id = QString::number(nextId_++);
  e.runYaml = cfg->path;
  e.runDir = cfg->outputDir;
  e.job = cfg->job;
  e.processes = std::max(1, processes);
  e.addedMs = nowMs();
  entries_ << e;
  if (!save()) {
    entries_.removeLast();
    if (error) *error = QStringLiteral("cannot write %1").arg(filePath());
    return {};
  }
  Q_EMIT changed();
  pump();
  return e.id;
}

bool RunQueue::remove(const QString& id) {
  const int i = indexOf(id);
  if (i < 0 || entries_[i].state == QueueEntry::State::Starting) return false;
  entries_.removeAt(i);
  save();
  Q_EMIT changed();
  return true;
}

bool RunQueue::move(const QString& id, int delta) {
  const int i = indexOf(id), j = i + delta;
  if (i < 0 || j < 0 || j >= entries_.size()) return false;
  if (entries_[i].state == QueueEntry::State::Starting || entries_[j].state == QueueEntry::State::Starting)
    return false;
  entries_.swapItemsAt(i, j);
  save();
  Q_EMIT changed();
  return true;
}

bool RunQueue::retry(const QString& id) {
  const int i = indexOf(id);
  if (i < 0 || entries_[i].state != QueueEntry::State::Failed) return false;
  entries_[i].state = QueueEntry::State::Waiting;
  entries_[i].reason.clear();
  save();
  Q_EMIT changed();
  pump();
  return true;
}

bool RunQueue::editRunYaml(const QString& id, const QString& text, QString* error) {
  const int i = indexOf(id);
  if (i < 0 || entries_[i].state == QueueEntry::State::Starting) {
    if (error) *error = QStringLiteral("the run has started; its run.yaml is the worker's now");
    return false;
  }
  const QString path = entries_[i].runYaml;
  // Checked as a file beside it (relative paths resolve the same), then swapped in.
  const QString candidate = path + QStringLiteral(".edit");
  {
    QFile c(candidate);
    if (!c.open(QIODevice::WriteOnly) || c.write(text.toUtf8()) < 0) {
      if (error) *error = QStringLiteral("cannot write %1").arg(candidate);
      return false;
    }
  }
  QString why;
  const auto cfg = RunConfig::load(candidate, &why);
  QFile::remove(candidate);
  if (cfg && RunConfig::verbForJob(cfg->job).isEmpty())
    why = QStringLiteral("unknown job '%1' (expected %2)").arg(cfg->job, RunConfig::knownJobs());
  if (!cfg || !why.isEmpty()) {
    if (error) *error = why;
    return false;
  }
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(text.toUtf8()) < 0 || !out.commit()) {
    if (error) *error = QStringLiteral("cannot write %1").arg(path);
    return false;
  }
  entries_[i].job = cfg->job;
  entries_[i].runDir = cfg->outputDir;
  save();
  Q_EMIT changed();
  return true;
}

void RunQueue::setPaused(bool paused) {
  if (paused_ == paused) return;
  paused_ = paused;
  save();
  Q_EMIT changed();
  pump();
}

qint64 RunQueue::estimatedStartMs(int index) const {
  // Only the next waiting entry has a start we can say: the live run's ETA (or now).
  int next = -1;
  for (int i = 0; i < entries_.size() && next < 0; ++i)
    if (entries_[i].state == QueueEntry::State::Waiting) next = i;
  if (index != next || paused_) return -1;
  if (jobs_->liveJobs().isEmpty()) return nowMs();
  if (lastEtaS_ < 0) return -1;
  return lastEtaAtMs_ + qint64(lastEtaS_ * 1000.0);
}

// A run folder in the workspace whose lock a worker holds: another studio's run, or one started
// in a terminal, or one this studio started before it was restarted.
static QString runTrainingIn(const QString& workspace) {
  const QFileInfoList dirs = QDir(workspace).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot);
  for (const QFileInfo& d : dirs)
    if (runLockHolder(d.absoluteFilePath()) > 0) return d.absoluteFilePath();
  return {};
}

void RunQueue::pump() {
  if (paused_ || workspace_.isEmpty() || current_ || !jobs_->liveJobs().isEmpty()) return;
  const bool anyWaiting = std::any_of(entries_.begin(), entries_.end(),
                                      [](const QueueEntry& e) { return e.state == QueueEntry::State::Waiting; });
  const QString elsewhere = anyWaiting ? runTrainingIn(workspace_) : QString();
  if (elsewhere != waitingFor_) {
    waitingFor_ = elsewhere;
    Q_EMIT changed();
  }
  if (!elsewhere.isEmpty()) {
    if (!elsewhereTimer_) {
      elsewhereTimer_ = new QTimer(this);
      elsewhereTimer_->setSingleShot(true);
      connect(elsewhereTimer_, &QTimer::timeout, this, &RunQueue::pump);
    }
    elsewhereTimer_->start(kElsewherePollMs);
    Q_EMIT heldBack(elsewhere);
    return;
  }
  for (int i = 0; i < entries_.size(); ++i) {
    if (entries_[i].state == QueueEntry::State::Waiting) {
      startEntry(i);
      return;
    }
  }
}

void RunQueue::startEntry(int index) {
  QueueEntry& e = entries_[index];
  const QString id = e.id;
  e.state = QueueEntry::State::Starting;
  e.startingMs = nowMs();
  save();  // before the worker exists: a crash from here on is recovered by open()
  QString error;
  WorkerJob* job = jobs_->startRun(e.runYaml, {}, &error, e.processes);
  if (!job) {
    fail(id, error);
    pump();
    return;
  }
  current_ = job;
  currentId_ = id;
  connect(job, &WorkerJob::eventReceived, this, [this, id](const RunEvent& ev) { onJobEvent(id, ev.type); });
  connect(job, &WorkerJob::ended, this, [this, id] { onJobEnded(id); });
  Q_EMIT changed();
}

void RunQueue::onJobEvent(const QString& id, const QString& type) {
  if (type != QLatin1String("started")) return;
  const int i = indexOf(id);
  if (i < 0) return;
  const QString runDir = entries_[i].runDir;
  entries_.removeAt(i);  // it trains: it has left the queue
  save();
  Q_EMIT changed();
  Q_EMIT runStarted(runDir);
}

void RunQueue::onJobEnded(const QString& id) {
  WorkerJob* job = current_;
  if (indexOf(id) >= 0) {
    // Ended before `started`: the run never trained (a config error, a crash while loading).
    QString reason = job ? job->result().reason : QString();
    if (reason.isEmpty() && job) {
      const QStringList tail = job->stderrTail();
      for (auto it = tail.crbegin(); it != tail.crend() && reason.isEmpty(); ++it)
        if (it->startsWith(QLatin1String("error: "))) reason = it->mid(7);
    }
    fail(id, reason.isEmpty() ? tr("the worker ended before training started") : reason);
  }
  current_ = nullptr;
  currentId_.clear();
  pump();
}

void RunQueue::fail(const QString& id, const QString& reason) {
  const int i = indexOf(id);
  if (i < 0) return;
  entries_[i].state = QueueEntry::State::Failed;
  entries_[i].reason = reason.section(QLatin1Char('\n'), 0, 0);
  save();
  Q_EMIT changed();
}

bool RunQueue::save() {
  if (workspace_.isEmpty()) return false;
  QJsonArray list;
  for (const QueueEntry& e : entries_) {
    list.append(QJsonObject{{QStringLiteral("id"), e.id},
                            {QStringLiteral("run_yaml"), e.runYaml},
                            {QStringLiteral("run_dir"), e.runDir},
                            {QStringLiteral("job"), e.job},
                            {QStringLiteral("processes"), e.processes},
                            {QStringLiteral("state"), QString::fromLatin1(stateName(e.state))},
                            {QStringLiteral("reason"), e.reason},
                            {QStringLiteral("added_ms"), double(e.addedMs)},
                            {QStringLiteral("starting_ms"), double(e.startingMs)}});
  }
  const QJsonObject root{
      {QStringLiteral("version"), 1}, {QStringLiteral("paused"), paused_}, {QStringLiteral("entries"), list}};
  // QSaveFile: a crash mid-write leaves the previous file whole.
  QSaveFile f(filePath());
  if (!f.open(QIODevice::WriteOnly)) return false;
  f.write(QJsonDocument(root).toJson(QJsonDocument::Indented));
  return f.commit();
}

}  // namespace ws
