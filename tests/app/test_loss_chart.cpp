// SPDX-License-Identifier: Apache-2.0
// The loss chart: bias-corrected EMA math, min/max decimation, 100k points, PNG export.
#include <QTemporaryDir>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>

#include "decimation.h"
#include "ema_smoothing.h"
#include "loss_chart.h"

using namespace ws;

class TestLossChart : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void emaIsBiasCorrected() {
    // s1 = .5*1 = .5 -> .5/(1-.5) = 1; s2 = .25+1 = 1.25 -> /.75; s3 = .625+1.5 = 2.125 -> /.875
    const QVector<double> out = emaSmooth({1, 2, 3}, 0.5);
    QCOMPARE(out.size(), 3);
    QCOMPARE(out[0], 1.0);
    QVERIFY(qFuzzyCompare(out[1], 1.25 / 0.75));
    QVERIFY(qFuzzyCompare(out[2], 2.125 / 0.875));
  }

  void emaOfAConstantIsTheConstant() {
    // Without the correction the first values would be pulled towards 0 (0.1, 0.19, ...).
    const QVector<double> out = emaSmooth(QVector<double>(50, 2.5), 0.9);
    for (double v : out) QVERIFY(std::abs(v - 2.5) < 1e-12);
  }

  void emaZeroBetaIsIdentityAndBetaIsClamped() {
    const QVector<double> x{3, 1, 4, 1, 5};
    QCOMPARE(emaSmooth(x, 0.0), x);
    QCOMPARE(emaSmooth(x, -0.5), x);
    const QVector<double> hi = emaSmooth(x, 1.0);  // clamped below 1: still finite, first = x0
    QCOMPARE(hi[0], 3.0);
    for (double v : hi) QVERIFY(std::isfinite(v));
    QVERIFY(emaSmooth({}, 0.5).isEmpty());
  }

  void emaSkipsNonFinite() {
    const double nan = std::nan("");
    const QVector<double> out = emaSmooth({1, nan, 3}, 0.5);
    QVERIFY(std::isnan(out[1]));
    // The NaN does not count: the third value is the second of the average.
    QVERIFY(qFuzzyCompare(out[2], (0.25 + 1.5) / 0.75));
  }

  void decimationKeepsExtremesAndBoundsSize() {
    const int n = 100'000;
    QVector<double> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = i + 1;
      y[i] = std::sin(i * 0.01);
    }
    y[54'321] = 42;  // a spike
    y[7'777] = -42;  // a dip
    QVector<double> dx, dy;
    decimateMinMax(x, y, 1, n, 500, dx, dy);
    QVERIFY(dx.size() <= 2 * 500 + 4);
    QVERIFY(dx.size() >= 500);
    QVERIFY(dy.contains(42.0));
    QVERIFY(dy.contains(-42.0));
    QVERIFY(std::is_sorted(dx.begin(), dx.end()));
    // Few points: all kept.
    decimateMinMax(x.mid(0, 50), y.mid(0, 50), 1, 50, 500, dx, dy);
    QCOMPARE(dx.size(), 50);
    // A zoomed range keeps one neighbour on each side.
    decimateMinMax(x, y, 100.5, 200.5, 500, dx, dy);
    QCOMPARE(dx.first(), 100.0);
    QCOMPARE(dx.last(), 201.0);
  }

  void chartTakes100kPointsAndDrawsFewer() {
    LossChart chart;
    chart.resize(800, 500);
    chart.show();
    QVector<double> x, y;
    for (int i = 1; i <= 100'000; ++i) {
      x << i;
      y << 1.0 / std::sqrt(i) + 0.05 * std::sin(i);
    }
    QElapsedTimer t;
    t.start();
    chart.addPoints(QStringLiteral("upsampler"), x, y);
    chart.replotNow();
    qInfo("100k points added and plotted in %lld ms", static_cast<long long>(t.elapsed()));  // not asserted
    QCOMPARE(chart.pointCount(QStringLiteral("upsampler")), 100'000);
    QVERIFY(chart.drawnPointCount() > 0);
    QVERIFY(chart.drawnPointCount() < 10'000);
    // Live appends keep every point.
    for (int i = 100'001; i <= 100'100; ++i) chart.addPoint(QStringLiteral("upsampler"), i, 0.01);
    chart.replotNow();
    QCOMPARE(chart.pointCount(QStringLiteral("upsampler")), 100'100);
    QCOMPARE(chart.plot()->xAxis->range().upper, 100'100.0);
  }

  void oneSeriesPerExpertOnASharedStepAxis() {
    LossChart chart;
    chart.resize(600, 400);
    for (int s = 1; s <= 20; ++s) chart.addPoint(s % 2 ? QStringLiteral("high") : QStringLiteral("low"), s, 1.0 / s);
    chart.replotNow();
    QCOMPARE(chart.seriesNames().size(), 2);
    QCOMPARE(chart.pointCount(QStringLiteral("high")), 10);
    QCOMPARE(chart.pointCount(QStringLiteral("low")), 10);
    QCOMPARE(chart.plot()->graphCount(), 4);  // raw + smoothed per series
    QVERIFY(chart.plot()->legend->visible());
    chart.clear();
    chart.replotNow();
    QCOMPARE(chart.plot()->graphCount(), 0);
    QVERIFY(chart.seriesNames().isEmpty());
  }

  void smoothingSetterClamps() {
    LossChart chart;
    chart.setSmoothing(0.95);
    QCOMPARE(chart.smoothing(), 0.95);
    chart.setSmoothing(1.5);
    QVERIFY(chart.smoothing() < 1.0);
    chart.setSmoothing(-1);
    QCOMPARE(chart.smoothing(), 0.0);
  }

  void exportsPng() {
    QTemporaryDir dir;
    LossChart chart;
    chart.resize(640, 400);
    for (int s = 1; s <= 300; ++s) chart.addPoint(QStringLiteral("upsampler"), s, 1.0 / s);
    const QString path = dir.filePath(QStringLiteral("loss.png"));
    QVERIFY(chart.exportPng(path, 640, 400));
    QImage img(path);
    QVERIFY(!img.isNull());
    QCOMPARE(img.width(), 640);
  }
};

QTEST_MAIN(TestLossChart)
#include "test_loss_chart.moc"
