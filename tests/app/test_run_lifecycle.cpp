// SPDX-License-Identifier: Apache-2.0
// The "done when", against a miniature trainer (fake::kTrainerBody) in place of the
// worker: from the GUI, start a run, watch its loss fall live, cancel it, resume it from its
// checkpoint to the end; the same run through `wanstudio --batch`, Ctrl-C and a resume there.
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <unistd.h>

#include "app/fake_worker.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "loss_chart.h"
#include "main_window.h"
#include "runfolder/run_checkpoints.h"
#include "runfolder/run_events.h"
#include "item_models/runs_model.h"
#include "pages/run_page.h"
#include "test_paths.h"

using namespace ws;

namespace {

// The steps a reader keeps: resumes must leave 1..n once each.
QVector<qint64> keptSteps(const RunEvents& ev) {
  QVector<qint64> out;
  for (const auto& p : ev.steps())
    if (!p.dropped) out << p.step;
  return out;
}

QVector<qint64> oneTo(qint64 n) {
  QVector<qint64> v;
  for (qint64 i = 1; i <= n; ++i) v << i;
  return v;
}

}  // namespace

class TestRunLifecycle : public QObject {
  Q_OBJECT
  QTemporaryDir ws_;
  QString trainer_;

  QString writeYaml(const QString& name, int steps, int every) {
    const QString path = ws_.filePath(name + QStringLiteral(".yaml"));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QStringLiteral("job: upsampler\noutput_dir: %1\nmax_train_steps: %2\ncheckpointing_steps: %3\n")
                .arg(ws_.filePath(name))
                .arg(steps)
                .arg(every)
                .toUtf8());
    return path;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("WanStudioTest"));
    QCoreApplication::setApplicationName(QStringLiteral("wanstudio-lifecycle-test"));
    QSettings().clear();
    QVERIFY(ws_.isValid());
    trainer_ = fake::writeScript(ws_.path(), QStringLiteral("trainer.sh"), QString::fromUtf8(fake::kTrainerBody));
    qputenv("WANSTUDIO_ENGINE", trainer_.toUtf8());
    qputenv("STEP_SLEEP", "0.03");
  }

  void startWatchCancelResumeFromTheGui() {
    const QString yaml = writeYaml(QStringLiteral("demo"), 80, 25);
    MainWindow w(ws_.path(), 10'000);
    w.show();
    QString error;
    // What New Run's Start does once it has written the run YAML (test_config_form covers the dialog).
    WorkerJob* job = w.jobs()->startRun(yaml, {}, &error);
    QVERIFY2(job, qPrintable(error));
    const QString dir = JobManager::normalizedPath(ws_.filePath(QStringLiteral("demo")));
    w.openRun(dir);
    RunPage* page = w.runPage();

    // Live: points arrive while it runs, and the loss falls.
    QTRY_VERIFY_WITH_TIMEOUT(page->events()->steps().size() >= 10, 10'000);
    QCOMPARE(page->status().state, RunState::Running);
    QVERIFY(!page->status().elsewhere);
    page->lossChart()->replotNow();
    const qsizetype seen = page->lossChart()->pointCount(QStringLiteral("upsampler"));
    QVERIFY(seen >= 10);
    QVERIFY(page->events()->steps().last().loss < page->events()->steps().first().loss);
    QTRY_VERIFY_WITH_TIMEOUT(page->lossChart()->pointCount(QStringLiteral("upsampler")) > seen, 10'000);
    QTRY_VERIFY_WITH_TIMEOUT(w.runsModel()->rowForRunDir(dir) >= 0, 5000);

    // Cancel: it finishes the step, checkpoints and reports cancelled.
    QVERIFY(page->cancelButton()->isVisible());
    QTest::mouseClick(page->cancelButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Cancelled, 10'000);
    QCOMPARE(job->result().exitCode, 130);
    const qint64 stoppedAt = page->events()->summary().finishedStep;
    QVERIFY(stoppedAt > 0 && stoppedAt < 80);
    QCOMPARE(latestCheckpointStep(dir), stoppedAt);
    QTRY_COMPARE_WITH_TIMEOUT(w.runsModel()->status(w.runsModel()->rowForRunDir(dir)).state, RunState::Cancelled, 5000);

    // Resume: the same run goes on from its checkpoint to the end.
    QVERIFY(page->resumeButton()->isVisible() && page->resumeButton()->isEnabled());
    QTest::mouseClick(page->resumeButton(), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Running, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Completed, 20'000);
    WorkerJob* resumed = w.jobs()->lastJobForRun(dir);
    QVERIFY(resumed != job);
    QVERIFY(resumed->arguments().contains(QStringLiteral("--resume_from_checkpoint")));
    const RunSummary& s = page->events()->summary();
    QCOMPARE(s.segments, 2);
    QCOMPARE(s.resumeStep, stoppedAt);
    QCOMPARE(keptSteps(*page->events()), oneTo(80));
    page->lossChart()->replotNow();
    QCOMPARE(page->lossChart()->pointCount(QStringLiteral("upsampler")), 80);
    QCOMPARE(page->progressBar()->value(), 80);
    QCOMPARE(latestCheckpointStep(dir), 80);

    // Resume from an earlier checkpoint: the steps after it are trained again.
    QVERIFY(checkpointSteps(dir).contains(25));
    QString why;
    QVERIFY2(page->resume(0, &why, dir + QStringLiteral("/checkpoint-25")), qPrintable(why));
    WorkerJob* again = w.jobs()->lastJobForRun(dir);
    QVERIFY(again != resumed);
    const QStringList args = again->arguments();
    QCOMPARE(args.at(args.indexOf(QStringLiteral("--resume_from_checkpoint")) + 1),
             dir + QStringLiteral("/checkpoint-25"));
    QTRY_COMPARE_WITH_TIMEOUT(page->status().state, RunState::Completed, 20'000);
    QCOMPARE(page->events()->summary().resumeStep, 25);
    QCOMPARE(keptSteps(*page->events()), oneTo(80));
  }

  // Data parallel from the GUI: N processes go through the engine's launcher, and a resume
  // starts the run with the world size of its last start.
  void processesGoThroughTheLauncherAndResumeKeepsThem() {
    QCOMPARE(JobManager::workerArguments(QStringLiteral("train-experts"), QStringLiteral("r.yaml"),
                                         {QStringLiteral("--seed"), QStringLiteral("3")}, 2),
             (QStringList{"launch", "--nproc", "2", "train-experts", "--config", "r.yaml", "--seed", "3"}));
    QCOMPARE(JobManager::workerArguments(QStringLiteral("train-upsampler"), QStringLiteral("r.yaml"), {}, 1),
             (QStringList{"train-upsampler", "--config", "r.yaml"}));
    const QString yaml = writeYaml(QStringLiteral("dp"), 5, 5);
    const QString dir = ws_.filePath(QStringLiteral("dp"));
    QVERIFY(QDir().mkpath(dir + "/checkpoint-5"));
    QFile::copy(yaml, dir + "/run.yaml");
    QFile ev(dir + "/events.jsonl");
    QVERIFY(ev.open(QIODevice::WriteOnly));
    ev.write(
        "{\"type\":\"started\",\"time\":1,\"job\":\"upsampler\",\"config\":{},\"world_size\":3,\"resume_step\":0,\"max_"
        "train_steps\":5}\n"
        "{\"type\":\"finished\",\"time\":2,\"status\":\"cancelled\",\"step\":5}\n");
    ev.close();
    JobManager jobs;
    QString error;
    WorkerJob* job = jobs.resumeRun(dir, {}, &error);
    QVERIFY2(job, qPrintable(error));
    QCOMPARE(job->arguments().mid(0, 4), (QStringList{"launch", "--nproc", "3", "train-upsampler"}));
    QVERIFY(job->arguments().contains(QStringLiteral("--resume_from_checkpoint")));
    job->kill();
    QTRY_VERIFY_WITH_TIMEOUT(!job->isRunning(), 10'000);
    WorkerJob* fresh = jobs.startRun(yaml, {}, &error, 2);
    QVERIFY2(fresh, qPrintable(error));
    QCOMPARE(fresh->arguments().first(), QStringLiteral("launch"));
    fresh->kill();
    QTRY_VERIFY_WITH_TIMEOUT(!fresh->isRunning(), 10'000);
  }

  void theSameRunThroughBatchWithCtrlCAndResume() {
    const QString yaml = writeYaml(QStringLiteral("batch_demo"), 60, 20);
    const QString dir = ws_.filePath(QStringLiteral("batch_demo"));
    QProcess p;
    p.setProgram(QStringLiteral(WS_APP_EXE));
    p.setArguments({QStringLiteral("--batch"), yaml});
    p.setChildProcessModifier([] { ::setpgid(0, 0); });  // a shell's foreground job
    p.start();
    QVERIFY(p.waitForStarted());
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT((out += p.readAllStandardOutput()).contains("step 10/60"), 10'000);
    QCOMPARE(::kill(-pid_t(p.processId()), SIGINT), 0);  // Ctrl-C
    QVERIFY(p.waitForFinished(10'000));
    out += p.readAllStandardOutput();
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(out.contains("wanstudio: run cancelled at step"), out.constData());
    QVERIFY2(out.contains("wanstudio: run folder: " + dir.toUtf8()), out.constData());
    const qint64 stoppedAt = latestCheckpointStep(dir);
    QVERIFY(stoppedAt >= 10 && stoppedAt < 60);

    // Resumed by hand on the server, then opened in the studio: one continuous run.
    p.setArguments({QStringLiteral("--batch"), dir + QStringLiteral("/run.yaml"),
                    QStringLiteral("--resume_from_checkpoint"), QStringLiteral("latest")});
    p.start();
    QVERIFY(p.waitForFinished(30'000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardOutput().contains("wanstudio: run completed at step 60"));
    MainWindow w(ws_.path(), 10'000);
    w.openRun(dir);
    QCOMPARE(w.runPage()->status().state, RunState::Completed);
    QCOMPARE(keptSteps(*w.runPage()->events()), oneTo(60));
    // Completed and at its last step: Resume asks for a higher total first.
    QVERIFY(w.runPage()->resumeButton()->isEnabled());
    QVERIFY(w.runPage()->resume(70));
    QTRY_COMPARE_WITH_TIMEOUT(w.runPage()->status().state, RunState::Completed, 20'000);
    QCOMPARE(keptSteps(*w.runPage()->events()), oneTo(70));
  }
};

QTEST_MAIN(TestRunLifecycle)
#include "test_run_lifecycle.moc"
