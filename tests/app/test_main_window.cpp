// SPDX-License-Identifier: Apache-2.0
// The studio window offscreen: a workspace's runs are listed, a run page shows state, chart,
// events and config, follows a growing events.jsonl, drives a live worker's cancel and kill,
// resumes an ended run from its checkpoint, and shows how a crashed worker ended.
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QListView>
#include <QPlainTextEdit>
#include <QStatusBar>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QLineEdit>
#include <QSpinBox>
#include <QTimer>
#include <QApplication>
#include <QScrollArea>
#include <QtTest>

#include <signal.h>

#include <algorithm>

#include "app/fake_worker.h"
#include "docks/runs_dock.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "loss_chart.h"
#include "help_menu.h"
#include "main_window.h"
#include "app_options.h"
#include "jobs/preset_locator.h"
#include "jobs/engine_locator.h"
#include "jobs/preferences.h"
#include "dialogs/preferences_dialog.h"
#include "pages/start_page.h"
#include "item_models/event_level_filter.h"
#include "runfolder/run_events.h"
#include "item_models/runs_model.h"
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
  return QStringLiteral(
             "{\"type\":\"started\",\"time\":%1,\"job\":\"%2\",\"config\":{\"learning_rate\":0.0001,"
             "\"max_train_steps\":%4,\"output_dir\":\"/"
             "x\"},\"world_size\":1,\"resume_step\":%3,\"max_train_steps\":%4}\n")
      .arg(t, 0, 'f', 3)
      .arg(QLatin1String(job))
      .arg(resume)
      .arg(max)
      .toUtf8();
}
QByteArray step(double t, int s, const char* expert, double loss) {
  return QStringLiteral(
             "{\"type\":\"step\",\"time\":%1,\"step\":%2,\"expert\":\"%3\",\"expert_step\":%2,\"loss\":%4,"
             "\"lr\":0.0001,\"grad_norm\":1.2,\"samples_per_s\":3.5,\"eta_s\":60}\n")
      .arg(t, 0, 'f', 3)
      .arg(s)
      .arg(QLatin1String(expert))
      .arg(loss)
      .toUtf8();
}
QByteArray line(const QString& s) { return s.toUtf8() + '\n'; }

void writeFile(const QString& path, const QByteArray& data) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(data);
}

// A run cancelled at step 2 with checkpoint-2, as the worker leaves it.
void makeCancelledRun(const QString& dir, const QString& yamlOutputDir) {
  const double t0 = 1'700'000'000;
  writeFile(dir + QStringLiteral("/run.yaml"),
            QStringLiteral("job: upsampler\noutput_dir: %1\nmax_train_steps: 4\n").arg(yamlOutputDir).toUtf8());
  QDir().mkpath(dir + QStringLiteral("/checkpoint-2/latent_upsampler"));
  QDir().mkpath(dir + QStringLiteral("/.checkpoint-3.tmp"));  // an unfinished write is not a checkpoint
  writeFile(
      dir + QStringLiteral("/events.jsonl"),
      started(t0, "upsampler", 0, 4) + step(t0 + 1, 1, "upsampler", 0.5) + step(t0 + 2, 2, "upsampler", 0.4) +
          line(QStringLiteral("{\"type\":\"checkpoint\",\"time\":%1,\"step\":2,\"path\":\"checkpoint-2\"}")
                   .arg(t0 + 3)) +
          line(QStringLiteral("{\"type\":\"finished\",\"time\":%1,\"status\":\"cancelled\",\"step\":2}").arg(t0 + 4)));
}

