// SPDX-License-Identifier: Apache-2.0
// The runs list: which folders are runs, and the state each shows for the events it holds
// and for the workers this studio supervises.
#include <QDateTime>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "app/fake_worker.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "item_models/runs_model.h"

using namespace ws;

namespace {

void writeFile(const QString& path, const QByteArray& data, bool append = false) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | (append ? QIODevice::Append : QIODevice::Truncate)));
  f.write(data);
}

QByteArray ev(const QString& type, double time, const QString& fields = {}) {
  QString s = QStringLiteral("{\"type\":\"%1\",\"time\":%2").arg(type).arg(time, 0, 'f', 3);
  if (!fields.isEmpty()) s += QLatin1Char(',') + fields;
  return (s + QStringLiteral("}\n")).toUtf8();
}

QByteArray started(double t, int max = 10) {
  return ev(
      QStringLiteral("started"), t,
      QStringLiteral("\"job\":\"upsampler\",\"config\":{},\"world_size\":1,\"resume_step\":0,\"max_train_steps\":%1")
          .arg(max));
}
QByteArray step(double t, int s, double loss) {
  return ev(QStringLiteral("step"), t,
            QStringLiteral("\"step\":%1,\"expert\":\"upsampler\",\"loss\":%2").arg(s).arg(loss));
}
QByteArray finished(double t, const char* status, int s) {
  return ev(QStringLiteral("finished"), t,
            QStringLiteral("\"status\":\"%1\",\"step\":%2").arg(QLatin1String(status)).arg(s));
}

double now() { return QDateTime::currentMSecsSinceEpoch() / 1000.0; }

}  // namespace

class TestRunsModel : public QObject {
  Q_OBJECT
  QTemporaryDir ws_;
  QString p(const QString& rel) const { return ws_.filePath(rel); }

  QString label(RunsModel& m, const QString& rel) {
    const int row = m.rowForRunDir(p(rel));
    return row < 0 ? QStringLiteral("<absent>") : m.status(row).label();
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(ws_.isValid());
    const double old = 1'700'000'000;
    writeFile(p("done/events.jsonl"),
              started(old, 2) + step(old + 1, 1, 0.5) + step(old + 2, 2, 0.25) + finished(old + 3, "completed", 2));
    writeFile(p("done/checkpoint-2/run.yaml"), "job: upsampler\n");  // inside a run: not a run
    writeFile(p("cancelled/events.jsonl"), started(old) + step(old + 1, 1, 0.5) + finished(old + 2, "cancelled", 1));
    writeFile(p("failed/events.jsonl"),
              started(old) +
                  ev(QStringLiteral("error"), old + 1, QStringLiteral("\"message\":\"loss is NaN at step 3\"")) +
                  finished(old + 2, "failed", 3));
    writeFile(
        p("config_error/events.jsonl"),
        ev(QStringLiteral("error"), old, QStringLiteral("\"message\":\"run.yaml: learning_rate: not a number\"")) +
            finished(old, "failed", 0));
    writeFile(p("interrupted/events.jsonl"), started(old) + step(old + 1, 1, 0.5) + "{\"type\":\"step\",\"ti");
    writeFile(p("elsewhere/events.jsonl"), started(now()) + step(now(), 1, 0.5));
    writeFile(p("prepared/run.yaml"), "job: upsampler\n");
    writeFile(p("group/nested/events.jsonl"), started(old) + finished(old + 1, "completed", 0));
    QDir().mkpath(p("not_a_run/logs"));
    writeFile(p("not_a_run/notes.txt"), "hello");
  }

  void findsRunFolders() {
    const QStringList dirs = RunsModel::findRunDirs(ws_.path());
    QCOMPARE(dirs.size(), 8);
    QVERIFY(!dirs.contains(p("not_a_run")));
    QVERIFY(!dirs.contains(p("done/checkpoint-2")));
    QVERIFY(dirs.contains(p("group/nested")));
  }

  void statesFromEvents() {
    JobManager jobs;
    RunsModel m(&jobs);
    m.setWorkspace(ws_.path());
    QCOMPARE(m.rowCount(), 8);
    QCOMPARE(label(m, "done"), QStringLiteral("completed"));
    QCOMPARE(label(m, "cancelled"), QStringLiteral("cancelled"));
    QCOMPARE(label(m, "failed"), QStringLiteral("failed: loss is NaN at step 3"));
    QCOMPARE(label(m, "config_error"), QStringLiteral("failed: run.yaml: learning_rate: not a number"));
    QCOMPARE(label(m, "interrupted"), QStringLiteral("interrupted: worker gone (no finished event)"));
    QCOMPARE(label(m, "elsewhere"), QStringLiteral("running (elsewhere)"));
    QCOMPARE(label(m, "prepared"), QStringLiteral("not started"));
    QCOMPARE(label(m, "group/nested"), QStringLiteral("completed"));
    QCOMPARE(label(m, "not_a_run"), QStringLiteral("<absent>"));

    const int done = m.rowForRunDir(p("done"));
    QCOMPARE(m.data(m.index(done, RunsModel::NameColumn), Qt::DisplayRole).toString(), QStringLiteral("done"));
    QCOMPARE(m.data(m.index(done, RunsModel::StepColumn), Qt::DisplayRole).toString(), QStringLiteral("2 / 2"));
    QCOMPARE(m.data(m.index(done, RunsModel::LossColumn), Qt::DisplayRole).toString(), QStringLiteral("0.25"));
    QCOMPARE(m.data(m.index(done, RunsModel::JobColumn), Qt::DisplayRole).toString(), QStringLiteral("upsampler"));
    QCOMPARE(m.data(m.index(m.rowForRunDir(p("group/nested")), RunsModel::NameColumn), Qt::DisplayRole).toString(),
             QStringLiteral("group/nested"));
  }

