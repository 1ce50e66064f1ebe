// SPDX-License-Identifier: Apache-2.0
// Shows the event log rows at or above a level, optionally containing a text.
#pragma once

#include <QSortFilterProxyModel>

#include "runfolder/event_format.h"

namespace ws {

class EventLevelFilter : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit EventLevelFilter(QObject* parent = nullptr);
  void setMinimumLevel(LogLevel level);
  LogLevel minimumLevel() const { return minLevel_; }

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  LogLevel minLevel_ = LogLevel::Info;
};

}  // namespace ws