QPushButton* buttonNamed(QWidget* page, const QString& text) {
  for (QPushButton* b : page->findChildren<QPushButton*>())
    if (b->text() == text) return b;
  return nullptr;
}

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
    up += line(QStringLiteral("{\"type\":\"log\",\"time\":%1,\"level\":\"warning\",\"message\":\"mixed_precision bf16 "
                              "falls back to fp32 on CPU\"}")
                   .arg(t0 + 51));
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
    QVERIFY2(hint.contains(QDir(JobManager::normalizedPath(run("upsampler_run"))).filePath(QStringLiteral("logs"))),
             qPrintable(hint));
  }

  void tensorboardHintFollowsLoggingDir() {
    QTemporaryDir other;
    const QString dir = other.filePath(QStringLiteral("run"));
    writeFile(dir + QStringLiteral("/run.yaml"), "job: upsampler\nlogging_dir: tb/scalars\n");
    writeFile(dir + QStringLiteral("/events.jsonl"), started(1'700'000'000, "upsampler", 0, 5));
    MainWindow w(ws_.path(), 60'000);
    w.openRun(dir);
    QString hint;
    for (QLabel* l : w.runPage()->findChildren<QLabel*>())
      if (l->text().startsWith(QStringLiteral("TensorBoard"))) hint = l->text();
    QVERIFY2(hint.contains(QDir(JobManager::normalizedPath(dir)).filePath(QStringLiteral("tb/scalars"))),
             qPrintable(hint));
  }

  void runOpenedOutsideTheWorkspaceIsListed() {
    QTemporaryDir emptyWorkspace;
    MainWindow w(emptyWorkspace.path(), 60'000);
    QCOMPARE(w.runsModel()->rowCount(), 0);
    w.openRun(run("upsampler_run"));  // as --open does
    QCOMPARE(w.runsModel()->rowCount(), 1);
    QCOMPARE(w.runsDock()->currentRun(), JobManager::normalizedPath(run("upsampler_run")));
    w.runsModel()->refresh();  // stays listed across refreshes
    QCOMPARE(w.runsModel()->rowCount(), 1);
  }

  void aliasBombRunYamlDoesNotHang() {
    // "Billion laughs": ten lines that expand to 9^9 values when walked.
    QTemporaryDir bomb;
    QByteArray yaml = "job: upsampler\na: &a [l,l,l,l,l,l,l,l,l]\n";
    const char* names = "abcdefghi";
    for (int i = 1; i < 9; ++i) {
      yaml += QByteArray(1, names[i]) + ": &" + QByteArray(1, names[i]) + " [";
      for (int k = 0; k < 9; ++k) yaml += QByteArray(k ? "," : "") + "*" + QByteArray(1, names[i - 1]);
      yaml += "]\n";
    }
    writeFile(bomb.filePath(QStringLiteral("r/run.yaml")), yaml);
    QElapsedTimer t;
    t.start();
    MainWindow w(bomb.path(), 60'000);  // lists the workspace and opens its newest run
    w.openRun(bomb.filePath(QStringLiteral("r")));
    QCOMPARE(w.runsModel()->rowCount(), 1);
    QVERIFY2(t.elapsed() < 60'000, "opening a workspace with an alias bomb took a minute");
  }

  void commandLineDatasetErrorOpensNoDialog() {
    if (!QFileInfo::exists(QStringLiteral(WS_APP_EXE))) QFAIL("wanstudio is not built");
    // `--dataset bad.json --screenshot`: the error goes to stderr and the screenshot is taken; a
    // modal dialog before the event loop used to block it forever.
    QTemporaryDir dir, config;
    writeFile(dir.filePath(QStringLiteral("bad.json")), "{not json");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), config.path());
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WS_APP_EXE),
            {QStringLiteral("--dataset"), dir.filePath(QStringLiteral("bad.json")), QStringLiteral("--screenshot"),
             dir.filePath(QStringLiteral("shot.png")), dir.path()});
    const bool done = p.waitForFinished(60'000);
    if (!done) p.kill();
    QVERIFY2(done, "wanstudio --dataset bad.json --screenshot hung");
    QVERIFY2(p.readAllStandardError().contains("bad.json"), "the dataset error is not on stderr");
    QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("shot.png"))));
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
    QCOMPARE(
        page->lossChart()->pointCount(QStringLiteral("high")) + page->lossChart()->pointCount(QStringLiteral("low")),
        14);
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
    append(dir + QStringLiteral("/events.jsonl"),
           step(now + 1, 2, "upsampler", 0.8) + step(now + 2, 3, "upsampler", 0.7));
    QTRY_COMPARE_WITH_TIMEOUT(page->events()->steps().size(), 3, 5000);
    page->lossChart()->replotNow();
    QCOMPARE(page->lossChart()->pointCount(QStringLiteral("upsampler")), 3);
    append(
        dir + QStringLiteral("/events.jsonl"),
        line(QStringLiteral("{\"type\":\"finished\",\"time\":%1,\"status\":\"completed\",\"step\":3}").arg(now + 3)));
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Completed, 5000);
    QVERIFY(QDir(dir).removeRecursively());
  }

  // A run training without this studio (another studio's, a terminal's) on this machine: Save Now,
  // Cancel and Kill reach its worker through the PID holding the run's .lock (SIGUSR1, SIGTERM);
  // with no holder they are shown disabled, saying why.
  void runElsewhereIsControlledThroughItsLock() {
    const QString dir = run("elsewhere_live");
    QDir().mkpath(dir);
    const double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
    append(dir + QStringLiteral("/events.jsonl"), started(now, "upsampler", 0, 100) + step(now, 1, "upsampler", 0.9));
    QProcess worker;  // holds the lock as the engine does, and notes the signals it gets
    worker.start(QStringLiteral("python3"), {QStringLiteral("-c"), QStringLiteral(R"(
import fcntl, os, signal, sys, time
d = sys.argv[1]
f = open(os.path.join(d, ".lock"), "w")
fcntl.flock(f, fcntl.LOCK_EX)
def note(name):
    open(os.path.join(d, name), "w").close()
signal.signal(signal.SIGUSR1, lambda *a: note("usr1"))
signal.signal(signal.SIGTERM, lambda *a: (note("term"), sys.exit(0)))
note("ready")
while True:
    time.sleep(0.05)
)"),
                                             dir});
    QVERIFY(worker.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(dir + QStringLiteral("/ready")), 10'000);
    MainWindow w(ws_.path(), 60'000);
    w.show();
    w.openRun(dir);
    RunPage* page = w.runPage();
    QVERIFY(page->status().elsewhere);
    QTRY_VERIFY_WITH_TIMEOUT(page->saveButton()->isVisible() && page->saveButton()->isEnabled(), 5000);
    QVERIFY(page->saveButton()->toolTip().contains(QString::number(worker.processId())));
    QTest::mouseClick(page->saveButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(dir + QStringLiteral("/usr1")), 10'000);
    QVERIFY(page->cancelButton()->isEnabled());
    QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
    QVERIFY(worker.waitForFinished(10'000));
    QVERIFY(QFileInfo::exists(dir + QStringLiteral("/term")));
    // Nobody holds the lock now, but the events are still fresh: shown, disabled, with the reason.
    append(dir + QStringLiteral("/events.jsonl"), step(now + 1, 2, "upsampler", 0.8));
    QTRY_VERIFY_WITH_TIMEOUT(!page->saveButton()->isEnabled(), 5000);
    QVERIFY(page->saveButton()->toolTip().contains(QStringLiteral("another machine")));
    QVERIFY(QDir(dir).removeRecursively());
  }

  void liveWorkerCanBeCancelledFromThePage() {
    const QString dir = run("live_run");
    QDir().mkpath(dir);
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("live.sh"),
                                      QStringLiteral(R"(
out='%1/events.jsonl'
{ started 100; step 1; } | tee -a "$out"
while read -r line; do
  if [ "$line" = cancel ]; then { step 2; finished cancelled 2; } | tee -a "$out"; exit 130; fi
done)")
                                          .arg(dir)));
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
    QVERIFY(!w.runPage()->resumeButton()->isVisible());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QVERIFY(job->cancelRequested());
    QVERIFY(ended.wait(
        60'000));  // a bound, not a delay: under the sanitizers beside another test the worker took over 10 s
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Cancelled, 5000);
    QVERIFY(!cancel->isVisible());
    const int row = w.runsModel()->rowForRunDir(dir);
    QVERIFY(row >= 0);
    QCOMPARE(w.runsModel()->status(row).state, RunState::Cancelled);
  }

  void killButtonStopsAStubbornWorker() {
    const QString dir = run("kill_run");
    QDir().mkpath(dir);
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("stubborn.sh"),
                                      QStringLiteral("trap '' TERM INT; { started 100; step 1; } | tee -a "
                                                     "'%1/events.jsonl'; while read -r line; do :; done; sleep 60")
                                          .arg(dir)));
    job->setRunDirectory(dir);
    QSignalSpy ended(job, &WorkerJob::ended);
    w.jobs()->addJob(job);
    w.openRun(dir);
    RunPage* page = w.runPage();
    QTRY_COMPARE_WITH_TIMEOUT(page->events()->steps().size(), 1, 10'000);
    QVERIFY(page->killButton()->isVisible());
    QVERIFY(!page->resumeButton()->isVisible());
    QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
    QVERIFY(!page->cancelButton()->isEnabled());  // asked once; the worker ignores it
    QTest::qWait(200);
    QVERIFY(job->isRunning());
    // Kill asks first: answered No, the worker goes on.
    QTimer::singleShot(0, page, [] {
      if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->reject();
    });
    QTest::mouseClick(page->killButton(), Qt::LeftButton);
    QVERIFY(job->isRunning());
    page->setConfirmKill(false);
    QTest::mouseClick(page->killButton(), Qt::LeftButton);
    QVERIFY(ended.wait(10'000));
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Cancelled, 5000);
    QVERIFY2(page->stateLabel()->text().contains(QStringLiteral("killed on request")),
             qPrintable(page->stateLabel()->text()));
    QVERIFY(!page->killButton()->isVisible());
  }

  void crashedWorkerIsFailedWithReasonAndLastLines() {
    const QString dir = run("oom_run");
    writeFile(dir + QStringLiteral("/run.yaml"), "job: upsampler\n");
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    // What the kernel's OOM killer does: SIGKILL, no `finished`.
    job->setProgram(fake::writeScript(
        ws_.path(), QStringLiteral("oom.sh"),
        QStringLiteral("{ started 100; step 1; ev heartbeat '\"rss_bytes\":3000000000'; } | tee -a '%1/events.jsonl'; "
                       "echo 'encoding latents for batch 2' >&2; sleep 0.2; kill -9 $$")
            .arg(dir)));
    job->setRunDirectory(dir);
    QSignalSpy ended(job, &WorkerJob::ended);
    w.jobs()->addJob(job);
    w.openRun(dir);
    RunPage* page = w.runPage();
    QVERIFY(ended.wait(10'000));
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Failed, 5000);
    const QString label = page->stateLabel()->text();
    QVERIFY2(label.startsWith(QStringLiteral("failed: ")) && label.contains(QStringLiteral("SIGKILL")) &&
                 label.contains(QStringLiteral("out of memory")),
             qPrintable(label));
    QVERIFY(page->lastLinesView()->isVisible());
    QVERIFY2(page->lastLinesView()->toPlainText().contains(QStringLiteral("encoding latents for batch 2")),
             qPrintable(page->lastLinesView()->toPlainText()));
    QTRY_VERIFY(page->statsLabel()->text().contains(QStringLiteral("peak RSS 3.0 GB")));
    const int row = w.runsModel()->rowForRunDir(dir);
    QVERIFY(row >= 0);
    QCOMPARE(w.runsModel()->status(row).state, RunState::Failed);
    QVERIFY(w.runsModel()->status(row).reason.contains(QStringLiteral("SIGKILL")));
    // The supervisor told the folder: any other reader knows at once, without waiting for the
    // heartbeat to go stale (it used to show "running (elsewhere)" for 60 s).
    QVERIFY(fake::readAll(dir + QStringLiteral("/events.jsonl")).contains("\"supervisor\":true"));
    RunsModel other(nullptr);
    other.setWorkspace(ws_.path());
    const int orow = other.rowForRunDir(dir);
    QVERIFY(orow >= 0);
    QCOMPARE(other.status(orow).state, RunState::Failed);
    QVERIFY(other.status(orow).reason.contains(QStringLiteral("SIGKILL")));
    // No checkpoint yet: nothing to resume from, and the button says why.
    QVERIFY(page->resumeButton()->isVisible());
    QVERIFY(!page->resumeButton()->isEnabled());
    QVERIFY(page->resumeButton()->toolTip().contains(QStringLiteral("no checkpoint")));
  }

  void interruptedRunShowsTheEngineLogTail() {
    const QString dir = run("gone_run");
    writeFile(dir + QStringLiteral("/events.jsonl"),
              started(1'700'000'000, "upsampler", 0, 10) + step(1'700'000'001, 1, "upsampler", 0.5));
    QByteArray log;
    for (int i = 1; i <= 30; ++i) log += QStringLiteral("[info] line %1\n").arg(i).toUtf8();
    writeFile(dir + QStringLiteral("/logs/engine.log"), log + "[error] CUDA out of memory\n");
    MainWindow w(ws_.path(), 60'000);
    w.show();
    w.openRun(dir);
    RunPage* page = w.runPage();
    QCOMPARE(page->status().state, RunState::Interrupted);
    QVERIFY(page->lastLinesView()->isVisible());
    const QStringList lines = page->lastLinesView()->toPlainText().split(QLatin1Char('\n'));
    QCOMPARE(lines.size(), 8);
    QCOMPARE(lines.last(), QStringLiteral("[error] CUDA out of memory"));
    QCOMPARE(lines.first(), QStringLiteral("[info] line 24"));
    QVERIFY(QDir(dir).removeRecursively());
  }

  void resumeRestartsTheWorkerFromTheLatestCheckpoint() {
    const QString dir = JobManager::normalizedPath(run("resume_run"));
    // The run was made on a server: its run.yaml names a folder that does not exist here.
    makeCancelledRun(dir, QStringLiteral("/srv/runs/resume_run"));
    const QString argsFile = ws_.filePath(QStringLiteral("resume_args.txt"));
    const QString worker = fake::writeScript(ws_.path(), QStringLiteral("resume.sh"),
                                             QStringLiteral(R"(
echo "$@" > '%1'
out='%2/events.jsonl'
ev started '"job":"upsampler","resume_step":2,"max_train_steps":4,"world_size":1,"config":{}' | tee -a "$out"
sleep 0.3
{ step 3; step 4; ev checkpoint '"step":4,"path":"checkpoint-4"'; finished completed 4; } | tee -a "$out"
exit 0)")
                                                 .arg(argsFile, dir));
    qputenv("WANSTUDIO_ENGINE", worker.toUtf8());
    MainWindow w(ws_.path(), 60'000);
    w.show();
    w.openRun(dir);
    RunPage* page = w.runPage();
    QCOMPARE(page->status().state, RunState::Cancelled);
    QPushButton* resume = buttonNamed(page, QStringLiteral("Resume"));
    QVERIFY(resume && resume->isVisible() && resume->isEnabled());
    QVERIFY2(resume->toolTip().contains(QStringLiteral("checkpoint-2")), qPrintable(resume->toolTip()));
    QTest::mouseClick(resume, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Running, 5000);
    QVERIFY(!resume->isVisible());
    QVERIFY(page->cancelButton()->isVisible());
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Completed, 10'000);
    qunsetenv("WANSTUDIO_ENGINE");
    QCOMPARE(QString::fromUtf8(fake::readAll(argsFile)).trimmed(),
             QStringLiteral("train-upsampler --config %1/run.yaml --output_dir %1 --resume_from_checkpoint latest")
                 .arg(dir));
    // One run, two segments: the curve goes on where it stopped.
    QCOMPARE(page->events()->summary().segments, 2);
    page->lossChart()->replotNow();
    QCOMPARE(page->lossChart()->pointCount(QStringLiteral("upsampler")), 4);
    QVERIFY(page->statsLabel()->text().contains(QStringLiteral("resumed 1 time")));
  }

  void resumeNeedsRunYaml() {
    const QString dir = run("no_yaml_run");
    makeCancelledRun(dir, dir);
    QFile::remove(dir + QStringLiteral("/run.yaml"));
    MainWindow w(ws_.path(), 60'000);
    w.openRun(dir);
    QString why;
    QVERIFY(!w.runPage()->canResume(&why));
    QVERIFY2(why.contains(QStringLiteral("run.yaml")), qPrintable(why));
    QVERIFY(!w.runPage()->resume(0, &why));
    QVERIFY(QDir(dir).removeRecursively());
  }

  void quitCancelsLiveWorkersFirst() {
    const QString dir = run("quit_run");
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("quit.sh"),
                                      QStringLiteral("started 100; step 1; while read -r line; do [ \"$line\" = cancel "
                                                     "] && { finished cancelled 1; exit 130; }; done")));
    job->setRunDirectory(dir);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    w.jobs()->addJob(job);
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 2, 10'000);
    w.quitStoppingWorkers(false);  // what SIGINT does: no question, cancel, then close
    QVERIFY(w.isVisible());        // still waiting for the worker
    QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), 10'000);
    QCOMPARE(job->result().state, RunState::Cancelled);
  }

  // Quit, keep training: the window closes at once and the worker goes on without it (its pipes
  // closed: stdin's end and a broken stdout mean nothing to it), writing its run folder.
  void quitKeepingTheWorkersTraining() {
    const QString dir = run("keep_run");
    QDir().mkpath(dir);
    MainWindow w(ws_.path(), 60'000);
    w.show();
    auto* job = new WorkerJob;
    job->setProgram(
        fake::writeScript(ws_.path(), QStringLiteral("keep.sh"),
                          QStringLiteral("trap '' PIPE; started 100; step 1; n=2; while [ $n -lt 400 ]; do sleep 0.05; "
                                         "echo $n >> '%1/alive'; step $n 2>/dev/null; n=$((n+1)); done")
                              .arg(dir)));
    job->setRunDirectory(dir);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    w.jobs()->addJob(job);
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 2, 10'000);
    const qint64 pid = job->processId();
    QVERIFY(pid > 0);
    w.quitKeepingWorkers();
    QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), 5000);
    QVERIFY(job->detached());
    QVERIFY(w.jobs()->liveJobs().isEmpty());
    // Still training: its file keeps growing after the studio let it go.
    const qint64 before = QFileInfo(dir + QStringLiteral("/alive")).size();
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(dir + QStringLiteral("/alive")).size() > before + 20, 10'000);
    QCOMPARE(::kill(pid_t(pid), 0), 0);
    ::kill(pid_t(pid), SIGKILL);
  }

  // Start Run with a well-formed file holding a bad value: the worker refuses it before `started`,
  // and the window says so (it used to do nothing at all).
  void startRunWithBadValuesSaysWhy() {
    const QString dir = run("bad_values");
    QDir().mkpath(dir);
    const QString yaml = dir + QStringLiteral("/run.yaml");
    QFile f(yaml);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QStringLiteral("job: upsampler\noutput_dir: %1\nlearning_rate: -1\n").arg(dir).toUtf8());
    f.close();
    const QByteArray engineBefore = qgetenv("WANSTUDIO_ENGINE");
    qputenv("WANSTUDIO_ENGINE", fake::writeScript(ws_.path(), QStringLiteral("refuse.sh"),
                                                  QStringLiteral("echo 'error: --learning_rate: must be at least 0, "
                                                                 "got -1' >&2; exit 1"))
                                    .toUtf8());
    MainWindow w(ws_.path(), 60'000);
    w.show();
    WorkerJob* job = w.startRunFile(yaml);
    qputenv("WANSTUDIO_ENGINE", engineBefore);
    QVERIFY(job);
    QMessageBox* box = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((box = w.findChild<QMessageBox*>(QStringLiteral("startRunFailed"))) != nullptr, 10'000);
    QVERIFY2(box->informativeText().contains(QStringLiteral("learning_rate")), qPrintable(box->informativeText()));
    QVERIFY(w.statusBar()->currentMessage().contains(QStringLiteral("did not start")));
    box->close();
    QVERIFY(QDir(dir).removeRecursively());
  }

  // Usable on ordinary screens: the window fits 1280×720 with every page (it needed 1442 px).
  void fitsA1280By720Screen() {
    MainWindow w(ws_.path(), 60'000);
    w.resize(1280, 720);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    for (int i = 0; i < w.pages()->count(); ++i) {
      w.pages()->setCurrentIndex(i);
      QCoreApplication::processEvents();
      QVERIFY2(w.minimumSizeHint().width() <= 1280 && w.minimumSizeHint().height() <= 720,
               qPrintable(QStringLiteral("page %1 needs %2×%3")
                              .arg(w.pages()->tabText(i))
                              .arg(w.minimumSizeHint().width())
                              .arg(w.minimumSizeHint().height())));
      QVERIFY2(w.width() <= 1280,
               qPrintable(QStringLiteral("%1: %2 px wide").arg(w.pages()->tabText(i)).arg(w.width())));
      // Nothing of the page is left to a sideways scroll (with the docks open).
      if (auto* area = qobject_cast<QScrollArea*>(w.pages()->currentWidget()))
        QVERIFY2(area->widget()->minimumSizeHint().width() <= area->viewport()->width(),
                 qPrintable(QStringLiteral("%1 needs %2 px, has %3")
                                .arg(w.pages()->tabText(i))
                                .arg(area->widget()->minimumSizeHint().width())
                                .arg(area->viewport()->width())));
    }
  }

  // The start page: Try the demo sets the demo run up in the chosen folder (never the program's) and
  // the real worker trains it there; the folder becomes the workspace and a recent item.
  void startPageTriesTheDemoInAChosenFolder() {
    if (!QFileInfo::exists(QStringLiteral(WS_ENGINE_EXE))) QFAIL("wanstudio-engine is not built");
    const QByteArray engineBefore = qgetenv("WANSTUDIO_ENGINE");
    qputenv("WANSTUDIO_ENGINE", WS_ENGINE_EXE);
    QTemporaryDir folder;
    MainWindow w(ws_.path(), 60'000);
    w.show();
    QString error;
    WorkerJob* job = w.tryDemoIn(folder.path(), &error);
    qputenv("WANSTUDIO_ENGINE", engineBefore);
    QVERIFY2(job, qPrintable(error));
    const QString runDir = folder.filePath(QStringLiteral("demo-upsampler"));
    QCOMPARE(QFileInfo(job->runDirectory()).absoluteFilePath(), QFileInfo(runDir).absoluteFilePath());
    QSignalSpy events(job, &WorkerJob::eventReceived);
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(events.cbegin(), events.cend(),
                                         [](const QList<QVariant>& e) {
                                           return e.at(0).value<RunEvent>().type == QLatin1String("started");
                                         }),
                             120'000);
    QVERIFY(QFileInfo::exists(folder.filePath(QStringLiteral("data/metadata.json"))));
    QVERIFY(fake::readAll(runDir + QStringLiteral("/run.yaml")).contains(folder.path().toUtf8()));
    QCOMPARE(QFileInfo(w.runsModel()->workspace()).absoluteFilePath(), QFileInfo(folder.path()).absoluteFilePath());
    QVERIFY(StartPage::recent(QStringLiteral("workspaces")).contains(w.runsModel()->workspace()));
    QSignalSpy ended(job, &WorkerJob::ended);
    job->cancel();
    QVERIFY(ended.wait(120'000));
    QCOMPARE(job->result().state, RunState::Cancelled);
  }

  // Preferences keep what was only a flag or a variable: the worker, the presets folder, the
  // heartbeat timeout; the environment still wins for one launch; bad paths are refused.
  void preferencesAreKeptAndUsed() {
    const QString engine = fake::writeScript(ws_.path(), QStringLiteral("my-engine.sh"), QStringLiteral("exit 0"));
    QTemporaryDir presets;
    PreferencesDialog d;
    d.enginePath()->setText(ws_.filePath(QStringLiteral("no-such-engine")));
    d.accept();
    QVERIFY(d.isVisible() || d.result() != QDialog::Accepted);  // refused, nothing kept
    QVERIFY(prefs::enginePath().isEmpty());
    d.enginePath()->setText(engine);
    d.presetsDir()->setText(presets.path());
    d.heartbeatTimeout()->setValue(30);
    QSignalSpy changed(&d, &PreferencesDialog::heartbeatTimeoutChanged);
    d.accept();
    QCOMPARE(d.result(), int(QDialog::Accepted));
    QCOMPARE(changed.at(0).at(0).toInt(), 30'000);
    const QByteArray envEngine = qgetenv("WANSTUDIO_ENGINE"), envConfigs = qgetenv("WANSTUDIO_CONFIGS");
    qunsetenv("WANSTUDIO_ENGINE");
    qunsetenv("WANSTUDIO_CONFIGS");
    QCOMPARE(engineExecutable(), engine);
    QCOMPARE(presetsDirectory(), presets.path());
    AppOptions o;
    QCOMPARE(o.effectiveHeartbeatTimeoutMs(), 30'000);
    qputenv("WANSTUDIO_ENGINE", "/env/wins");
    QCOMPARE(engineExecutable(), QStringLiteral("/env/wins"));
    if (envEngine.isEmpty()) qunsetenv("WANSTUDIO_ENGINE");
    else qputenv("WANSTUDIO_ENGINE", envEngine);
    if (!envConfigs.isEmpty()) qputenv("WANSTUDIO_CONFIGS", envConfigs);
    prefs::setEnginePath({});
    prefs::setPresetsDir({});
    prefs::setHeartbeatTimeoutS(-1);
  }

  // Help: every menu shortcut and the player's keys in one list; the shipped documentation found.
  void helpListsShortcutsAndFindsTheDocs() {
    MainWindow w(ws_.path(), 60'000);
    const QString all = shortcutLines(&w).join(QLatin1Char('\n'));
    QVERIFY2(all.contains(QKeySequence(QKeySequence::New).toString(QKeySequence::NativeText) + "\tNew Run"),
             qPrintable(all));
    QVERIFY(all.contains(QStringLiteral("\tGetting Started")));
    QVERIFY(all.contains(QStringLiteral("Home / End")));
    QVERIFY(QFileInfo::exists(documentationDir() + QStringLiteral("/docs/design/architecture.md")));
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
    if (!QFileInfo::exists(QStringLiteral(WS_APP_EXE))) QFAIL("wanstudio is not built");
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