  void refreshReadsWhatGrewAndWhatWasRemoved() {
    JobManager jobs;
    RunsModel m(&jobs);
    writeFile(p("grows/events.jsonl"), started(1'700'000'000) + step(1'700'000'001, 1, 0.5));
    m.setWorkspace(ws_.path());
    QCOMPARE(label(m, "grows"), QStringLiteral("interrupted: worker gone (no finished event)"));
    QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
    writeFile(p("grows/events.jsonl"), step(1'700'000'002, 2, 0.4) + finished(1'700'000'003, "completed", 2), true);
    m.refresh();
    QCOMPARE(label(m, "grows"), QStringLiteral("completed"));
    QVERIFY(changed.size() >= 1);
    QCOMPARE(m.summary(m.rowForRunDir(p("grows"))).lastStep, 2);
    const int before = m.rowCount();
    QVERIFY(QDir(p("grows")).removeRecursively());
    m.refresh();
    QCOMPARE(m.rowCount(), before - 1);
    QCOMPARE(m.rowForRunDir(p("grows")), -1);
  }

  void liveWorkerShowsRunningThenItsOutcome() {
    JobManager jobs;
    RunsModel m(&jobs);
    const QString run = p("live");
    QDir().mkpath(run);
    // Old timestamps on purpose: only the live worker makes it "running".
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("live.sh"),
                                      QStringLiteral(R"(
echo '{"type":"started","time":1700000000,"job":"upsampler","resume_step":0,"max_train_steps":5}' | tee -a '%1/events.jsonl'
while read -r line; do
  if [ "$line" = cancel ]; then
    echo '{"type":"finished","time":1700000001,"status":"cancelled","step":0}' | tee -a '%1/events.jsonl'
    exit 130
  fi
done)")
                                          .arg(run)));
    job->setRunDirectory(run);
    job->setHeartbeatTimeout(0);
    QSignalSpy ended(job, &WorkerJob::ended);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    jobs.addJob(job);
    m.setWorkspace(ws_.path());
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 1, 10'000);
    m.refresh();
    QCOMPARE(label(m, "live"), QStringLiteral("running"));
    job->cancel();
    QVERIFY(ended.wait(10'000));
    // JobManager::changed refreshes the model.
    QCOMPARE(label(m, "live"), QStringLiteral("cancelled"));
  }

  void supervisedCrashKeepsItsReason() {
    JobManager jobs;
    RunsModel m(&jobs);
    const QString run = p("oom");
    QDir().mkpath(run);
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("oom.sh"),
                                      QStringLiteral(R"(
echo '{"type":"started","time":1700000000,"job":"upsampler","resume_step":0,"max_train_steps":5}' >> '%1/events.jsonl'
kill -9 $$)")
                                          .arg(run)));
    job->setRunDirectory(run);
    QSignalSpy ended(job, &WorkerJob::ended);
    jobs.addJob(job);
    QVERIFY(ended.wait(10'000));
    m.setWorkspace(ws_.path());
    const QString l = label(m, "oom");
    QVERIFY2(l.startsWith(QStringLiteral("failed: worker killed by signal 9 (SIGKILL)")), qPrintable(l));
    // Another session (no JobManager knowledge) reads the same from the supervisor's final
    // record in events.jsonl, at once, with the reason.
    RunsModel other(nullptr);
    other.setWorkspace(ws_.path());
    const RunStatus s = other.status(other.rowForRunDir(run));
    QCOMPARE(s.state, RunState::Failed);
    QVERIFY2(s.reason.contains(QStringLiteral("SIGKILL")), qPrintable(s.reason));
  }

  // Kill is not Cancel: the run is cancelled, and its label says the worker was killed, in this
  // session and in any other that reads the run folder.
  void killedOnRequestSaysSo() {
    JobManager jobs;
    RunsModel m(&jobs);
    const QString run = p("killed");
    QDir().mkpath(run);
    auto* job = new WorkerJob;
    job->setProgram(fake::writeScript(ws_.path(), QStringLiteral("killed.sh"),
                                      QStringLiteral(R"(
echo '{"type":"started","time":1700000000,"job":"upsampler","resume_step":0,"max_train_steps":5}' | tee -a '%1/events.jsonl'
while true; do sleep 1; done)")
                                          .arg(run)));
    job->setRunDirectory(run);
    job->setHeartbeatTimeout(0);
    QSignalSpy ended(job, &WorkerJob::ended);
    QSignalSpy events(job, &WorkerJob::eventReceived);
    jobs.addJob(job);
    QTRY_VERIFY_WITH_TIMEOUT(events.size() >= 1, 10'000);
    job->kill();
    QVERIFY(ended.wait(10'000));
    m.setWorkspace(ws_.path());
    QCOMPARE(label(m, "killed"), QStringLiteral("cancelled: worker killed on request"));
    RunsModel other(nullptr);
    other.setWorkspace(ws_.path());
    QCOMPARE(other.status(other.rowForRunDir(run)).label(), QStringLiteral("cancelled: worker killed on request"));
  }
};

QTEST_GUILESS_MAIN(TestRunsModel)
#include "test_runs_model.moc"
