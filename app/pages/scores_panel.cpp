// SPDX-License-Identifier: Apache-2.0
#include "pages/scores_panel.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>

#include "bar_chart.h"
#include "dataset/clip_scores.h"
#include "item_models/dataset_model.h"
#include "pages/dataset_page.h"

namespace ws {

ScoresPanel::ScoresPanel(DatasetPage* page) : QWidget(page), page_(page) {
  score_ = new QPushButton(tr("Score clips"), this);
  score_->setAccessibleName(tr("Score clips"));
  score_->setToolTip(
      tr("Motion (optical flow at 2 fps), sharpness and brightness of every row, as `wanstudio-engine "
         "dataset score` measures them"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setAccessibleName(tr("Cancel scoring"));
  cancel_->setVisible(false);
  field_ = new QComboBox(this);
  field_->setAccessibleName(tr("Histogram of"));
  field_->addItem(tr("motion"), QStringLiteral("motion_score"));
  field_->addItem(tr("sharpness"), QStringLiteral("sharpness"));
  field_->addItem(tr("brightness"), QStringLiteral("brightness"));
  field_->addItem(tr("frames"), QStringLiteral("frames"));
  percent_ = new QDoubleSpinBox(this);
  percent_->setAccessibleName(tr("Percent to exclude"));
  percent_->setRange(0.5, 99);
  percent_->setDecimals(1);
  percent_->setValue(10);
  percent_->setSuffix(QStringLiteral(" %"));
  exclude_ = new QPushButton(this);
  exclude_->setAccessibleName(tr("Exclude the lowest rows"));
  chart_ = new BarChart(this);
  chart_->setAccessibleName(tr("Histogram"));
  status_ = new QLabel(this);
  status_->setWordWrap(true);

  auto* top = new QHBoxLayout;
  top->addWidget(score_);
  top->addWidget(cancel_);
  top->addWidget(field_, 1);
  auto* cut = new QHBoxLayout;
  cut->addWidget(exclude_, 1);
  cut->addWidget(percent_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(chart_);
  layout->addLayout(cut);
  layout->addWidget(status_);
  layout->addStretch(1);

  connect(score_, &QPushButton::clicked, this, &ScoresPanel::scoreAll);
  connect(cancel_, &QPushButton::clicked, this, &ScoresPanel::cancel);
  connect(exclude_, &QPushButton::clicked, this, &ScoresPanel::excludeLowest);
  connect(field_, qOverload<int>(&QComboBox::currentIndexChanged), this, &ScoresPanel::refresh);
  connect(percent_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &ScoresPanel::refresh);
  connect(&watcher_, &QFutureWatcher<QVector<Result>>::finished, this, &ScoresPanel::scoringDone);
  DatasetModel* m = page_->model();
  connect(m, &QAbstractItemModel::modelReset, this, &ScoresPanel::refresh);
  connect(m, &QAbstractItemModel::rowsRemoved, this, &ScoresPanel::refresh);
  connect(m, &QAbstractItemModel::rowsInserted, this, &ScoresPanel::refresh);
  auto* progress = new QTimer(this);
  progress->setInterval(250);
  connect(progress, &QTimer::timeout, this, [this] {
    if (scoring() && done_)
      status_->setText(tr("scoring… %1 of %2").arg(done_->load()).arg(page_->model()->rowCount()));
  });
  progress->start();
  refresh();
}

ScoresPanel::~ScoresPanel() {
  cancel();
  watcher_.waitForFinished();
}

bool ScoresPanel::scoreAll() {
  DatasetModel* m = page_->model();
  if (scoring() || m->path().isEmpty() || m->rowCount() == 0) return false;
  if (!dataset::clip_scores_built()) {
    status_->setText(tr("this build has no OpenCV optical flow: scores cannot be made here"));
    return false;
  }
  std::vector<std::pair<int, std::string>> work;  // (row, file): the thread never touches the model
  for (int r = 0; r < m->rowCount(); ++r)
    work.emplace_back(r, m->data(m->index(r), DatasetModel::PathRole).toString().toStdString());
  cancelFlag_ = std::make_shared<std::atomic<bool>>(false);
  done_ = std::make_shared<std::atomic<int>>(0);
  scoredPath_ = m->path();
  auto cancelFlag = cancelFlag_;
  auto done = done_;
  watcher_.setFuture(QtConcurrent::run([work, cancelFlag, done] {
    QVector<Result> out;
    for (const auto& [row, file] : work) {
      if (cancelFlag->load()) break;
      Result r;
      r.row = row;
      try {
        const dataset::ClipScores s = dataset::score_clip(file);
        r.motion = s.motion;
        r.sharpness = s.sharpness;
        r.brightness = s.brightness;
      } catch (const std::exception& e) {
        r.error = QString::fromUtf8(e.what());
      }
      out << r;
      done->fetch_add(1);
    }
    return out;
  }));
  score_->setEnabled(false);
  cancel_->setVisible(true);
  status_->setText(tr("scoring…"));
  return true;
}

void ScoresPanel::cancel() {
  if (cancelFlag_) cancelFlag_->store(true);
}

void ScoresPanel::scoringDone() {
  score_->setEnabled(true);
  cancel_->setVisible(false);
  const QVector<Result> results = watcher_.result();
  DatasetModel* m = page_->model();
  QStringList errors;
  int scored = 0;
  // Rows removed or another dataset opened meanwhile: the numbers would land on other rows.
  const bool same = m->path() == scoredPath_ && !results.isEmpty() && results.back().row < m->rowCount();
  for (const Result& r : results) {
    if (!same) break;
    if (!r.error.isEmpty()) {
      errors << r.error;
      continue;
    }
    m->setScores(r.row, r.motion, r.sharpness, r.brightness);
    ++scored;
  }
  const bool cancelled = cancelFlag_ && cancelFlag_->load();
  QString text =
      same ? tr("scored %n row(s)", nullptr, scored) : tr("the dataset changed while scoring: nothing written");
  if (cancelled) text += tr(" (cancelled)");
  if (!errors.isEmpty()) text += tr("; %n could not be scored", nullptr, int(errors.size()));
  status_->setText(text);
  status_->setToolTip(errors.join(QLatin1Char('\n')));
  refresh();
  page_->refreshCurrent();
  Q_EMIT scoringFinished(scored, same ? QString() : text);
}

void ScoresPanel::refresh() {
  DatasetModel* m = page_->model();
  const QString field = field_->currentData().toString();
  std::vector<double> values;
  for (int r = 0; r < m->rowCount(); ++r)
    if (const double v = m->number(r, field); !std::isnan(v)) values.push_back(v);
  exclude_->setText(tr("Exclude the lowest %1 % by %2").arg(percent_->value()).arg(field_->currentText()));
  exclude_->setEnabled(!values.empty() && !scoring());
  QVector<BarChart::Bar> bars;
  if (!values.empty()) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const double a = *lo, width = (*hi - *lo) / kBins;
    QVector<int> counts(kBins, 0);
    for (double v : values) ++counts[width > 0 ? std::min(kBins - 1, int((v - a) / width)) : 0];
    for (int i = 0; i < kBins; ++i)
      bars << BarChart::Bar{QStringLiteral("%1–%2").arg(a + i * width, 0, 'g', 4).arg(a + (i + 1) * width, 0, 'g', 4),
                            double(counts[i]), tr("rows")};
    if (width <= 0) bars.resize(1);
    double cut = 0;
    m->lowestRows(field, percent_->value(), &cut);
    chart_->setMutedBefore(width > 0 && !std::isnan(cut) ? std::min(kBins, int((cut - a) / width)) : -1);
  } else {
    chart_->setMutedBefore(-1);
  }
  chart_->setBars(bars);
  if (!scoring())
    status_->setText(values.empty() ? tr("no row has a %1 yet: Score clips").arg(field_->currentText())
                                    : tr("%n row(s) with a value", nullptr, int(values.size())));
}

int ScoresPanel::excludeLowest() {
  DatasetModel* m = page_->model();
  double cut = 0;
  const QVector<int> rows = m->lowestRows(field_->currentData().toString(), percent_->value(), &cut);
  const int removed = m->removeDatasetRows(rows);
  status_->setText(removed > 0
                       ? tr("excluded %n row(s) at or below %1 (Undo remove puts them back)", nullptr, removed).arg(cut)
                       : tr("%1 % of the scored rows is less than one row: nothing excluded").arg(percent_->value()));
  return removed;
}

}  // namespace ws
