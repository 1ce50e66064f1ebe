// SPDX-License-Identifier: Apache-2.0
#include "pages/training_charts.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSettings>
#include <QTabWidget>
#include <QVBoxLayout>

#include "loss_chart.h"
#include "runfolder/run_events.h"

namespace ws {

TrainingCharts::TrainingCharts(RunEvents* events, QWidget* parent) : QWidget(parent), events_(events) {
  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  const QString files[] = {QStringLiteral("loss.png"), QStringLiteral("learning-rate.png"),
                           QStringLiteral("grad-norm.png"), QStringLiteral("clips-per-second.png"),
                           QStringLiteral("step-time.png")};
  const QString empty[] = {tr("No loss points yet"), tr("No learning-rate points yet"), tr("No grad-norm points yet"),
                           tr("No throughput points yet"),
                           tr("No step times yet (runs before this version did not record them)")};
  const QString yLabels[] = {tr("loss"), tr("learning rate"), tr("grad norm (before clipping)"), tr("clips/s"),
                             tr("seconds per step (data wait, VAE, model)")};
  for (int m = 0; m < ExpertCurves::MetricCount; ++m) {
    auto* c = new LossChart(tabs_);
    c->setObjectName(QStringLiteral("chart_%1").arg(m));
    c->setAxisLabels(tr("step"), yLabels[m]);
    chartYLabels_[size_t(m)] = yLabels[m];
    c->setEmptyText(empty[m]);
    c->setExportName(files[m]);
    charts_[size_t(m)] = c;
    tabs_->addTab(c, ExpertCurves::metricTitle(ExpertCurves::Metric(m)));
    connect(c, &LossChart::viewChanged, this, [this, c] { shareView(c); });
  }
  // The schedule is exact: smoothing would only blur warmup and decay.
  chart(ExpertCurves::LearningRate)->setSmoothingEnabled(false);
  chart(ExpertCurves::SamplesPerS)->setSmoothingEnabled(false);
  // The loss smoothing is a habit, not a property of one run.
  QSettings settings;
  LossChart* loss = lossChart();
  loss->setSmoothing(settings.value(QStringLiteral("charts/lossSmoothing"), loss->smoothing()).toDouble());
  connect(loss, &LossChart::smoothingChanged, this,
          [](double beta) { QSettings().setValue(QStringLiteral("charts/lossSmoothing"), beta); });
  // A tab shown after another was zoomed shows the same steps.
  connect(tabs_, &QTabWidget::currentChanged, this, [this] {
    if (auto* c = qobject_cast<LossChart*>(tabs_->currentWidget())) c->replotNow();
  });

  // Eval points are few and exact (a fixed eval set): no smoothing.
  eval_ = new LossChart(tabs_);
  eval_->setObjectName(QStringLiteral("chart_eval"));
  eval_->setAxisLabels(tr("step"), tr("eval loss (mean over timesteps)"));
  eval_->setEmptyText(tr("No eval yet (train-experts with eval_data_meta)"));
  eval_->setExportName(QStringLiteral("eval-loss.png"));
  eval_->setSmoothingEnabled(false);
  tabs_->addTab(eval_, tr("Eval"));
  connect(eval_, &LossChart::viewChanged, this, [this] { shareView(eval_); });

  share_ = new QLabel(this);
  share_->setObjectName(QStringLiteral("expertShare"));
  share_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  share_->hide();
  expertAxis_ = new QCheckBox(tr("x axis: each expert's own steps"), this);
  expertAxis_->setToolTip(
      tr("Loss, learning rate and grad norm over each expert's step count (its warm-up and "
         "schedule run on those), instead of the run's steps"));
  expertAxis_->hide();
  connect(expertAxis_, &QCheckBox::toggled, this, [this](bool on) {
    curves_.setAxis(on ? ExpertCurves::Axis::ExpertStep : ExpertCurves::Axis::RunStep);
    for (int m = 0; m < ExpertCurves::MetricCount; ++m)
      if (ExpertCurves::perExpert(ExpertCurves::Metric(m)))
        charts_[size_t(m)]->setAxisLabels(on ? tr("expert step") : tr("step"), chartYLabels_[size_t(m)]);
    rebuild();
    for (LossChart* c : charts_) c->fitToData();
  });

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* top = new QHBoxLayout;
  top->addWidget(share_, 1);
  top->addWidget(expertAxis_);
  layout->addLayout(top);
  layout->addWidget(tabs_, 1);

  connect(events_, &RunEvents::stepsAppended, this, &TrainingCharts::addSteps);
  connect(events_, &RunEvents::rowsAppended, this, &TrainingCharts::addEvals);
  connect(events_, &RunEvents::pointsReset, this, &TrainingCharts::rebuild);
  connect(events_, &RunEvents::cleared, this, &TrainingCharts::rebuild);
  rebuild();
}

void TrainingCharts::addSteps(int first) {
  // Batched per series: a long run arrives as one 100k-point chunk.
  const ExpertCurves::Batches batches = curves_.add(events_->steps(), first);
  for (int m = 0; m < ExpertCurves::MetricCount; ++m) {
    const ExpertCurves::Batch& b = batches[size_t(m)];
    for (auto it = b.cbegin(); it != b.cend(); ++it) charts_[size_t(m)]->addPoints(it.key(), it->steps, it->values);
  }
  // Only runs that swap blocks have a copy wait: the axis names it then, and only then.
  LossChart* time = chart(ExpertCurves::StepTime);
  const bool swaps = time->seriesNames().contains(ExpertCurves::phaseNames().value(ExpertCurves::kCopyWaitPhase));
  time->setAxisLabels(tr("step"), swaps ? tr("seconds per step (data wait, VAE, model; copy wait is part of model)")
                                        : chartYLabels_[ExpertCurves::StepTime]);
  updateShare();
}

void TrainingCharts::addEvals() {
  const QVector<RunEvent>& evs = events_->events();
  for (; evalSeen_ < evs.size(); ++evalSeen_) {
    const RunEvent& e = evs[evalSeen_];
    if (e.type != QLatin1String("eval") || e.dropped) continue;
    const double step = double(e.step());
    // "all" is the combined loss; high/low are each expert's mean over its own timesteps.
    for (auto [key, name] : {std::pair{QLatin1String("loss"), QStringLiteral("all")},
                             std::pair{QLatin1String("loss_high"), QStringLiteral("high")},
                             std::pair{QLatin1String("loss_low"), QStringLiteral("low")}}) {
      const double v = e.number(key, qQNaN());
      if (!qIsNaN(v)) eval_->addPoint(name, step, v);
    }
  }
}

void TrainingCharts::rebuild() {
  curves_.clear();
  for (LossChart* c : charts_) c->clear();
  eval_->clear();
  evalSeen_ = 0;
  addSteps(0);
  addEvals();
}

void TrainingCharts::replotNow() {
  for (LossChart* c : charts_) c->replotNow();
  eval_->replotNow();
}

void TrainingCharts::updateShare() {
  expertAxis_->setVisible(curves_.isMultiExpert());
  if (!curves_.isMultiExpert()) {
    share_->hide();
    return;
  }
  QStringList parts;
  for (const ExpertCurves::Share& s : curves_.shares())
    parts << tr("%1 %2 (%3%)").arg(s.expert).arg(s.steps).arg(QString::number(100.0 * s.fraction, 'f', 1));
  share_->setText(tr("Steps per expert: %1").arg(parts.join(QStringLiteral("  ·  "))));
  share_->show();
}

void TrainingCharts::shareView(LossChart* from) {
  // Only charts on the same kind of x axis share a view.
  const auto axisOf = [this](LossChart* c) {
    for (int m = 0; m < ExpertCurves::MetricCount; ++m)
      if (charts_[size_t(m)] == c)
        return curves_.axis() == ExpertCurves::Axis::ExpertStep && ExpertCurves::perExpert(ExpertCurves::Metric(m));
    return false;
  };
  const LossChart::View v = from->view();
  for (LossChart* c : charts_)
    if (c != from && axisOf(c) == axisOf(from)) c->setView(v);
  if (eval_ != from && !axisOf(from)) eval_->setView(v);
}

}  // namespace ws
