// SPDX-License-Identifier: Apache-2.0
#include "item_models/event_level_filter.h"

#include "item_models/event_log_model.h"

namespace ws {

EventLevelFilter::EventLevelFilter(QObject* parent) : QSortFilterProxyModel(parent) {
  setFilterCaseSensitivity(Qt::CaseInsensitive);
}

void EventLevelFilter::setMinimumLevel(LogLevel level) {
  if (level == minLevel_) return;
  minLevel_ = level;
  invalidateFilter();
}

bool EventLevelFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  const QModelIndex idx = sourceModel()->index(sourceRow, 0, sourceParent);
  if (idx.data(EventLogModel::LevelRole).toInt() < int(minLevel_)) return false;
  return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

}  // namespace ws
