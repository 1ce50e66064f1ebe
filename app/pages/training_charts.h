// SPDX-License-Identifier: Apache-2.0
// The run page's charts: loss (smoothing slider), learning rate, grad norm and clips/s, one
// tab each, with one series per expert on a step axis the tabs share, and each expert's
// share of the steps above them; dual-expert runs with an eval set add an Eval tab (the combined
// eval loss and each expert's over the timesteps it owns). Fed from RunEvents as steps arrive;
// rebuilt on a resume.
#pragma once

#include <QWidget>

#include "runfolder/expert_curves.h"

class QCheckBox;
class QLabel;
class QTabWidget;

namespace ws {

class LossChart;
class RunEvents;

class TrainingCharts : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingCharts(RunEvents* events, QWidget* parent = nullptr);

  LossChart* chart(ExpertCurves::Metric m) const { return charts_[size_t(m)]; }
  LossChart* lossChart() const { return chart(ExpertCurves::Loss); }
  LossChart* evalChart() const { return eval_; }
  QTabWidget* tabs() const { return tabs_; }
  QLabel* shareLabel() const { return share_; }
  // Dual-expert runs: loss, learning rate and grad norm over each expert's own steps.
  QCheckBox* expertAxis() const { return expertAxis_; }
  const ExpertCurves& curves() const { return curves_; }
  void replotNow();

 private:
  void addSteps(int first);
  void addEvals();
  void rebuild();
  void updateShare();
  void shareView(LossChart* from);

  RunEvents* events_;
  ExpertCurves curves_;
  std::array<LossChart*, ExpertCurves::MetricCount> charts_{};
  QTabWidget* tabs_;
  QLabel* share_;
  QCheckBox* expertAxis_;
  LossChart* eval_;
  int evalSeen_ = 0;  // events() already scanned for `eval`
  std::array<QString, ExpertCurves::MetricCount> chartYLabels_;
};

}  // namespace ws
