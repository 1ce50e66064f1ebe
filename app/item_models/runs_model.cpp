// SPDX-License-Identifier: Apache-2.0
#include "item_models/runs_model.h"

#include <QGuiApplication>
#include <QColor>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>

#include <algorithm>
#include <cmath>

#include "jobs/job_manager.h"
#include "runfolder/run_paths.h"
#include "runfolder/regular_file.h"
#include "theme.h"

namespace ws {
namespace {

QString eventsPath(const QString& dir) { return runFile(dir, contract::kEventsFile); }

void collect(const QString& dir, int depthLeft, QStringList& out) {
  if (RunsModel::isRunDir(dir)) {
    out << dir;
    return;  // checkpoint-*, sample/, logs/ below a run are not runs
  }
  if (depthLeft <= 0) return;
  const QDir d(dir);
  for (const QString& sub : d.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Readable, QDir::Name))
    collect(d.filePath(sub), depthLeft - 1, out);
}

}  // namespace

RunsModel::RunsModel(JobManager* jobs, QObject* parent) : QAbstractTableModel(parent), jobs_(jobs) {
  connect(&timer_, &QTimer::timeout, this, &RunsModel::refresh);
  // A worker starting or ending changes a state without touching the files yet.
  if (jobs_) connect(jobs_, &JobManager::changed, this, &RunsModel::refresh);
}

RunsModel::~RunsModel() = default;

bool RunsModel::isRunDir(const QString& dir) {
  return QFileInfo::exists(eventsPath(dir)) || QFileInfo::exists(runFile(dir, contract::kRunYaml));
}

QStringList RunsModel::findRunDirs(const QString& workspace, int maxDepth) {
  QStringList out;
  if (!workspace.isEmpty() && QFileInfo(workspace).isDir()) collect(QDir::cleanPath(workspace), maxDepth, out);
  return out;
}

void RunsModel::setWorkspace(const QString& dir) {
  beginResetModel();
  entries_.clear();
  opened_.clear();
  workspace_ = dir.isEmpty() ? QString() : JobManager::normalizedPath(dir);
  endResetModel();
  refresh();
}

void RunsModel::addRun(const QString& dir) {
  const QString d = JobManager::normalizedPath(dir);
  if (!isRunDir(d) || opened_.contains(d)) return;
  opened_ << d;
  refresh();
}

void RunsModel::setRefreshInterval(int ms) {
  if (ms > 0) timer_.start(ms);
  else timer_.stop();
}

void RunsModel::readNew(Entry& e) {
  QFile f(eventsPath(e.dir));
  if (!openRegularFile(f, QIODevice::ReadOnly)) {
    if (e.offset > 0) {
      e.events->clear();
      e.offset = 0;
    }
    return;
  }
  if (f.size() < e.offset) {  // rewritten: start over
    e.events->clear();
    e.offset = 0;
  }
  if (f.size() == e.offset || !f.seek(e.offset)) return;
  const QByteArray bytes = f.readAll();
  e.offset += bytes.size();
  e.events->appendData(bytes);
}

void RunsModel::refresh() {
  QStringList found = findRunDirs(workspace_);
  for (QString& d : found) d = JobManager::normalizedPath(d);
  for (const QString& d : opened_)
    if (!found.contains(d) && isRunDir(d)) found << d;
  std::sort(found.begin(), found.end());

  // Drop the rows whose folders are gone, then insert the new ones in order.
  for (int row = int(entries_.size()) - 1; row >= 0; --row) {
    if (std::binary_search(found.cbegin(), found.cend(), entries_[size_t(row)].dir)) continue;
    beginRemoveRows({}, row, row);
    entries_.erase(entries_.begin() + row);
    endRemoveRows();
  }
  for (const QString& dir : found) {
    auto pos = std::lower_bound(entries_.begin(), entries_.end(), dir,
                                [](const Entry& e, const QString& d) { return e.dir < d; });
    if (pos != entries_.end() && pos->dir == dir) continue;
    const int row = int(pos - entries_.begin());
    Entry e;
    e.dir = dir;
    e.name = workspace_.isEmpty() ? dir : QDir(workspace_).relativeFilePath(dir);
    if (e.name == QLatin1String(".")) e.name = QFileInfo(dir).fileName();
    if (e.name.startsWith(QLatin1String("..")) || e.name.isEmpty()) e.name = dir;  // outside the workspace
    e.events = std::make_unique<RunEvents>();
    e.events->setKeepHistory(false);
    beginInsertRows({}, row, row);
    entries_.insert(entries_.begin() + row, std::move(e));
    endInsertRows();
  }
  scanStates();
}

