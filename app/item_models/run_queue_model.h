// SPDX-License-Identifier: Apache-2.0
// The run queue as a table the Queue dock binds to: position, run, job, processes, state (with
// a failed run's reason) and estimated start. Follows RunQueue::changed; the estimate column
// ticks with a clock.
#pragma once

#include <QAbstractTableModel>
#include <QTimer>

namespace ws {

class RunQueue;

class RunQueueModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { PositionColumn, RunColumn, JobColumn, ProcessesColumn, StateColumn, StartColumn, ColumnCount };
  enum Role { IdRole = Qt::UserRole + 1 };

  explicit RunQueueModel(RunQueue* queue, QObject* parent = nullptr);
  RunQueue* queue() const { return queue_; }
  QString idAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  QString startText(int row) const;

  RunQueue* queue_;
  QTimer clock_;
};

}  // namespace ws
