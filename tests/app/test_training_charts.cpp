// SPDX-License-Identifier: Apache-2.0
// The chart model per expert (ExpertCurves) and the run page's charts: loss, learning rate
// and grad norm per expert on one step axis, each expert's share of the steps, resume drops,
// 100k points, PNG export of any chart.
#include <QLabel>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QCheckBox>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>

#include "loss_chart.h"
#include "runfolder/expert_curves.h"
#include "runfolder/run_events.h"
#include "pages/training_charts.h"

using namespace ws;

namespace {

QByteArray step(int s, const char* expert, double loss, double lr, double grad, double sps = 4) {
  return QStringLiteral(
             "{\"type\":\"step\",\"time\":%1,\"step\":%2,\"expert\":\"%3\",\"expert_step\":%2,\"loss\":%4,"
             "\"lr\":%5,\"grad_norm\":%6,\"samples_per_s\":%7,\"eta_s\":5,\"future_field\":{\"x\":1}}\n")
      .arg(1000 + s)
      .arg(s)
      .arg(QLatin1String(expert))
      .arg(loss)
      .arg(lr)
      .arg(grad)
      .arg(sps)
      .toUtf8();
}

QByteArray started(int resume, const char* job = "experts") {
  return QStringLiteral(
             "{\"type\":\"started\",\"time\":900,\"job\":\"%1\",\"config\":{},\"world_size\":1,"
             "\"resume_step\":%2,\"max_train_steps\":100}\n")
      .arg(QLatin1String(job))
      .arg(resume)
      .toUtf8();
}

// Steps 1..n routed like a boundary at 0.875: high every 4th step, low otherwise.
const char* expertOf(int s) { return s % 4 == 0 ? "high" : "low"; }

QByteArray dualExpertRun(int n) {
  QByteArray b = started(0);
  for (int s = 1; s <= n; ++s) {
    const bool high = s % 4 == 0;
    b += step(s, expertOf(s), high ? 2.0 / s : 1.0 / s, high ? 1e-4 : 2e-4, high ? 3.0 : 1.0);
  }
  return b;
}

}  // namespace

