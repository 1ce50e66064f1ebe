// SPDX-License-Identifier: Apache-2.0
// A list model over a RunEvents log (every event but heartbeats), one formatted line a row.
#pragma once

#include <QAbstractListModel>

namespace ws {

class RunEvents;

class EventLogModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Role { LevelRole = Qt::UserRole + 1, TypeRole };

  explicit EventLogModel(RunEvents* events, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

 private:
  RunEvents* events_;
  int rows_ = 0;  // what the views were told; RunEvents grows before it notifies
};

}  // namespace ws
