// SPDX-License-Identifier: Apache-2.0
#include "runfolder/expert_curves.h"

#include <QCoreApplication>

#include <cmath>
#include <iterator>

namespace ws {

void ExpertCurves::clear() {
  order_.clear();
  counts_.clear();
  total_ = 0;
}

QString ExpertCurves::seriesName(Metric m, const RunEvents::StepPoint& p) {
  // samples_per_s already sums every process and expert: one series for the run.
  if (m == SamplesPerS) return QStringLiteral("clips/s");
  return p.expert.isEmpty() ? QStringLiteral("loss") : p.expert;
}

double ExpertCurves::value(Metric m, const RunEvents::StepPoint& p) {
  switch (m) {
    case Loss: return p.loss;
    case LearningRate: return p.lr;
    case GradNorm: return p.gradNorm;
    case SamplesPerS: return p.samplesPerS;
    case StepTime: return p.stepS;
    case MetricCount: break;
  }
  return 0;
}

QStringList ExpertCurves::phaseNames() {
  return {QCoreApplication::translate("ExpertCurves", "step"), QCoreApplication::translate("ExpertCurves", "model"),
          QCoreApplication::translate("ExpertCurves", "VAE"), QCoreApplication::translate("ExpertCurves", "data wait"),
          QCoreApplication::translate("ExpertCurves", "copy wait (block swap)")};
}

double ExpertCurves::phaseValue(int phase, const RunEvents::StepPoint& p) {
  const double v[] = {p.stepS, p.modelS, p.vaeS, p.dataWaitS, p.swapWaitS};
  return phase >= 0 && phase < int(std::size(v)) ? v[phase] : std::nan("");
}

QString ExpertCurves::metricTitle(Metric m) {
  switch (m) {
    case Loss: return QCoreApplication::translate("ExpertCurves", "Loss");
    case LearningRate: return QCoreApplication::translate("ExpertCurves", "Learning rate");
    case GradNorm: return QCoreApplication::translate("ExpertCurves", "Grad norm");
    case SamplesPerS: return QCoreApplication::translate("ExpertCurves", "Clips/s");
    case StepTime: return QCoreApplication::translate("ExpertCurves", "Step time");
    case MetricCount: break;
  }
  return {};
}

ExpertCurves::Batches ExpertCurves::add(const QVector<RunEvents::StepPoint>& steps, int first) {
  Batches out;
  for (qsizetype i = std::max(0, first); i < steps.size(); ++i) {
    const RunEvents::StepPoint& p = steps[i];
    if (p.dropped) continue;
    const QString expert = seriesName(Loss, p);
    if (!counts_.contains(expert)) order_ << expert;
    ++counts_[expert];
    ++total_;
    for (int m = 0; m < MetricCount; ++m) {
      if (m == StepTime) continue;
      Points& pts = out[size_t(m)][seriesName(Metric(m), p)];
      pts.steps << double(axis_ == Axis::ExpertStep && perExpert(Metric(m)) ? p.expertStep : p.step);
      pts.values << value(Metric(m), p);
    }
    // Runs from before the split have no step time: no points rather than NaN ones.
    const QStringList phases = phaseNames();
    for (int k = 0; k < phases.size(); ++k) {
      const double v = phaseValue(k, p);
      if (!std::isfinite(v)) continue;
      Points& pts = out[size_t(StepTime)][phases[k]];
      pts.steps << double(p.step);
      pts.values << v;
    }
  }
  return out;
}

QList<ExpertCurves::Share> ExpertCurves::shares() const {
  QList<Share> out;
  for (const QString& e : order_) {
    const qint64 n = counts_.value(e);
    out.push_back({e, n, total_ > 0 ? double(n) / double(total_) : 0.0});
  }
  return out;
}

bool ExpertCurves::isMultiExpert() const {
  return order_.size() > 1 || order_.contains(QStringLiteral("high")) || order_.contains(QStringLiteral("low"));
}

}  // namespace ws
