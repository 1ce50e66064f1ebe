// SPDX-License-Identifier: Apache-2.0
// The run queue against a miniature trainer (fake::kTrainerBody): runs one after another, each
// leaving the queue only once its worker said `started`; a run that cannot start stays, failed,
// with its reason, and the next one still runs; reorder, pause, remove and retry are kept in the
// queue file; a crash while a run was starting is sorted out on the next open; and the real
// studio killed with SIGKILL while the queue runs loses nothing of the queue file.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <unistd.h>

#include "app/fake_worker.h"
#include "docks/queue_dock.h"
#include "item_models/run_queue_model.h"
#include "jobs/job_manager.h"
#include "jobs/run_queue.h"
#include "jobs/worker_job.h"
#include "runfolder/run_lock.h"
#include "test_paths.h"

using namespace ws;

namespace {

QJsonObject readQueueFile(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

QStringList runNames(const RunQueue& q) {
  QStringList out;
  for (const auto& e : q.entries()) out << QFileInfo(e.runDir).fileName();
  return out;
}

QString lastFinished(const QString& runDir) {
  QFile f(runDir + QStringLiteral("/events.jsonl"));
  if (!f.open(QIODevice::ReadOnly)) return {};
  QString status;
  for (const QByteArray& line : f.readAll().split('\n')) {
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o.value(QLatin1String("type")).toString() == QLatin1String("finished"))
      status = o.value(QLatin1String("status")).toString();
  }
  return status;
}

double startedTime(const QString& runDir) {
  QFile f(runDir + QStringLiteral("/events.jsonl"));
  if (!f.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : f.readAll().split('\n')) {
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o.value(QLatin1String("type")).toString() == QLatin1String("started"))
      return o.value(QLatin1String("time")).toDouble();
  }
  return -1;
}

}  // namespace

class TestRunQueue : public QObject {
  Q_OBJECT
  QString trainer_;

