// SPDX-License-Identifier: Apache-2.0
#include "loss_chart.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

#include "decimation.h"
#include "ema_smoothing.h"
#include "theme.h"

namespace ws {
namespace {

QColor seriesColor(const QString& name, int index) {
  if (name == QLatin1String("high")) return QColor(0xe3, 0x6b, 0x1c);
  if (name == QLatin1String("low")) return QColor(0x1f, 0x6f, 0xeb);
  if (name == QLatin1String("upsampler")) return QColor(0x1a, 0x7f, 0x37);
  // The first four apart, so the step-time chart's four phases never share a colour; eight for
  // the runs of a loss overlay.
  static const QColor palette[] = {QColor(0x82, 0x50, 0xdf), QColor(0xbf, 0x38, 0x89), QColor(0x0a, 0x7e, 0xa4),
                                   QColor(0x57, 0x60, 0x6a), QColor(0xe3, 0x6b, 0x1c), QColor(0x1f, 0x6f, 0xeb),
                                   QColor(0x1a, 0x7f, 0x37), QColor(0xb0, 0x8b, 0x00)};
  return palette[index % 8];
}

}  // namespace

LossChart::LossChart(QWidget* parent) : QWidget(parent) {
  plot_ = new QCustomPlot(this);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->setNoAntialiasingOnDrag(true);
  plot_->xAxis->setLabel(tr("step"));
  plot_->yAxis->setLabel(tr("loss"));
  plot_->legend->setVisible(true);
  plot_->setMinimumHeight(160);
  emptyText_ = new QCPItemText(plot_);
  emptyText_->position->setType(QCPItemPosition::ptAxisRectRatio);
  emptyText_->position->setCoords(0.5, 0.5);
  emptyText_->setText(tr("No loss points yet"));
  emptyText_->setColor(Qt::gray);
  // Once the user pans or zooms, stop snapping back to the data; double-click to follow again.
  connect(plot_, &QCustomPlot::mousePress, this, [this] { followData_ = false; });
  connect(plot_, &QCustomPlot::mouseWheel, this, [this] { followData_ = false; });
  connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] {
    fitToData();
    Q_EMIT viewChanged();
  });
  // Decimation depends on the visible range: redo it after pan/zoom.
  connect(plot_->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] {
    if (rebuilding_ || applyingView_) {
      if (applyingView_) scheduleReplot();
      return;
    }
    // Not our own rebuild: the user (or a program acting for one) moved the view.
    followData_ = false;
    scheduleReplot();
    Q_EMIT viewChanged();
  });

  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setAccessibleName(tr("Loss smoothing"));
  slider_->setRange(0, 990);  // beta in [0, 0.99]
  slider_->setValue(int(beta_ * 1000));
  slider_->setToolTip(tr("EMA smoothing of the loss (bias-corrected, as in TensorBoard)"));
  smoothingLabel_ = new QLabel(this);
  smoothingLabel_->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("0.000")));
  connect(slider_, &QSlider::valueChanged, this, [this](int v) { setSmoothing(v / 1000.0); });
  logY_ = new QCheckBox(tr("Log scale"), this);
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    plot_->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (on) plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    scheduleReplot();
  });
  auto* fit = new QPushButton(tr("Fit"), this);
  fit->setToolTip(tr("Show all data and follow new points (also: double-click the chart)"));
  connect(fit, &QPushButton::clicked, this, [this] {
    fitToData();
    Q_EMIT viewChanged();
  });
  auto* exportButton = new QPushButton(tr("Export PNG…"), this);
  connect(exportButton, &QPushButton::clicked, this, &LossChart::exportWithDialog);

  auto* controls = new QHBoxLayout;
  smoothingTitle_ = new QLabel(tr("Smoothing"), this);
  controls->addWidget(smoothingTitle_);
  controls->addWidget(slider_, 1);
  controls->addWidget(smoothingLabel_);
  controls->addStretch();  // keeps the buttons compact when the slider is hidden
  controls->addWidget(logY_);
  controls->addWidget(fit);
  controls->addWidget(exportButton);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_, 1);
  layout->addLayout(controls);

  replotTimer_.setSingleShot(true);
  replotTimer_.setInterval(150);  // live runs add points often; redraw a few times a second
  connect(&replotTimer_, &QTimer::timeout, this, &LossChart::rebuild);
  setSmoothing(beta_);
  styleChart(plot_);
}

void LossChart::clear() {
  for (const Series& s : std::as_const(series_)) {
    plot_->removeGraph(s.raw);
    plot_->removeGraph(s.smooth);
  }
  series_.clear();
  order_.clear();
  followData_ = true;
  scheduleReplot();
}

LossChart::Series& LossChart::series(const QString& name) {
  auto it = series_.find(name);
  if (it != series_.end()) return *it;
  Series s;
  const QColor color = seriesColor(name, int(order_.size()));
  QColor faint = color;
  faint.setAlpha(70);
  s.raw = plot_->addGraph();
  s.raw->setLineStyle(QCPGraph::lsNone);
  s.raw->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, faint, faint, 3));
  s.raw->setAdaptiveSampling(false);  // we decimate ourselves, keeping the extremes
  s.raw->removeFromLegend();
  s.raw->setVisible(smoothingOn_);
  s.smooth = plot_->addGraph();
  s.smooth->setPen(QPen(color, 2));
  s.smooth->setName(name.isEmpty() ? tr("loss") : name);
  order_ << name;
  return *series_.insert(name, s);
}

