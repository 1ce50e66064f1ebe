// The studio window offscreen: a workspace's runs are listed, a run page shows state, chart,
// events and config, follows a growing events.jsonl, and drives a live worker's cancel.
#include <QComboBox>
#include <QLabel>
#include <QListView>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "app/fake_worker.h"
#include "docks/runs_dock.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "loss_chart.h"
#include "main_window.h"
#include "models/event_level_filter.h"
#include "models/run_events.h"
#include "models/runs_model.h"
#include "pages/config_view.h"
#include "pages/event_log_view.h"
#include "pages/run_page.h"
#include "test_paths.h"

using namespace ws;

namespace {

void append(const QString& path, const QByteArray& data) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Append));
  f.write(data);
}

QByteArray started(double t, const char* job, int resume, int max) {
  return QStringLiteral("{\"type\":\"started\",\"time\":%1,\"job\":\"%2\",\"config\":{\"learning_rate\":0.0001,"
                        "\"max_train_steps\":%4,\"output_dir\":\"/x\"},\"world_size\":1,\"resume_step\":%3,\"max_train_steps\":%4}\n")
      .arg(t, 0, 'f', 3).arg(QLatin1String(job)).arg(resume).arg(max).toUtf8();
}
QByteArray step(double t, int s, const char* expert, double loss) {
  return QStringLiteral("{\"type\":\"step\",\"time\":%1,\"step\":%2,\"expert\":\"%3\",\"expert_step\":%2,\"loss\":%4,"
                        "\"lr\":0.0001,\"grad_norm\":1.2,\"samples_per_s\":3.5,\"eta_s\":60}\n")
      .arg(t, 0, 'f', 3).arg(s).arg(QLatin1String(expert)).arg(loss).toUtf8();
}
QByteArray line(const QString& s) { return s.toUtf8() + '\n'; }

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
  QTemporaryDir ws_;
  QString run(const char* name) const { return ws_.filePath(QLatin1String(name)); }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QCoreApplication::setOrganizationName(QStringLiteral("WanStudioTest"));
    QCoreApplication::setApplicationName(QStringLiteral("wanstudio-test"));
    QSettings().clear();
    QVERIFY(ws_.isValid());
    const double t0 = 1'700'000'000;
    QByteArray up = started(t0, "upsampler", 0, 50);
    for (int s = 1; s <= 50; ++s) up += step(t0 + s, s, "upsampler", 1.0 / s);
    up += line(QStringLiteral("{\"type\":\"log\",\"time\":%1,\"level\":\"warning\",\"message\":\"mixed_precision bf16 falls back to fp32 on CPU\"}").arg(t0 + 51));
    up += line(QStringLiteral("{\"type\":\"finished\",\"time\":%1,\"status\":\"completed\",\"step\":50}").arg(t0 + 52));
    append(run("upsampler_run") + QStringLiteral("/events.jsonl"), up);
    // A dual-expert run that crashed after step 12 and was resumed from step 10.
    QByteArray ex = started(t0 + 100, "experts", 0, 20);
    for (int s = 1; s <= 12; ++s) ex += step(t0 + 100 + s, s, s % 3 ? "low" : "high", 2.0 / s);
    ex += started(t0 + 200, "experts", 10, 20);
    for (int s = 11; s <= 14; ++s) ex += step(t0 + 200 + s, s, s % 3 ? "low" : "high", 2.0 / s);
    append(run("experts_run") + QStringLiteral("/events.jsonl"), ex);
  }

  void listsRunsAndOpensTheNewest() {
    MainWindow w(ws_.path(), 60'000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.runsModel()->rowCount(), 2);
    // The newest run (experts_run) is shown at once.
    QCOMPARE(w.runPage()->runDir(), JobManager::normalizedPath(run("experts_run")));
    QCOMPARE(w.runsDock()->currentRun(), JobManager::normalizedPath(run("experts_run")));
    QVERIFY(w.runPage()->isVisible());
  }

  void runPageShowsTheRun() {
    MainWindow w(ws_.path(), 60'000);
    w.show();
    w.openRun(run("upsampler_run"));
    RunPage* page = w.runPage();
    QCOMPARE(page->status().state, RunState::Completed);
    QCOMPARE(page->stateLabel()->text(), QStringLiteral("completed"));
    page->lossChart()->replotNow();
    QCOMPARE(page->lossChart()->seriesNames(), QStringList{QStringLiteral("upsampler")});
    QCOMPARE(page->lossChart()->pointCount(QStringLiteral("upsampler")), 50);
    QVERIFY(page->configView()->optionCount() >= 3);
    // Info level: started, warning, finished; steps hidden.
    EventLogView* log = page->eventLog();
    QCOMPARE(log->view()->model()->rowCount(), 3);
    log->levelBox()->setCurrentIndex(log->levelBox()->findData(int(LogLevel::Step)));
    QCOMPARE(log->view()->model()->rowCount(), 53);  // + 50 steps
    log->levelBox()->setCurrentIndex(log->levelBox()->findData(int(LogLevel::Warning)));
    QCOMPARE(log->view()->model()->rowCount(), 1);
    QVERIFY(log->view()->model()->index(0, 0).data().toString().contains(QStringLiteral("falls back to fp32")));
    QString hint;
    for (QLabel* l : page->findChildren<QLabel*>())
      if (l->text().startsWith(QStringLiteral("TensorBoard"))) hint = l->text();
    QVERIFY2(hint.contains(QDir(JobManager::normalizedPath(run("upsampler_run"))).filePath(QStringLiteral("logs"))), qPrintable(hint));
  }

  void dualExpertRunWithResume() {
    MainWindow w(ws_.path(), 60'000);
    w.openRun(run("experts_run"));
    RunPage* page = w.runPage();
    page->lossChart()->replotNow();
    QStringList names = page->lossChart()->seriesNames();
    names.sort();
    QCOMPARE(names, (QStringList{QStringLiteral("high"), QStringLiteral("low")}));
    // Steps 11 and 12 of the first segment were discarded by the resume from step 10.
    QCOMPARE(page->lossChart()->pointCount(QStringLiteral("high")) + page->lossChart()->pointCount(QStringLiteral("low")), 14);
    QCOMPARE(page->status().state, RunState::Interrupted);
    QVERIFY(page->stateLabel()->text().contains(QStringLiteral("worker gone")));
  }

  void followsAGrowingRun() {
    const QString dir = run("growing_run");
    const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
    append(dir + QStringLiteral("/events.jsonl"), started(now, "upsampler", 0, 100) + step(now, 1, "upsampler", 0.9));
    MainWindow w(ws_.path(), 60'000);
    w.openRun(dir);
    RunPage* page = w.runPage();
    QCOMPARE(page->status().state, RunState::Running);
    QVERIFY(page->status().elsewhere);
    append(dir + QStringLiteral("/events.jsonl"), step(now + 1, 2, "upsampler", 0.8) + step(now + 2, 3, "upsampler", 0.7));
    QTRY_COMPARE_WITH_TIMEOUT(page->events()->steps().size(), 3, 5000);
    page->lossChart()->replotNow();
    QCOMPARE(page->lossChart()->pointCount(QStringLiteral("upsampler")), 3);
    append(dir + QStringLiteral("/events.jsonl"), line(QStringLiteral("{\"type\":\"finished\",\"time\":%1,\"status\":\"completed\",\"step\":3}").arg(now + 3)));
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Completed, 5000);
    QVERIFY(QDir(dir).removeRecursively());
  }

  void liveWorkerCanBeCancelledFromThePage() {
    const QString dir = run("live_run");
    QDir().mkpath(dir);
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("live.sh"), QStringLiteral(R"(
out='%1/events.jsonl'
{ started 100; step 1; } | tee -a "$out"
while read -r line; do
  if [ "$line" = cancel ]; then { step 2; finished cancelled 2; } | tee -a "$out"; exit 130; fi
done)").arg(dir)));
    job->setRunDirectory(dir);
    QSignalSpy ended(job, &WorkerJob::ended);
    w.jobs()->addJob(job);
    w.openRun(dir);
    RunPage* page = w.runPage();
    QTRY_COMPARE_WITH_TIMEOUT(page->events()->steps().size(), 1, 10'000);
    QCOMPARE(page->status().state, RunState::Running);
    QVERIFY(!page->status().elsewhere);
    QPushButton* cancel = nullptr;
    for (QPushButton* b : page->findChildren<QPushButton*>())
      if (b->text() == QStringLiteral("Cancel Run")) cancel = b;
    QVERIFY(cancel && cancel->isVisible() && cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(ended.wait(10'000));
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Cancelled, 5000);
    QVERIFY(!cancel->isVisible());
    const int row = w.runsModel()->rowForRunDir(dir);
    QVERIFY(row >= 0);
    QCOMPARE(w.runsModel()->status(row).state, RunState::Cancelled);
  }

  void quitCancelsLiveWorkersFirst() {
    const QString dir = run("quit_run");
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("quit.sh"), QStringLiteral(
        "started 100; step 1; while read -r line; do [ \"$line\" = cancel ] && { finished cancelled 1; exit 130; }; done")));
    job->setRunDirectory(dir);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    w.jobs()->addJob(job);
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 2, 10'000);
    w.quitStoppingWorkers(false);  // what SIGINT does: no question, cancel, then close
    QVERIFY(w.isVisible());        // still waiting for the worker
    QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), 10'000);
    QCOMPARE(job->result().state, RunState::Cancelled);
  }

  void remembersTheWorkspace() {
    {
      MainWindow w(ws_.path(), 60'000);
      w.show();
      w.close();
    }
    QCOMPARE(QSettings().value(QStringLiteral("workspace")).toString(), JobManager::normalizedPath(ws_.path()));
    QVERIFY(!QSettings().value(QStringLiteral("mainWindow/geometry")).toByteArray().isEmpty());
    MainWindow again;  // no workspace given: the last one
    QCOMPARE(again.runsModel()->workspace(), JobManager::normalizedPath(ws_.path()));
  }

  void executableStartsOffscreen() {
    if (!QFileInfo::exists(QStringLiteral(WS_APP_EXE))) QSKIP("wanstudio is not built");
    QTemporaryDir config;
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), config.path());
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WS_APP_EXE), {QStringLiteral("--quit-after-ms"), QStringLiteral("300"), ws_.path()});
    QVERIFY(p.waitForFinished(30'000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    // It saved the workspace it was given.
    QVERIFY(fake::readAll(config.filePath(QStringLiteral("WanStudio/wanstudio.conf"))).contains("workspace="));
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
