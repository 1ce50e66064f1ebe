// SPDX-License-Identifier: Apache-2.0
// The dataset page's Buckets tab: samples an epoch gives per bucket for the run options chosen
// on the page (DatasetModel::bucketCounts, the loader's own arithmetic), as a bar chart.
#pragma once

#include <QWidget>

class QLabel;

namespace ws {

class BarChart;
class DatasetModel;

class BucketsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit BucketsPanel(QWidget* parent = nullptr);
  void refresh(const DatasetModel* model, const QString& extraction);
  BarChart* chart() const { return chart_; }

 private:
  BarChart* chart_;
  QLabel* note_;
};

}  // namespace ws
