// SPDX-License-Identifier: Apache-2.0
// WorkerJob against fake workers: final states from `finished`, exit codes and signals,
// the heartbeat watchdog, cancel on stdin, kill of the whole process group.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <unistd.h>

#include "app/fake_worker.h"
#include "jobs/worker_job.h"

using namespace ws;

namespace {

bool processAlive(qint64 pid) {
  if (pid <= 0 || ::kill(pid_t(pid), 0) != 0) return false;
  // A zombie (killed, not yet reaped by init) is dead for our purpose.
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return false;
  const QByteArray s = stat.readAll();
  const int close = s.lastIndexOf(')');
  return close < 0 || s.mid(close + 2, 1) != "Z";
}

}  // namespace

class TestWorkerJob : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  // Runs the script to its end; returns the result.
  JobResult run(const QString& body, int heartbeatMs = 10'000, WorkerJob** keep = nullptr) {
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(dir_.path(), QStringLiteral("w%1.sh").arg(counter_++), body));
    job->setArguments({QStringLiteral("train-upsampler"), QStringLiteral("--config"), QStringLiteral("x.yaml")});
    job->setHeartbeatTimeout(heartbeatMs);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    if (!ended.wait(15'000)) qWarning("worker did not end");
    if (keep) *keep = job;
    return job->result();
  }
  int counter_ = 0;

 private Q_SLOTS:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void completed() {
    WorkerJob* job = nullptr;
    const JobResult r =
        run(QStringLiteral("started 3; step 1; step 2; step 3; finished completed 3; exit 0"), 10'000, &job);
    QCOMPARE(r.state, RunState::Completed);
    QVERIFY(r.sawFinished);
    QCOMPARE(r.step, 3);
    QCOMPARE(r.exitCode, 0);
    QCOMPARE(r.exitStatus(), 0);
    QVERIFY(!job->isRunning());
    QCOMPARE(job->lastStep(), 3);
  }

  void eventsAreParsedAndStderrKept() {
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(dir_.path(), QStringLiteral("ev.sh"),
                                      QStringLiteral("echo 'human log line' >&2; started 2; echo 'not json'; step 1; "
                                                     "ev heartbeat '\"rss_bytes\":1000,\"new_field\":[1,2]'; step 2; "
                                                     "finished completed 2")));
    job->setStderrLineLimit(10);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    QSignalSpy text(job, &WorkerJob::stdoutText);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QVERIFY(ended.wait(10'000));
    QCOMPARE(events.size(), 5);  // started, step, heartbeat, step, finished
    QCOMPARE(events.at(0).at(0).value<RunEvent>().type, QStringLiteral("started"));
    QCOMPARE(events.at(2).at(0).value<RunEvent>().type, QStringLiteral("heartbeat"));
    QCOMPARE(text.size(), 1);
    QCOMPARE(text.at(0).at(0).toString(), QStringLiteral("not json"));
    QVERIFY(job->stderrTail().contains(QStringLiteral("human log line")));
  }

  void runDirectoryFromTheStartedConfig() {
    WorkerJob* job = nullptr;
    run(QStringLiteral("ev started '\"job\":\"upsampler\",\"config\":{\"output_dir\":\"/runs/u1\"},\"resume_step\":0'; "
                       "finished completed 0"),
        10'000, &job);
    QCOMPARE(job->runDirectory(), QStringLiteral("/runs/u1"));
  }

  void stderrTailIsBounded() {
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(
        dir_.path(), QStringLiteral("many.sh"),
        QStringLiteral("for i in $(seq 1 500); do echo \"line $i\" >&2; done; finished completed 0")));
    job->setStderrLineLimit(50);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QVERIFY(ended.wait(10'000));
    QCOMPARE(job->stderrTail().size(), 50);
    QCOMPARE(job->stderrTail().last(), QStringLiteral("line 500"));
  }

  void failedTakesTheErrorMessage() {
    const JobResult r = run(QStringLiteral(
        "ev error '\"message\":\"train.yaml: train_data_meta: no such file\"'; finished failed 0; exit 1"));
    QCOMPARE(r.state, RunState::Failed);
    QVERIFY2(r.reason.contains(QStringLiteral("train_data_meta: no such file")), qPrintable(r.reason));
    QCOMPARE(r.exitStatus(), 1);
  }

  void cancelledFromFinished() {
    const JobResult r = run(QStringLiteral("started 3; step 1; finished cancelled 1; exit 130"));
    QCOMPARE(r.state, RunState::Cancelled);
    QCOMPARE(r.exitCode, 130);
    QCOMPARE(r.exitStatus(), 130);
  }

  void finishedWinsOverExitCode() {
    // The contract: the final state comes from `finished`, not from the exit code.
    const JobResult r = run(QStringLiteral("started 1; step 1; finished completed 1; exit 1"));
    QCOMPARE(r.state, RunState::Completed);
  }

  void exitWithoutFinished() {
    const JobResult r =
        run(QStringLiteral("started 3; step 1; echo 'error: CUDA error: device-side assert' >&2; exit 3"));
    QCOMPARE(r.state, RunState::Failed);
    QVERIFY(!r.sawFinished);
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.reason.contains(QStringLiteral("exited with code 3 without a finished event")), qPrintable(r.reason));
    QVERIFY2(r.reason.contains(QStringLiteral("device-side assert")), qPrintable(r.reason));
    QCOMPARE(r.exitStatus(), 1);
  }

  void cleanExitWithoutFinishedIsAFailure() {
    const JobResult r = run(QStringLiteral("started 3; step 1; exit 0"));
    QCOMPARE(r.state, RunState::Failed);
    QCOMPARE(r.exitStatus(), 1);
  }

  void sigkillWithoutFinishedHintsAtOom() {
    const JobResult r = run(QStringLiteral("started 3; step 1; kill -9 $$"));
    QCOMPARE(r.state, RunState::Failed);
    QCOMPARE(r.signal, SIGKILL);
    QVERIFY2(r.reason.contains(QStringLiteral("signal 9 (SIGKILL)")), qPrintable(r.reason));
    QVERIFY2(r.reason.contains(QStringLiteral("out of memory")), qPrintable(r.reason));
  }

  void segfaultIsACrash() {
    const JobResult r = run(QStringLiteral("started 3; kill -SEGV $$"));
    QCOMPARE(r.state, RunState::Failed);
    QCOMPARE(r.signal, SIGSEGV);
    QVERIFY2(r.reason.contains(QStringLiteral("SIGSEGV")), qPrintable(r.reason));
    QVERIFY(!r.reason.contains(QStringLiteral("out of memory")));
  }

  void tornLastLineIsIgnored() {
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(dir_.path(), QStringLiteral("torn.sh"),
                                      QStringLiteral("started 3; step 1; printf '{\"type\":\"step\",\"ste'; exit 1")));
    QSignalSpy events(job, &WorkerJob::eventReceived);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QVERIFY(ended.wait(10'000));
    QCOMPARE(events.size(), 2);
    QCOMPARE(job->result().state, RunState::Failed);
  }

  void silentWorkerIsKilledByTheWatchdog() {
    WorkerJob* job = nullptr;
    QElapsedTimer t;
    t.start();
    const JobResult r = run(QStringLiteral("started 3; echo $$ > '%1/hung.pid'; sleep 60").arg(dir_.path()), 500, &job);
    QCOMPARE(r.state, RunState::Failed);
    QCOMPARE(r.reason, QStringLiteral("no heartbeat for 0.5 s"));
    QVERIFY(t.elapsed() < 50'000);  // the watchdog, not the end of `sleep 60`
    // The whole group went: the `sleep` child too.
    const qint64 pid = fake::readAll(dir_.filePath(QStringLiteral("hung.pid"))).trimmed().toLongLong();
    QVERIFY(pid > 0);
    QTRY_VERIFY(!processAlive(pid));
  }

  void heartbeatsKeepTheWatchdogQuiet() {
    const JobResult r =
        run(QStringLiteral("started 3; for i in 1 2 3 4 5 6 7 8; do sleep 0.2; ev heartbeat '\"rss_bytes\":1'; done; "
                           "finished completed 3"),
            800);
    QCOMPARE(r.state, RunState::Completed);
  }

  void runsInItsOwnProcessGroup() {
    const QString out = dir_.filePath(QStringLiteral("pgid.txt"));
    const JobResult r =
        run(QStringLiteral("echo \"$$ $(cut -d' ' -f5 /proc/$$/stat)\" > '%1'; finished completed 0").arg(out));
    QCOMPARE(r.state, RunState::Completed);
    const QList<QByteArray> ids = fake::readAll(out).trimmed().split(' ');
    QCOMPARE(ids.size(), 2);
    QCOMPARE(ids[0], ids[1]);  // pgid == pid: it leads its own group
    QVERIFY(ids[1].toLongLong() != qint64(::getpgrp()));
  }

  void cancelWritesCancelOnStdin() {
    const QString got = dir_.filePath(QStringLiteral("got_cancel.txt"));
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(dir_.path(), QStringLiteral("cancel.sh"),
                                      QStringLiteral(R"(
trap 'echo SIGTERM >> "%1"' TERM
started 100; step 1
while read -r line; do
  echo "$line" >> "%1"
  if [ "$line" = cancel ]; then step 2; finished cancelled 2; exit 130; fi
done
exit 7)")
                                          .arg(got)));
    QSignalSpy events(job, &WorkerJob::eventReceived);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 2, 10'000);
    QVERIFY(job->isRunning());
    job->cancel();
    job->cancel();  // once only: a second request must not become a second signal
    QVERIFY(job->cancelRequested());
    QVERIFY(ended.wait(10'000));
    QCOMPARE(job->result().state, RunState::Cancelled);
    QCOMPARE(job->result().exitCode, 130);
    QCOMPARE(job->result().step, 2);
    QCOMPARE(fake::readAll(got), QByteArray("cancel\n"));
  }

  // QProcess says `started` through the event loop, and the worker's first events can come
  // before it (seen under load): Cancel, Save and Kill must reach a worker that has not yet been
  // reported started. Calling them right after start() makes that order certain.
  void controlsReachAWorkerNotYetReportedStarted() {
    const QString got = dir_.filePath(QStringLiteral("early_lines.txt"));
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(dir_.path(), QStringLiteral("early.sh"),
                                      QStringLiteral(R"(
started 100; step 1
while read -r line; do
  echo "$line" >> "%1"
  if [ "$line" = cancel ]; then finished cancelled 1; exit 130; fi
done
exit 7)")
                                          .arg(got)));
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QCOMPARE(job->processId(), 0);  // not reported started yet
    QVERIFY(job->requestSave());
    job->cancel();
    QVERIFY(ended.wait(10'000));
    QCOMPARE(job->result().state, RunState::Cancelled);
    QCOMPARE(job->result().exitCode, 130);
    QCOMPARE(fake::readAll(got), QByteArray("save\ncancel\n"));

    auto* stubborn = new WorkerJob(this);
    stubborn->setProgram(fake::writeScript(dir_.path(), QStringLiteral("early_kill.sh"),
                                           QStringLiteral("trap '' TERM INT; started 3; while :; do sleep 0.2; done")));
    QSignalSpy ended2(stubborn, &WorkerJob::ended);
    stubborn->start();
    QCOMPARE(stubborn->processId(), 0);
    stubborn->kill();
    QVERIFY(ended2.wait(10'000));
    QCOMPARE(stubborn->result().state, RunState::Cancelled);
  }

  void killStopsTheGroup() {
    const QString pidFile = dir_.filePath(QStringLiteral("child.pid"));
    auto* job = new WorkerJob(this);
    job->setProgram(
        fake::writeScript(dir_.path(), QStringLiteral("kill.sh"),
                          QStringLiteral("trap '' TERM INT; sleep 60 & echo $! > '%1'; started 3; wait").arg(pidFile)));
    QSignalSpy events(job, &WorkerJob::eventReceived);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 1, 10'000);
    const qint64 child = fake::readAll(pidFile).trimmed().toLongLong();
    QVERIFY(processAlive(child));
    job->kill();
    QVERIFY(ended.wait(10'000));
    QCOMPARE(job->result().state, RunState::Cancelled);
    QVERIFY2(job->result().reason.contains(QStringLiteral("killed")), qPrintable(job->result().reason));
    QTRY_VERIFY(!processAlive(child));
  }

  // A worker that ignores Cancel (stuck in one long computation) is killed after the grace
  // period, and the result says so; with no grace it is left alone.
  void cancelEscalatesToKillAfterTheGrace() {
    const QString body = QStringLiteral("trap '' TERM INT; started 3; step 1; while :; do sleep 0.2; done");
    auto* job = new WorkerJob(this);
    job->setProgram(fake::writeScript(dir_.path(), QStringLiteral("stuck.sh"), body));
    job->setCancelGrace(1'000);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 2, 10'000);
    job->cancel();
    QVERIFY(ended.wait(10'000));
    QCOMPARE(job->result().state, RunState::Cancelled);
    QVERIFY2(job->result().reason.contains(QStringLiteral("did not stop within 1 s of Cancel")),
             qPrintable(job->result().reason));

    auto* patient = new WorkerJob(this);
    patient->setProgram(fake::writeScript(dir_.path(), QStringLiteral("stuck2.sh"), body));
    patient->setCancelGrace(0);
    QSignalSpy events2(patient, &WorkerJob::eventReceived);
    QSignalSpy ended2(patient, &WorkerJob::ended);
    patient->start();
    QTRY_VERIFY_WITH_TIMEOUT(events2.size() >= 2, 10'000);
    patient->cancel();
    QVERIFY(!ended2.wait(2'000));  // no grace: Cancel alone never kills
    QVERIFY(patient->isRunning());
    patient->kill();
    QVERIFY(ended2.wait(10'000));
  }

  void missingProgramFailsToStart() {
    auto* job = new WorkerJob(this);
    job->setProgram(dir_.filePath(QStringLiteral("no-such-worker")));
    QSignalSpy ended(job, &WorkerJob::ended);
    job->start();
    QVERIFY(ended.wait(5'000));
    QCOMPARE(job->result().state, RunState::Failed);
    QVERIFY2(job->result().reason.contains(QStringLiteral("could not start")), qPrintable(job->result().reason));
    QVERIFY(!job->isRunning());
  }

  void engineLocatorHonoursEnvironment() {
    qputenv("WANSTUDIO_ENGINE", "/opt/custom/wanstudio-engine");
    WorkerJob job;
    QCOMPARE(job.program(), QStringLiteral("/opt/custom/wanstudio-engine"));
    qunsetenv("WANSTUDIO_ENGINE");
  }
};

QTEST_GUILESS_MAIN(TestWorkerJob)
#include "test_worker_job.moc"
