// SPDX-License-Identifier: Apache-2.0
// The chart model of a training run: splits step points into one series per expert for each
// metric (loss, learning rate, grad norm on a shared step axis; throughput for the whole run;
// the step's time as one series per phase: data wait, VAE, model, the whole step, and block swap's
// copy wait in runs that swap blocks) and counts
// each expert's share of the steps. Dropped points (discarded by a resume) are
// left out. It hands out only what is new, so the charts keep the data and draw it.
#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QVector>

#include <array>

#include "runfolder/run_events.h"

namespace ws {

class ExpertCurves {
 public:
  enum Metric { Loss, LearningRate, GradNorm, SamplesPerS, StepTime, MetricCount };
  struct Points {
    QVector<double> steps, values;
  };
  using Batch = QMap<QString, Points>;  // series name -> new points
  using Batches = std::array<Batch, MetricCount>;
  struct Share {
    QString expert;
    qint64 steps = 0;
    double fraction = 0;  // of all counted steps
  };

  // Where per-expert points sit on the x axis: the run's step, or each expert's own step count (a
  // high-noise expert's 5-step warm-up then looks 5 steps long, not 40). Throughput and step time
  // belong to the run and stay on its steps. Takes effect for points added after it.
  enum class Axis { RunStep, ExpertStep };
  void setAxis(Axis axis) { axis_ = axis; }
  Axis axis() const { return axis_; }
  static bool perExpert(Metric m) { return m == Loss || m == LearningRate || m == GradNorm; }

  void clear();
  // Takes steps[first..]: returns their points per metric and series, and counts them.
  Batches add(const QVector<RunEvents::StepPoint>& steps, int first = 0);

  // Experts in the order they first appeared, with their share of the steps.
  QList<Share> shares() const;
  qint64 totalSteps() const { return total_; }
  // More than one expert, or a dual-expert run's "high"/"low": the share is worth showing.
  bool isMultiExpert() const;

  static QString seriesName(Metric m, const RunEvents::StepPoint& p);
  static double value(Metric m, const RunEvents::StepPoint& p);
  // StepTime's series, in drawing order, and a point's value in each. The copy wait (block swap's
  // host-to-device copies, part of the model's time) only has points in runs that swap blocks.
  static constexpr int kCopyWaitPhase = 4;
  static QStringList phaseNames();
  static double phaseValue(int phase, const RunEvents::StepPoint& p);
  static QString metricTitle(Metric m);  // "Loss", "Learning rate", ...

 private:
  QStringList order_;
  QMap<QString, qint64> counts_;
  qint64 total_ = 0;
  Axis axis_ = Axis::RunStep;
};

}  // namespace ws
