// SPDX-License-Identifier: Apache-2.0
// A metric vs step (loss by default): raw points (faint dots) and a bias-corrected EMA line
// per series, with a smoothing slider. Keeps every point; draws a min/max decimation of the
// visible range, so 100k+ points stay interactive. One series per name ("upsampler", "high",
// "low", ...). Several charts can share one step axis through view()/setView().
#pragma once

#include <QHash>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

class QCheckBox;
class QCPGraph;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QSlider;

namespace ws {

class LossChart : public QWidget {
  Q_OBJECT
 public:
  explicit LossChart(QWidget* parent = nullptr);

  void clear();
  void addPoint(const QString& series, double x, double y);
  void addPoints(const QString& series, const QVector<double>& xs, const QVector<double>& ys);

  void setSmoothing(double beta);  // [0, 1)
  double smoothing() const { return beta_; }
  // Off: one plain line per series, no slider (for values that are not noisy, like the lr).
  void setSmoothingEnabled(bool on);
  bool smoothingEnabled() const { return smoothingOn_; }
  void setAxisLabels(const QString& x, const QString& y);
  void setEmptyText(const QString& text);
  void setExportName(const QString& fileName) { exportName_ = fileName; }

  // The step range shown: following the data, or where the user panned/zoomed to.
  struct View {
    bool follow = true;
    double lower = 0, upper = 0;
  };
  View view() const;
  void setView(const View& v);  // does not emit viewChanged

  QStringList seriesNames() const { return order_; }
  qsizetype pointCount(const QString& series) const;
  qsizetype drawnPointCount() const;  // raw points handed to the plot after decimation
  QCustomPlot* plot() const { return plot_; }

  bool exportPng(const QString& path, int width = 0, int height = 0);
  void replotNow();  // apply pending data at once (the chart otherwise batches redraws)
  void fitToData();  // follow the data again after the user zoomed or panned

 Q_SIGNALS:
  void viewChanged();  // the user panned, zoomed or pressed Fit
  void smoothingChanged(double beta);

 private:
  struct Series {
    QVector<double> x, y;
    bool sorted = true;
    QCPGraph* raw = nullptr;
    QCPGraph* smooth = nullptr;
  };
  Series& series(const QString& name);
  void scheduleReplot();
  void rebuild();
  void exportWithDialog();

  QCustomPlot* plot_ = nullptr;
  QCPItemText* emptyText_ = nullptr;
  QSlider* slider_ = nullptr;
  QLabel* smoothingLabel_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QTimer replotTimer_;
  QHash<QString, Series> series_;
  QStringList order_;
  QLabel* smoothingTitle_ = nullptr;
  QString exportName_ = QStringLiteral("loss.png");
  double beta_ = 0.6;
  bool smoothingOn_ = true;
  bool followData_ = true;
  bool rebuilding_ = false;
  bool applyingView_ = false;
};

}  // namespace ws