class TestTrainingCharts : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("WanStudioTest"));
    QCoreApplication::setApplicationName(QStringLiteral("wanstudio-charts-test"));
    QSettings().clear();
  }

  void curvesSplitEveryMetricPerExpert() {
    RunEvents ev;
    ev.appendData(dualExpertRun(20));
    ExpertCurves curves;
    const ExpertCurves::Batches b = curves.add(ev.steps());
    const ExpertCurves::Batch& loss = b[ExpertCurves::Loss];
    QCOMPARE(loss.keys(), (QList<QString>{QStringLiteral("high"), QStringLiteral("low")}));
    QCOMPARE(loss[QStringLiteral("high")].steps, (QVector<double>{4, 8, 12, 16, 20}));
    QCOMPARE(loss[QStringLiteral("low")].steps.size(), 15);
    QCOMPARE(loss[QStringLiteral("high")].values.first(), 0.5);
    // The learning rate and grad norm of each expert stay apart on the same step axis.
    const ExpertCurves::Batch& lr = b[ExpertCurves::LearningRate];
    for (double v : lr[QStringLiteral("high")].values) QCOMPARE(v, 1e-4);
    for (double v : lr[QStringLiteral("low")].values) QCOMPARE(v, 2e-4);
    QCOMPARE(lr[QStringLiteral("low")].steps, loss[QStringLiteral("low")].steps);
    const ExpertCurves::Batch& grad = b[ExpertCurves::GradNorm];
    for (double v : grad[QStringLiteral("high")].values) QCOMPARE(v, 3.0);
    for (double v : grad[QStringLiteral("low")].values) QCOMPARE(v, 1.0);
    // Throughput is one series for the run.
    const ExpertCurves::Batch& sps = b[ExpertCurves::SamplesPerS];
    QCOMPARE(sps.keys(), QList<QString>{QStringLiteral("clips/s")});
    QCOMPARE(sps.first().steps.size(), 20);
  }

  // Each expert's own steps on the x axis: the high expert's steps 4, 8, ... become 1, 2, ...; the
  // run's throughput stays on the run's steps.
  void expertStepAxis() {
    QByteArray b = started(0);
    int high = 0, low = 0;
    for (int s = 1; s <= 20; ++s) {
      const bool isHigh = s % 4 == 0;
      QByteArray line = step(s, expertOf(s), 1.0 / s, 1e-4, 1.0);
      line.replace(QStringLiteral("\"expert_step\":%1,").arg(s).toUtf8(),
                   QStringLiteral("\"expert_step\":%1,").arg(isHigh ? ++high : ++low).toUtf8());
      b += line;
    }
    RunEvents ev;
    ev.appendData(b);
    ExpertCurves curves;
    curves.setAxis(ExpertCurves::Axis::ExpertStep);
    const ExpertCurves::Batches out = curves.add(ev.steps());
    QCOMPARE(out[ExpertCurves::Loss][QStringLiteral("high")].steps, (QVector<double>{1, 2, 3, 4, 5}));
    QCOMPARE(out[ExpertCurves::GradNorm][QStringLiteral("low")].steps.last(), 15.0);
    QCOMPARE(out[ExpertCurves::SamplesPerS].first().steps.last(), 20.0);
    // The page's toggle: shown for a dual-expert run, and the chart's x range follows it.
    TrainingCharts charts(&ev);
    QVERIFY(!charts.expertAxis()->isHidden());
    charts.replotNow();
    QCOMPARE(charts.lossChart()->pointCount(QStringLiteral("high")), 5);
    charts.expertAxis()->setChecked(true);
    charts.replotNow();
    QVERIFY(charts.lossChart()->plot()->xAxis->range().upper <= 16.5);
    QCOMPARE(charts.lossChart()->plot()->xAxis->label(), QStringLiteral("expert step"));
    charts.expertAxis()->setChecked(false);
    charts.replotNow();
    QVERIFY(charts.lossChart()->plot()->xAxis->range().upper >= 19.5);
  }

  void stepTimeIsOneSeriesPerPhase() {
    // The step events' time split: step, model, VAE and data wait as four series; a run written
    // before the split has no such points (not NaN ones).
    RunEvents ev;
    QByteArray b = started(0);
    for (int s = 1; s <= 3; ++s)
      b += QStringLiteral(
               "{\"type\":\"step\",\"time\":%1,\"step\":%1,\"expert\":\"upsampler\",\"loss\":0.5,"
               "\"data_wait_s\":0.25,\"vae_s\":%2,\"model_s\":0.5,\"step_s\":2}\n")
               .arg(s)
               .arg(0.25 * s)
               .toUtf8();
    b += step(4, "upsampler", 0.4, 1e-4, 1.0);  // no split
    ev.appendData(b);
    ExpertCurves curves;
    const ExpertCurves::Batch t = curves.add(ev.steps())[ExpertCurves::StepTime];
    QCOMPARE(QSet<QString>(t.keyBegin(), t.keyEnd()), (QSet<QString>{"step", "model", "VAE", "data wait"}));
    QCOMPARE(t[QStringLiteral("VAE")].values, (QVector<double>{0.25, 0.5, 0.75}));
    QCOMPARE(t[QStringLiteral("data wait")].steps, (QVector<double>{1, 2, 3}));
    QCOMPARE(t[QStringLiteral("step")].values, (QVector<double>{2, 2, 2}));
    QCOMPARE(t[QStringLiteral("model")].values.size(), 3);
    TrainingCharts charts(&ev);
    charts.replotNow();
    QCOMPARE(charts.chart(ExpertCurves::StepTime)->pointCount(QStringLiteral("VAE")), 3);
    QCOMPARE(charts.tabs()->tabText(charts.tabs()->indexOf(charts.chart(ExpertCurves::StepTime))),
             QStringLiteral("Step time"));
  }

  void stepTimeShowsBlockSwapsCopyWait() {
    // A run with blocks_to_swap > 0: its steps carry swap_wait_s (part of model_s) and
    // swap_copies; the copy wait is its own series, named on the axis.
    RunEvents ev;
    QByteArray b = started(0);
    for (int s = 1; s <= 3; ++s)
      b += QStringLiteral(
               "{\"type\":\"step\",\"time\":%1,\"step\":%1,\"expert\":\"low\",\"loss\":0.5,"
               "\"data_wait_s\":0.25,\"vae_s\":0.5,\"model_s\":1.5,\"step_s\":2.5,\"swap_wait_s\":%2,"
               "\"swap_copies\":28}\n")
               .arg(s)
               .arg(0.125 * s)
               .toUtf8();
    ev.appendData(b);
    QCOMPARE(ev.steps().first().swapWaitS, 0.125);
    ExpertCurves curves;
    const ExpertCurves::Batch t = curves.add(ev.steps())[ExpertCurves::StepTime];
    const QString copyWait = QStringLiteral("copy wait (block swap)");
    QCOMPARE(ExpertCurves::phaseNames().value(ExpertCurves::kCopyWaitPhase), copyWait);
    QCOMPARE(t[copyWait].values, (QVector<double>{0.125, 0.25, 0.375}));
    QCOMPARE(t[copyWait].steps, (QVector<double>{1, 2, 3}));
    QCOMPARE(t[QStringLiteral("model")].values, (QVector<double>{1.5, 1.5, 1.5}));
    TrainingCharts charts(&ev);
    charts.replotNow();
    LossChart* time = charts.chart(ExpertCurves::StepTime);
    QCOMPARE(time->pointCount(copyWait), 3);
    QVERIFY2(time->plot()->yAxis->label().contains(QStringLiteral("copy wait")),
             qPrintable(time->plot()->yAxis->label()));
    // A run without block swap: no such series, and the axis as it always was.
    RunEvents plain;
    plain.appendData(started(0) + QByteArray("{\"type\":\"step\",\"time\":1,\"step\":1,\"expert\":\"low\",\"loss\":0.5,"
                                             "\"data_wait_s\":0.25,\"vae_s\":0.5,\"model_s\":1.5,\"step_s\":2.5}\n"));
    QVERIFY(std::isnan(plain.steps().first().swapWaitS));
    TrainingCharts plainCharts(&plain);
    plainCharts.replotNow();
    LossChart* plainTime = plainCharts.chart(ExpertCurves::StepTime);
    QCOMPARE(plainTime->pointCount(QStringLiteral("model")), 1);
    QVERIFY(!plainTime->seriesNames().contains(copyWait));
    QCOMPARE(plainTime->plot()->yAxis->label(), QStringLiteral("seconds per step (data wait, VAE, model)"));
  }

  void sharesCountEachExpertsSteps() {
    RunEvents ev;
    ev.appendData(dualExpertRun(20));
    ExpertCurves curves;
    curves.add(ev.steps());
    QVERIFY(curves.isMultiExpert());
    QCOMPARE(curves.totalSteps(), 20);
    const QList<ExpertCurves::Share> shares = curves.shares();
    QCOMPARE(shares.size(), 2);
    QCOMPARE(shares[0].expert, QStringLiteral("low"));  // first seen
    QCOMPARE(shares[0].steps, 15);
    QCOMPARE(shares[0].fraction, 0.75);
    QCOMPARE(shares[1].expert, QStringLiteral("high"));
    QCOMPARE(shares[1].fraction, 0.25);
    // Incremental: only the new points come back, the counts go on.
    ev.appendData(step(21, "high", 0.1, 1e-4, 3) + step(22, "low", 0.1, 2e-4, 1));
    const ExpertCurves::Batches more = curves.add(ev.steps(), 20);
    QCOMPARE(more[ExpertCurves::Loss][QStringLiteral("high")].steps, QVector<double>{21});
    QCOMPARE(curves.totalSteps(), 22);
    QCOMPARE(curves.shares()[1].steps, 6);
    curves.clear();
    QCOMPARE(curves.totalSteps(), 0);
    QVERIFY(curves.shares().isEmpty());
  }

  void evalTabShowsCombinedAndPerExpertLoss() {
    RunEvents ev;
    TrainingCharts charts(&ev);
    QByteArray b = dualExpertRun(8);
    b += "{\"type\":\"eval\",\"time\":1010,\"step\":4,\"expert\":\"all\",\"loss\":0.9,\"loss_high\":1.2,"
         "\"loss_low\":0.6,\"loss_by_t\":{\"125\":0.5,\"900\":1.2}}\n";
    b += "{\"type\":\"eval\",\"time\":1020,\"step\":8,\"expert\":\"all\",\"loss\":0.7,\"loss_high\":null,"
         "\"loss_low\":0.7}\n";
    ev.appendData(b);
    ev.finishData();
    LossChart* e = charts.evalChart();
    QCOMPARE(e->pointCount(QStringLiteral("all")), 2);
    QCOMPARE(e->pointCount(QStringLiteral("low")), 2);
    QCOMPARE(e->pointCount(QStringLiteral("high")), 1);  // null: the eval had no high timestep
    QVERIFY(charts.tabs()->indexOf(e) >= 0);
    // A resume redraws from the events again, without doubling them.
    ev.appendData(started(4) + step(5, "low", 0.3, 2e-4, 1));
    ev.finishData();
    QCOMPARE(e->pointCount(QStringLiteral("all")), 1);  // the step-8 eval came after step 4: dropped
  }

  void upsamplerIsOneSeries() {
    RunEvents ev;
    QByteArray b = started(0, "upsampler");
    for (int s = 1; s <= 5; ++s) b += step(s, "upsampler", 1.0 / s, 1e-4, 1);
    ev.appendData(b);
    ExpertCurves curves;
    const auto batches = curves.add(ev.steps());
    QCOMPARE(batches[ExpertCurves::Loss].keys(), QList<QString>{QStringLiteral("upsampler")});
    QVERIFY(!curves.isMultiExpert());
  }

  void droppedPointsAreLeftOut() {
    RunEvents ev;
    ev.appendData(dualExpertRun(12) + started(8));  // steps 9..12 were lost by the crash
    ExpertCurves curves;
    const auto b = curves.add(ev.steps());
    QCOMPARE(curves.totalSteps(), 8);
    QCOMPARE(b[ExpertCurves::Loss][QStringLiteral("high")].steps, (QVector<double>{4, 8}));
  }

  void missingNumbersBecomeGapsNotZeros() {
    RunEvents ev;
    ev.appendData(started(0) +
                  QByteArray("{\"type\":\"step\",\"time\":1,\"step\":1,\"expert\":\"low\",\"loss\":0.5}\n"));
    ExpertCurves curves;
    const auto b = curves.add(ev.steps());
    QVERIFY(std::isnan(b[ExpertCurves::LearningRate][QStringLiteral("low")].values.first()));
    QVERIFY(std::isnan(b[ExpertCurves::GradNorm][QStringLiteral("low")].values.first()));
  }

  void chartsFollowTheEvents() {
    RunEvents ev;
    TrainingCharts charts(&ev);
    charts.resize(800, 500);
    charts.show();
    ev.appendData(dualExpertRun(40));
    charts.replotNow();
    QCOMPARE(charts.tabs()->count(), 6);  // loss, lr, grad norm, clips/s, step time, eval
    for (auto m : {ExpertCurves::Loss, ExpertCurves::LearningRate, ExpertCurves::GradNorm}) {
      LossChart* c = charts.chart(m);
      QCOMPARE(c->pointCount(QStringLiteral("high")), 10);
      QCOMPARE(c->pointCount(QStringLiteral("low")), 30);
      QVERIFY(c->plot()->legend->visible());
    }
    QCOMPARE(charts.chart(ExpertCurves::SamplesPerS)->pointCount(QStringLiteral("clips/s")), 40);
    QVERIFY(charts.shareLabel()->isVisible());
    QVERIFY2(charts.shareLabel()->text().contains(QStringLiteral("low 30 (75.0%)")),
             qPrintable(charts.shareLabel()->text()));
    QVERIFY(charts.shareLabel()->text().contains(QStringLiteral("high 10 (25.0%)")));
    // The learning rate is drawn as it is: no smoothing slider, no separate raw dots.
    QVERIFY(charts.lossChart()->smoothingEnabled());
    QVERIFY(!charts.chart(ExpertCurves::LearningRate)->smoothingEnabled());

    // A resume from step 30 drops 31..40 everywhere and recounts the shares.
    ev.appendData(started(30) + step(31, "low", 0.01, 2e-4, 1));
    charts.replotNow();
    QCOMPARE(charts.chart(ExpertCurves::GradNorm)->pointCount(QStringLiteral("high")), 7);
    QCOMPARE(charts.chart(ExpertCurves::GradNorm)->pointCount(QStringLiteral("low")), 24);
    QCOMPARE(charts.curves().totalSteps(), 31);

    ev.clear();
    charts.replotNow();
    QVERIFY(charts.lossChart()->seriesNames().isEmpty());
    QVERIFY(charts.shareLabel()->isHidden());
  }

  void chartsShareTheStepAxis() {
    RunEvents ev;
    TrainingCharts charts(&ev);
    charts.resize(800, 500);
    charts.show();
    ev.appendData(dualExpertRun(400));
    charts.replotNow();
    LossChart* loss = charts.lossChart();
    LossChart* lr = charts.chart(ExpertCurves::LearningRate);
    QVERIFY(lr->view().follow);
    // The user zooms the loss chart: the other charts show the same steps.
    loss->plot()->xAxis->setRange(100, 200);
    QVERIFY(!lr->view().follow);
    QCOMPARE(lr->view().lower, 100.0);
    QCOMPARE(lr->view().upper, 200.0);
    lr->replotNow();
    QCOMPARE(lr->plot()->xAxis->range().lower, 100.0);
    // Fit in one chart: all follow the data again.
    loss->fitToData();
    Q_EMIT loss->viewChanged();
    QVERIFY(lr->view().follow);
    lr->replotNow();
    QCOMPARE(lr->plot()->xAxis->range().upper, 400.0);
  }

  void hundredThousandStepsStaySmooth() {
    RunEvents ev;
    TrainingCharts charts(&ev);
    charts.resize(900, 500);
    charts.show();
    QByteArray b = started(0);
    b.reserve(100'000 * 170);
    for (int s = 1; s <= 100'000; ++s) b += step(s, expertOf(s), 1.0 / std::sqrt(s), 1e-4, 1 + (s % 7) * 0.1);
    QElapsedTimer t;
    t.start();
    ev.appendData(b);
    charts.replotNow();
    // Times are printed for the record, not asserted: the machine may be busy.
    qInfo("100k steps parsed and plotted in %lld ms", static_cast<long long>(t.elapsed()));
    LossChart* loss = charts.lossChart();
    QCOMPARE(loss->pointCount(QStringLiteral("low")) + loss->pointCount(QStringLiteral("high")), 100'000);
    QVERIFY(loss->drawnPointCount() < 10'000);  // decimated for drawing, all kept
    // A redraw (pan, slider) of 100k points is quick.
    t.restart();
    loss->setSmoothing(0.9);
    loss->replotNow();
    qInfo("100k points redrawn in %lld ms", static_cast<long long>(t.elapsed()));
  }

  void everyChartExportsPng() {
    QTemporaryDir dir;
    RunEvents ev;
    TrainingCharts charts(&ev);
    charts.resize(700, 450);
    ev.appendData(dualExpertRun(60));
    for (int m = 0; m < ExpertCurves::MetricCount; ++m) {
      const QString path = dir.filePath(QStringLiteral("chart%1.png").arg(m));
      QVERIFY(charts.chart(ExpertCurves::Metric(m))->exportPng(path, 640, 400));
      const QImage img(path);
      QCOMPARE(img.size(), QSize(640, 400));
    }
  }

  void lossSmoothingIsRemembered() {
    RunEvents ev;
    {
      TrainingCharts charts(&ev);
      charts.lossChart()->setSmoothing(0.85);
    }
    TrainingCharts again(&ev);
    QCOMPARE(again.lossChart()->smoothing(), 0.85);
  }
};

QTEST_MAIN(TestTrainingCharts)
#include "test_training_charts.moc"
