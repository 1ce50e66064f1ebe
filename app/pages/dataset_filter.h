// SPDX-License-Identifier: Apache-2.0
// The dataset page's filter box as a proxy over DatasetModel (RowFilter): words against the
// caption and file name, `!` for problems, `?` for a suggested caption to review, comparisons on
// the rows' numbers (motion_score < 0.5 and frames >= 49).
#pragma once

#include <QSortFilterProxyModel>

#include "item_models/dataset_model.h"
#include "item_models/row_filter.h"

namespace ws {

class DatasetFilter : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  void setText(const QString& text) {
    filter_ = RowFilter(text);
    invalidateFilter();
  }
  const RowFilter& rowFilter() const { return filter_; }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
    if (filter_.empty()) return true;
    const auto* m = static_cast<const DatasetModel*>(sourceModel());
    const QModelIndex i = m->index(row, 0, parent);
    return filter_.matches(
        [&](const QString& field) { return m->number(row, field); },
        i.data(DatasetModel::CaptionRole).toString() + QLatin1Char('\n') + i.data(DatasetModel::FileRole).toString(),
        !i.data(DatasetModel::ProblemsRole).toStringList().isEmpty(),
        !i.data(DatasetModel::SuggestionRole).toString().isEmpty());
  }

 private:
  RowFilter filter_;
};

}  // namespace ws