void LossChart::addPoint(const QString& name, double x, double y) {
  Series& s = series(name);
  if (!s.x.isEmpty() && x < s.x.last()) s.sorted = false;
  s.x.push_back(x);
  s.y.push_back(y);
  scheduleReplot();
}

void LossChart::addPoints(const QString& name, const QVector<double>& xs, const QVector<double>& ys) {
  Series& s = series(name);
  const qsizetype n = std::min(xs.size(), ys.size());
  s.x.reserve(s.x.size() + n);
  s.y.reserve(s.y.size() + n);
  for (qsizetype i = 0; i < n; ++i) {
    if (!s.x.isEmpty() && xs[i] < s.x.last()) s.sorted = false;
    s.x.push_back(xs[i]);
    s.y.push_back(ys[i]);
  }
  scheduleReplot();
}

void LossChart::setSmoothing(double beta) {
  const double before = beta_;
  beta_ = std::clamp(beta, 0.0, 0.99);
  smoothingLabel_->setText(QString::number(beta_, 'f', 3));
  const int v = int(std::lround(beta_ * 1000));
  if (slider_->value() != v) {
    const QSignalBlocker block(slider_);
    slider_->setValue(v);
  }
  scheduleReplot();
  if (beta_ != before) Q_EMIT smoothingChanged(beta_);
}

void LossChart::setSmoothingEnabled(bool on) {
  smoothingOn_ = on;
  for (QWidget* w :
       {static_cast<QWidget*>(smoothingTitle_), static_cast<QWidget*>(slider_), static_cast<QWidget*>(smoothingLabel_)})
    w->setVisible(on);
  for (const Series& s : std::as_const(series_)) s.raw->setVisible(on);
  scheduleReplot();
}

void LossChart::setEmptyText(const QString& text) {
  emptyText_->setText(text);
  scheduleReplot();
}

LossChart::View LossChart::view() const {
  const QCPRange r = plot_->xAxis->range();
  return {followData_, r.lower, r.upper};
}

void LossChart::setView(const View& v) {
  followData_ = v.follow;
  if (!v.follow && v.upper > v.lower) {
    applyingView_ = true;
    plot_->xAxis->setRange(v.lower, v.upper);
    applyingView_ = false;
  }
  scheduleReplot();
}

void LossChart::setAxisLabels(const QString& x, const QString& y) {
  plot_->xAxis->setLabel(x);
  plot_->yAxis->setLabel(y);
  scheduleReplot();
}

qsizetype LossChart::pointCount(const QString& name) const {
  auto it = series_.constFind(name);
  return it == series_.cend() ? 0 : it->x.size();
}

qsizetype LossChart::drawnPointCount() const {
  qsizetype n = 0;
  for (const Series& s : series_) n += s.raw->dataCount();
  return n;
}

void LossChart::scheduleReplot() {
  if (!replotTimer_.isActive()) replotTimer_.start();
}

void LossChart::replotNow() {
  replotTimer_.stop();
  rebuild();
}

void LossChart::fitToData() {
  followData_ = true;
  replotNow();
}

void LossChart::rebuild() {
  rebuilding_ = true;
  // Follow the data: the x range spans every point; y is rescaled to what is drawn below.
  if (followData_) {
    double lo = 0, hi = 0;
    bool any = false;
    for (Series& s : series_) {
      if (!s.sorted) {
        QVector<qsizetype> idx(s.x.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](qsizetype a, qsizetype b) { return s.x[a] < s.x[b]; });
        QVector<double> x(s.x.size()), y(s.y.size());
        for (qsizetype i = 0; i < idx.size(); ++i) x[i] = s.x[idx[i]], y[i] = s.y[idx[i]];
        s.x.swap(x);
        s.y.swap(y);
        s.sorted = true;
      }
      if (s.x.isEmpty()) continue;
      lo = any ? std::min(lo, s.x.first()) : s.x.first();
      hi = any ? std::max(hi, s.x.last()) : s.x.last();
      any = true;
    }
    if (any) plot_->xAxis->setRange(lo, hi > lo ? hi : lo + 1);
  }
  const QCPRange range = plot_->xAxis->range();
  const int buckets = std::max(100, plot_->axisRect()->width());
  QVector<double> dx, dy;
  for (Series& s : series_) {
    decimateMinMax(s.x, s.y, range.lower, range.upper, buckets, dx, dy);
    s.raw->setData(dx, dy, true);
    // Without smoothing the line is the raw series itself.
    decimateMinMax(s.x, smoothingOn_ ? emaSmooth(s.y, beta_) : s.y, range.lower, range.upper, buckets, dx, dy);
    s.smooth->setData(dx, dy, true);
  }
  bool anyDrawn = false;
  for (const Series& s : std::as_const(series_)) anyDrawn = anyDrawn || s.raw->dataCount() > 0;
  if (followData_ && anyDrawn) {
    plot_->yAxis->rescale(true);
    plot_->yAxis->scaleRange(1.05, plot_->yAxis->range().center());
  }
  plot_->legend->setVisible(series_.size() > 1);
  bool anyData = false;
  for (const Series& s : std::as_const(series_)) anyData = anyData || !s.x.isEmpty();
  emptyText_->setVisible(!anyData);
  plot_->replot(QCustomPlot::rpQueuedReplot);
  rebuilding_ = false;
}

bool LossChart::exportPng(const QString& path, int width, int height) {
  replotNow();
  plot_->replot(QCustomPlot::rpImmediateRefresh);
  return plot_->savePng(path, width, height);
}

void LossChart::exportWithDialog() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), exportName_, tr("PNG images (*.png)"));
  if (!path.isEmpty()) exportPng(path);
}

}  // namespace ws
