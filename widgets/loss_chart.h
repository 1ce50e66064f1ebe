// Loss vs step: raw points (faint dots) and a bias-corrected EMA line per series, with a
// smoothing slider. Keeps every point; draws a min/max decimation of the visible range, so
// 100k+ points stay interactive. One series per name ("upsampler", "high", "low", ...).
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
  void setAxisLabels(const QString& x, const QString& y);

  QStringList seriesNames() const { return order_; }
  qsizetype pointCount(const QString& series) const;
  qsizetype drawnPointCount() const;  // raw points handed to the plot after decimation
  QCustomPlot* plot() const { return plot_; }

  bool exportPng(const QString& path, int width = 0, int height = 0);
  void replotNow();  // apply pending data at once (the chart otherwise batches redraws)
  void fitToData();  // follow the data again after the user zoomed or panned

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
  double beta_ = 0.6;
  bool followData_ = true;
  bool rebuilding_ = false;
};

}  // namespace ws