  // A run folder <ws>/<name>/ with its run.yaml, as the New Run dialog writes it.
  static QString writeRun(const QString& ws, const QString& name, int steps, const QString& extra = {}) {
    const QString dir = ws + QLatin1Char('/') + name;
    QDir().mkpath(dir);
    const QString path = dir + QStringLiteral("/run.yaml");
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QStringLiteral("job: upsampler\noutput_dir: %1\nmax_train_steps: %2\n%3")
                .arg(dir)
                .arg(steps)
                .arg(extra)
                .toUtf8());
    return path;
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("WanStudioTest"));
    QCoreApplication::setApplicationName(QStringLiteral("wanstudio-queue-test"));
    QSettings().clear();
    static QTemporaryDir scripts;
    // A trainer that refuses run files holding `refuse: yes` with a config error, as the worker does.
    trainer_ = fake::writeScript(
        scripts.path(), QStringLiteral("trainer.sh"),
        QStringLiteral(
            "for a in \"$@\"; do [ -f \"$a\" ] && grep -q '^refuse: yes' \"$a\" && "
            "{ echo 'error: learning_rate: must be positive' >&2; "
            "ev error '\"message\":\"learning_rate: must be positive\"'; finished failed 0; exit 1; }; done\n") +
            QString::fromUtf8(fake::kTrainerBody));
    qputenv("WANSTUDIO_ENGINE", trainer_.toUtf8());
    qputenv("STEP_SLEEP", "0.02");
  }

  void editsAreKeptInTheQueueFile() {
    QTemporaryDir ws;
    JobManager jobs;
    RunQueue q(&jobs);
    QVERIFY(q.open(ws.path()));
    q.setPaused(true);  // nothing starts while the queue is edited
    const QString a = q.add(writeRun(ws.path(), QStringLiteral("a"), 5), 1);
    const QString b = q.add(writeRun(ws.path(), QStringLiteral("b"), 5), 2);
    const QString c = q.add(writeRun(ws.path(), QStringLiteral("c"), 5), 1);
    QVERIFY(!a.isEmpty() && !b.isEmpty() && !c.isEmpty());
    QVERIFY(q.move(c, -1));
    QVERIFY(q.move(a, +1));
    QCOMPARE(runNames(q), (QStringList{QStringLiteral("c"), QStringLiteral("a"), QStringLiteral("b")}));
    QVERIFY(!q.move(c, -1));  // already first
    QVERIFY(q.remove(a));
    QString error;
    QVERIFY(q.add(ws.filePath(QStringLiteral("missing.yaml")), 1, &error).isEmpty());
    QVERIFY2(error.contains(QStringLiteral("missing.yaml")), qPrintable(error));
    QCOMPARE(jobs.liveJobs().size(), 0);
    // Editing a queued run's file: a bad edit leaves the file alone; a good one moves its folder.
    const QString bYaml = q.entries().at(1).runYaml;
    const QByteArray bBefore = fake::readAll(bYaml);
    QVERIFY(!q.editRunYaml(b, QStringLiteral("job: painter\n"), &error));
    QVERIFY2(error.contains(QStringLiteral("painter")), qPrintable(error));
    QCOMPARE(fake::readAll(bYaml), bBefore);
    QVERIFY(q.editRunYaml(
        b,
        QStringLiteral("job: upsampler\noutput_dir: %1\nmax_train_steps: 9\n").arg(ws.filePath(QStringLiteral("b2"))),
        &error));
    QCOMPARE(q.entries().at(1).runDir, ws.filePath(QStringLiteral("b2")));
    QVERIFY(fake::readAll(bYaml).contains("max_train_steps: 9"));

    // What another studio (or this one after a restart) reads back.
    RunQueue again(&jobs);
    QVERIFY(again.open(ws.path()));
    QVERIFY(again.paused());
    QCOMPARE(runNames(again), (QStringList{QStringLiteral("c"), QStringLiteral("b2")}));
    QCOMPARE(again.entries().at(1).processes, 2);
    QCOMPARE(again.entries().at(0).id, c);
    // The model shows position, state and the estimate.
    RunQueueModel model(&again);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(1, RunQueueModel::PositionColumn).data().toInt(), 2);
    QCOMPARE(model.index(0, RunQueueModel::StateColumn).data().toString(), QStringLiteral("paused"));
    QCOMPARE(model.index(0, RunQueueModel::StartColumn).data().toString(), QStringLiteral("when the queue resumes"));
  }

  void runsOneAfterAnotherAndKeepsFailures() {
    QTemporaryDir ws;
    JobManager jobs;
    RunQueue q(&jobs);
    QVERIFY(q.open(ws.path()));
    q.setPaused(true);
    q.add(writeRun(ws.path(), QStringLiteral("first"), 100), 1);
    q.add(writeRun(ws.path(), QStringLiteral("broken"), 12, QStringLiteral("refuse: yes\n")), 1);
    q.add(writeRun(ws.path(), QStringLiteral("second"), 12), 1);
    QSignalSpy started(&q, &RunQueue::runStarted);
    QueueDock dock(new RunQueueModel(&q, &q));
    QVERIFY(dock.pauseButton()->isChecked());
    dock.pauseButton()->click();  // resume: the queue starts its first run
    QVERIFY(!q.paused());
    QTRY_COMPARE_WITH_TIMEOUT(started.size(), 1, 30'000);
    QCOMPARE(started.at(0).at(0).toString(), ws.filePath(QStringLiteral("first")));
    // It left the queue when it said `started`, and the next one waits for it.
    QCOMPARE(runNames(q), (QStringList{QStringLiteral("broken"), QStringLiteral("second")}));
    QCOMPARE(jobs.liveJobs().size(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(q.estimatedStartMs(0) > 0, 10'000);  // the live run's ETA
    QTRY_COMPARE_WITH_TIMEOUT(started.size(), 2, 60'000);
    QCOMPARE(started.at(1).at(0).toString(), ws.filePath(QStringLiteral("second")));
    // The broken run stayed, failed, with the worker's reason.
    QCOMPARE(q.entries().size(), 1);
    QCOMPARE(q.entries().at(0).state, QueueEntry::State::Failed);
    QVERIFY2(q.entries().at(0).reason.contains(QStringLiteral("learning_rate")), qPrintable(q.entries().at(0).reason));
    QTRY_VERIFY_WITH_TIMEOUT(jobs.liveJobs().isEmpty(), 60'000);
    QCOMPARE(lastFinished(ws.filePath(QStringLiteral("first"))), QStringLiteral("completed"));
    QCOMPARE(lastFinished(ws.filePath(QStringLiteral("second"))), QStringLiteral("completed"));
    QVERIFY(startedTime(ws.filePath(QStringLiteral("second"))) >= startedTime(ws.filePath(QStringLiteral("first"))));
    const QJsonArray saved = readQueueFile(q.filePath()).value(QLatin1String("entries")).toArray();
    QCOMPARE(saved.size(), 1);
    QCOMPARE(saved.at(0).toObject().value(QLatin1String("state")).toString(), QStringLiteral("failed"));
    // Retried after a fix, it runs.
    QFile fix(q.entries().at(0).runYaml);
    QVERIFY(fix.open(QIODevice::WriteOnly));
    fix.write(QStringLiteral("job: upsampler\noutput_dir: %1\nmax_train_steps: 3\n")
                  .arg(ws.filePath(QStringLiteral("broken")))
                  .toUtf8());
    fix.close();
    QVERIFY(q.retry(q.entries().at(0).id));
    QTRY_COMPARE_WITH_TIMEOUT(started.size(), 3, 30'000);
    QVERIFY(q.entries().isEmpty());
  }

  // A run this studio did not start (another studio's, a terminal's: here `flock` holding the run
  // folder's .lock as the worker does) keeps the queue waiting, said in the queue's state; once its
  // worker is gone the queue starts the next run on its own.
  void waitsForARunItDidNotStart() {
    QTemporaryDir ws;
    const QString other = ws.filePath(QStringLiteral("theirs"));
    QDir().mkpath(other);
    QProcess holder;
    holder.start(QStringLiteral("flock"), {QStringLiteral("-x"), QStringLiteral("-o"), other + QStringLiteral("/.lock"),
                                           QStringLiteral("sleep"), QStringLiteral("30")});
    QVERIFY(holder.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(runLockHolder(other) > 0, 10'000);
    JobManager jobs;
    RunQueue q(&jobs);
    QSignalSpy held(&q, &RunQueue::heldBack);
    QSignalSpy started(&q, &RunQueue::runStarted);
    QVERIFY(q.open(ws.path()));
    q.add(writeRun(ws.path(), QStringLiteral("mine"), 5), 1);
    QCOMPARE(q.waitingFor(), other);
    RunQueueModel model(&q);
    QCOMPARE(model.index(0, RunQueueModel::StateColumn).data().toString(),
             QStringLiteral("waiting for theirs, running elsewhere"));
    QTRY_VERIFY_WITH_TIMEOUT(held.size() >= 3, 20'000);  // it looked again, twice, and still waits
    QVERIFY(jobs.liveJobs().isEmpty());
    QCOMPARE(started.size(), 0);
    holder.kill();
    holder.waitForFinished();
    QTRY_COMPARE_WITH_TIMEOUT(started.size(), 1, 20'000);
    QCOMPARE(started.at(0).at(0).toString(), ws.filePath(QStringLiteral("mine")));
    QVERIFY(q.waitingFor().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(jobs.liveJobs().isEmpty(), 30'000);
  }

  void aCrashWhileStartingIsSortedOutOnOpen() {
    QTemporaryDir ws;
    const QString began = writeRun(ws.path(), QStringLiteral("began"), 5);
    const QString never = writeRun(ws.path(), QStringLiteral("never"), 5);
    const qint64 t = QDateTime::currentMSecsSinceEpoch() - 60'000;
    // `began` said started after its launch; `never` did not.
    QFile ev(ws.filePath(QStringLiteral("began/events.jsonl")));
    QVERIFY(ev.open(QIODevice::WriteOnly));
    ev.write(QStringLiteral("{\"type\":\"started\",\"time\":%1,\"job\":\"upsampler\"}\n")
                 .arg(double(t + 5'000) / 1000.0, 0, 'f', 3)
                 .toUtf8());
    ev.close();
    QJsonArray entries;
    int id = 1;
    for (const QString& yaml : {began, never})
      entries.append(QJsonObject{{QStringLiteral("id"), QString::number(id++)},
                                 {QStringLiteral("run_yaml"), yaml},
                                 {QStringLiteral("run_dir"), QFileInfo(yaml).absolutePath()},
                                 {QStringLiteral("job"), QStringLiteral("upsampler")},
                                 {QStringLiteral("processes"), 1},
                                 {QStringLiteral("state"), QStringLiteral("starting")},
                                 {QStringLiteral("starting_ms"), double(t)}});
    QFile qf(ws.filePath(QLatin1String(RunQueue::kFileName)));
    QVERIFY(qf.open(QIODevice::WriteOnly));
    qf.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                       {QStringLiteral("paused"), true},
                                       {QStringLiteral("entries"), entries}})
                 .toJson());
    qf.close();
    JobManager jobs;
    RunQueue q(&jobs);
    QVERIFY(q.open(ws.path()));
    QCOMPARE(runNames(q), (QStringList{QStringLiteral("never")}));
    QCOMPARE(q.entries().at(0).state, QueueEntry::State::Waiting);
    // An unreadable queue file is kept aside, never overwritten.
    QVERIFY(qf.open(QIODevice::WriteOnly));
    qf.write("{ not json");
    qf.close();
    QString error;
    QVERIFY(!q.open(ws.path(), &error));
    QVERIFY2(error.contains(QStringLiteral(".bad")), qPrintable(error));
    QVERIFY(QFile::exists(ws.filePath(QStringLiteral(".wanstudio-queue.json.bad"))));
  }

  void survivesKillingTheStudio() {
    QTemporaryDir ws, home;
    // Three runs queued (paused while written), then the queue file says "go".
    {
      JobManager jobs;
      RunQueue q(&jobs);
      QVERIFY(q.open(ws.path()));
      q.setPaused(true);
      for (const QString& name : {QStringLiteral("one"), QStringLiteral("two"), QStringLiteral("three")})
        QVERIFY(!q.add(writeRun(ws.path(), name, 100000), 1).isEmpty());
    }
    const QString file = ws.filePath(QLatin1String(RunQueue::kFileName));
    QJsonObject root = readQueueFile(file);
    const QJsonArray before = root.value(QLatin1String("entries")).toArray();
    root[QStringLiteral("paused")] = false;
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(root).toJson());
    f.close();

    // The real studio on that workspace; its worker notes its pid so the test can end it.
    const QString pids = ws.filePath(QStringLiteral("worker.pids"));
    const QString worker =
        fake::writeScript(home.path(), QStringLiteral("slow.sh"),
                          QStringLiteral("echo $$ >> '%1'\n").arg(pids) + QString::fromUtf8(fake::kTrainerBody));
    QProcess studio;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("WANSTUDIO_ENGINE"), worker);
    env.insert(QStringLiteral("STEP_SLEEP"), QStringLiteral("1"));
    env.insert(QStringLiteral("HOME"), home.path());
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
    studio.setProcessEnvironment(env);
    studio.start(QStringLiteral(WS_APP_EXE), {ws.path()});
    QVERIFY(studio.waitForStarted());
    // The first run trains: it has left the queue file.
    QTRY_COMPARE_WITH_TIMEOUT(readQueueFile(file).value(QLatin1String("entries")).toArray().size(), 2, 60'000);
    ::kill(pid_t(studio.processId()), SIGKILL);
    studio.waitForFinished();
    QFile p(pids);
    if (p.open(QIODevice::ReadOnly))
      for (const QByteArray& pid : p.readAll().split('\n'))
        if (pid.toInt() > 0) ::kill(pid_t(pid.toInt()), SIGKILL);  // the orphaned worker

    // Nothing of the queue is lost: the two waiting runs, in order, as they were.
    const QJsonArray after = readQueueFile(file).value(QLatin1String("entries")).toArray();
    QCOMPARE(after.size(), 2);
    for (int i = 0; i < 2; ++i) {
      const QJsonObject was = before.at(i + 1).toObject(), is = after.at(i).toObject();
      for (const char* key : {"id", "run_yaml", "run_dir", "job", "processes", "added_ms"})
        QCOMPARE(is.value(QLatin1String(key)), was.value(QLatin1String(key)));
      QCOMPARE(is.value(QLatin1String("state")).toString(), QStringLiteral("waiting"));
    }
    QCOMPARE(lastFinished(ws.filePath(QStringLiteral("one"))), QString());  // it was training, not finished
    QVERIFY(startedTime(ws.filePath(QStringLiteral("one"))) > 0);
    QCOMPARE(startedTime(ws.filePath(QStringLiteral("two"))), -1.0);
    // A new studio reads it back (paused here, so it starts nothing).
    root = readQueueFile(file);
    root[QStringLiteral("paused")] = true;
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QJsonDocument(root).toJson());
    f.close();
    JobManager jobs;
    RunQueue q(&jobs);
    QVERIFY(q.open(ws.path()));
    QCOMPARE(runNames(q), (QStringList{QStringLiteral("two"), QStringLiteral("three")}));
  }
};

QTEST_MAIN(TestRunQueue)
#include "test_run_queue.moc"