void RunsModel::scanStates() {
  for (size_t row = 0; row < entries_.size(); ++row) {
    Entry& e = entries_[row];
    const qint64 before = e.offset;
    readNew(e);
    const RunStatus status = jobs_ ? jobs_->statusFor(e.dir, e.events->summary())
                                   : deriveRunStatus(e.events->summary(), false, std::nullopt,
                                                     QDateTime::currentMSecsSinceEpoch() / 1000.0, 30);
    if (before != e.offset || !(status == e.status)) {
      e.status = status;
      Q_EMIT dataChanged(index(int(row), 0), index(int(row), ColumnCount - 1));
    }
  }
}

int RunsModel::rowForRunDir(const QString& dir) const {
  const QString want = JobManager::normalizedPath(dir);
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].dir == want) return int(i);
  return -1;
}

QString RunsModel::runDir(int row) const { return entries_.at(size_t(row)).dir; }
RunStatus RunsModel::status(int row) const { return entries_.at(size_t(row)).status; }
const RunSummary& RunsModel::summary(int row) const { return entries_.at(size_t(row)).events->summary(); }

int RunsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(entries_.size()); }

int RunsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(entries_.size())) return {};
  const Entry& e = entries_[size_t(index.row())];
  const RunSummary& s = e.events->summary();
  if (role == RunDirRole) return e.dir;
  if (role == StateRole) return int(e.status.state);
  if (role == Qt::ToolTipRole) return QStringLiteral("%1\n%2").arg(e.dir, e.status.label());
  if (role == Qt::ForegroundRole && index.column() == StateColumn) {
    switch (e.status.state) {
      case RunState::Failed:
      case RunState::Interrupted: return toneColor(Tone::Error, QGuiApplication::palette());
      case RunState::Running: return toneColor(Tone::Running, QGuiApplication::palette());
      case RunState::Completed: return toneColor(Tone::Completed, QGuiApplication::palette());
      default: return {};
    }
  }
  if (role != Qt::DisplayRole && role != SortRole) return {};
  const bool sort = role == SortRole;
  switch (index.column()) {
    case NameColumn: return e.name;
    case StateColumn: return e.status.label();
    case StepColumn:
      if (sort) return s.lastStep;
      if (!s.hasEvents()) return QString();
      return s.maxTrainSteps > 0 ? QStringLiteral("%1 / %2").arg(s.lastStep).arg(s.maxTrainSteps)
                                 : QString::number(s.lastStep);
    case LossColumn:
      if (sort) return std::isfinite(s.lastLoss) ? s.lastLoss : -1.0;
      return std::isfinite(s.lastLoss) ? QString::number(s.lastLoss, 'g', 4) : QString();
    case JobColumn: return s.job;
    case UpdatedColumn: {
      if (sort) return s.lastTime;
      if (s.lastTime <= 0) return QString();
      const QDateTime t = QDateTime::fromMSecsSinceEpoch(qint64(s.lastTime * 1000));
      return QLocale().toString(t, QLocale::ShortFormat);
    }
    default: return {};
  }
}

QVariant RunsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Run");
    case StateColumn: return tr("State");
    case StepColumn: return tr("Step");
    case LossColumn: return tr("Loss");
    case JobColumn: return tr("Job");
    case UpdatedColumn: return tr("Updated");
    default: return {};
  }
}

}  // namespace ws
