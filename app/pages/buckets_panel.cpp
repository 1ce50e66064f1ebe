// SPDX-License-Identifier: Apache-2.0
#include "pages/buckets_panel.h"

#include <QLabel>
#include <QVBoxLayout>

#include "bar_chart.h"
#include "item_models/dataset_model.h"

namespace ws {

BucketsPanel::BucketsPanel(QWidget* parent) : QWidget(parent) {
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  chart_ = new BarChart(this);
  chart_->setAccessibleName(tr("Samples per bucket"));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(note_);
  layout->addWidget(chart_);
  layout->addStretch(1);
}

void BucketsPanel::refresh(const DatasetModel* model, const QString& extraction) {
  QVector<BarChart::Bar> bars;
  qint64 samples = 0;
  int rows = 0;
  for (const auto& b : model->bucketCounts()) {
    bars << BarChart::Bar{b.bucket, double(b.samples), tr("samples, %n row(s)", nullptr, b.rows)};
    if (b.bucket != DatasetModel::tr("dropped") && b.bucket != DatasetModel::tr("unknown")) {
      samples += b.samples;
      rows += b.rows;
    }
  }
  chart_->setBars(bars);
  note_->setText(
      tr("%1 samples an epoch from %n row(s) (%2 frame extraction), by the bucket each trains at", nullptr, rows)
          .arg(samples)
          .arg(extraction));
}

}  // namespace ws
