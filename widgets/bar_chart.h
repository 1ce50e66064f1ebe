// SPDX-License-Identifier: Apache-2.0
// A small horizontal bar chart: one labelled bar per entry, its value written beside it. The
// dataset page draws rows per bucket and score histograms with it. What it shows is also its
// accessible description, so a screen reader reads the numbers, not a picture.
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>

namespace ws {

class BarChart : public QWidget {
  Q_OBJECT
 public:
  struct Bar {
    QString label;
    double value = 0;
    QString note;  // written after the value ("12 samples")
  };

  explicit BarChart(QWidget* parent = nullptr);
  void setBars(const QVector<Bar>& bars);
  const QVector<Bar>& bars() const { return bars_; }
  // Bars before this index are drawn muted (a histogram's part below a cut); -1: none.
  void setMutedBefore(int index);
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QVector<Bar> bars_;
  int mutedBefore_ = -1;
};

}  // namespace ws
