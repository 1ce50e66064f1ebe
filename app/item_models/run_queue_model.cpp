// SPDX-License-Identifier: Apache-2.0
#include "item_models/run_queue_model.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

#include "jobs/run_queue.h"

namespace ws {

RunQueueModel::RunQueueModel(RunQueue* queue, QObject* parent) : QAbstractTableModel(parent), queue_(queue) {
  connect(queue_, &RunQueue::changed, this, [this] {
    beginResetModel();
    endResetModel();
  });
  clock_.setInterval(10'000);
  connect(&clock_, &QTimer::timeout, this, [this] {
    if (rowCount() > 0) Q_EMIT dataChanged(index(0, StartColumn), index(rowCount() - 1, StartColumn));
  });
  clock_.start();
}

QString RunQueueModel::idAt(int row) const {
  return row >= 0 && row < rowCount() ? queue_->entries().at(row).id : QString();
}

int RunQueueModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(queue_->entries().size());
}
int RunQueueModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString RunQueueModel::startText(int row) const {
  const QueueEntry& e = queue_->entries().at(row);
  if (e.state == QueueEntry::State::Starting) return tr("starting now");
  if (e.state == QueueEntry::State::Failed) return tr("—");
  if (queue_->paused()) return tr("when the queue resumes");
  if (!queue_->waitingFor().isEmpty())
    return tr("after %1 (running elsewhere)").arg(QFileInfo(queue_->waitingFor()).fileName());
  const qint64 at = queue_->estimatedStartMs(row);
  if (at < 0) {
    int ahead = 0;  // runs that train before this one
    for (int i = 0; i < row; ++i) ahead += queue_->entries().at(i).state != QueueEntry::State::Failed;
    return ahead == 0 ? tr("after the run in progress") : tr("after %n queued run(s)", nullptr, ahead);
  }
  const qint64 inS = std::max<qint64>(0, (at - QDateTime::currentMSecsSinceEpoch()) / 1000);
  if (inS < 60) return tr("next");
  return tr("~%1 (in %2 min)")
      .arg(QDateTime::fromMSecsSinceEpoch(at).toString(QStringLiteral("HH:mm")), QString::number(inS / 60));
}

QVariant RunQueueModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const QueueEntry& e = queue_->entries().at(index.row());
  if (role == IdRole) return e.id;
  if (role == Qt::ToolTipRole) {
    if (e.state == QueueEntry::State::Failed) return tr("Could not start: %1").arg(e.reason);
    return QDir::toNativeSeparators(e.runYaml);
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case PositionColumn: return index.row() + 1;
    case RunColumn: return QFileInfo(e.runDir.isEmpty() ? QFileInfo(e.runYaml).absolutePath() : e.runDir).fileName();
    case JobColumn: return e.job;
    case ProcessesColumn: return e.processes;
    case StateColumn:
      switch (e.state) {
        case QueueEntry::State::Waiting:
          return queue_->paused() ? tr("paused")
                 : queue_->waitingFor().isEmpty()
                     ? tr("waiting")
                     : tr("waiting for %1, running elsewhere").arg(QFileInfo(queue_->waitingFor()).fileName());
        case QueueEntry::State::Starting: return tr("starting");
        case QueueEntry::State::Failed: return tr("failed: %1").arg(e.reason);
      }
      return {};
    case StartColumn: return startText(index.row());
  }
  return {};
}

QVariant RunQueueModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case PositionColumn: return tr("#");
    case RunColumn: return tr("Run");
    case JobColumn: return tr("Job");
    case ProcessesColumn: return tr("Proc.");
    case StateColumn: return tr("State");
    case StartColumn: return tr("Estimated start");
  }
  return {};
}

}  // namespace ws
