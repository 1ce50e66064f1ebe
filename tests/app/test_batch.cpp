// SPDX-License-Identifier: Apache-2.0
// `wanstudio --batch RUN.yaml`: the real executable against fake workers (WANSTUDIO_ENGINE).
// Exit codes 0/1/130, errors before any worker, flags passed through, Ctrl-C handling, the
// progress line on a terminal and plain lines elsewhere, the final state and run folder.
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <unistd.h>

#include <cmath>

#include "app/fake_worker.h"
#include "app_options.h"
#include "batch_progress.h"
#include "test_paths.h"

using namespace ws;

namespace {

struct Outcome {
  int code = -1;
  QProcess::ExitStatus status = QProcess::NormalExit;
  QString out, err;
};

bool alive(qint64 pid) {
  if (pid <= 0 || ::kill(pid_t(pid), 0) != 0) return false;
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return false;
  const QByteArray s = stat.readAll();
  return s.mid(s.lastIndexOf(')') + 2, 1) != "Z";
}

}  // namespace

class TestBatch : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  int n_ = 0;

  QString yaml(const QString& body) {
    const QString path = dir_.filePath(QStringLiteral("run%1.yaml").arg(n_++));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(body.toUtf8());
    return path;
  }
  QString worker(const QString& body) {
    return fake::writeScript(dir_.path(), QStringLiteral("worker%1.sh").arg(n_++), body);
  }
  // Starts wanstudio in its own process group, as a shell would for a foreground job.
  void setup(QProcess& p, const QString& engine, const QStringList& args, const QMap<QString, QString>& env = {}) {
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert(QStringLiteral("WANSTUDIO_ENGINE"), engine);
    e.remove(QStringLiteral("DISPLAY"));
    e.remove(QStringLiteral("WAYLAND_DISPLAY"));
    e.remove(QStringLiteral("QT_QPA_PLATFORM"));  // --batch needs no display at all
    for (auto it = env.begin(); it != env.end(); ++it) e.insert(it.key(), it.value());
    p.setProcessEnvironment(e);
    p.setProgram(QStringLiteral(WS_APP_EXE));
    p.setArguments(args);
    p.setChildProcessModifier([] { ::setpgid(0, 0); });
  }
  Outcome run(const QString& engine, const QStringList& args, const QMap<QString, QString>& env = {}) {
    QProcess p;
    setup(p, engine, args, env);
    p.start();
    Outcome o;
    if (!p.waitForFinished(30'000)) {
      p.kill();
      p.waitForFinished();
      o.err = QStringLiteral("timed out");
      return o;
    }
    o.code = p.exitCode();
    o.status = p.exitStatus();
    o.out = QString::fromUtf8(p.readAllStandardOutput());
    o.err = QString::fromUtf8(p.readAllStandardError());
    return o;
  }
  Outcome batch(const QString& workerBody, const QStringList& extra = {},
                const QString& job = QStringLiteral("upsampler")) {
    return run(worker(workerBody),
               QStringList{QStringLiteral("--batch"), yaml(QStringLiteral("job: %1\n").arg(job))} + extra);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    if (!QFileInfo::exists(QStringLiteral(WS_APP_EXE))) QFAIL("wanstudio is not built");
  }

  void optionsParse() {
    auto parse = [](const QStringList& a) { return AppOptions::parse(QStringList{QStringLiteral("wanstudio")} + a); };
    AppOptions o = parse({QStringLiteral("--batch"), QStringLiteral("r.yaml"), QStringLiteral("--max_train_steps"),
                          QStringLiteral("5")});
    QCOMPARE(o.mode, AppOptions::Mode::Batch);
    QCOMPARE(o.runYaml, QStringLiteral("r.yaml"));
    QCOMPARE(o.workerArgs, (QStringList{QStringLiteral("--max_train_steps"), QStringLiteral("5")}));
    QCOMPARE(parse({QStringLiteral("--batch")}).mode, AppOptions::Mode::Error);
    o = parse({QStringLiteral("--batch"), QStringLiteral("a.yaml"), QStringLiteral("b.yaml"), QStringLiteral("--seed"),
               QStringLiteral("1")});
    QCOMPARE(o.runYamls, (QStringList{QStringLiteral("a.yaml"), QStringLiteral("b.yaml")}));
    QCOMPARE(o.workerArgs, (QStringList{QStringLiteral("--seed"), QStringLiteral("1")}));
    QCOMPARE(parse({QStringLiteral("--bogus")}).mode, AppOptions::Mode::Error);
    QCOMPARE(parse({QStringLiteral("--version")}).mode, AppOptions::Mode::Version);
    o = parse({QStringLiteral("/ws"), QStringLiteral("--quit-after-ms=50"), QStringLiteral("--heartbeat-timeout"),
               QStringLiteral("2.5")});
    QCOMPARE(o.mode, AppOptions::Mode::Gui);
    QCOMPARE(o.workspace, QStringLiteral("/ws"));
    QCOMPARE(o.quitAfterMs, 50);
    QCOMPARE(o.effectiveHeartbeatTimeoutMs(), 2500);
    QCOMPARE(parse({}).effectiveHeartbeatTimeoutMs(), 60'000);
    QVERIFY(AppOptions::wantsNoDisplay({QStringLiteral("wanstudio"), QStringLiteral("--help")}));
    QVERIFY(!AppOptions::wantsNoDisplay({QStringLiteral("wanstudio"), QStringLiteral("/ws")}));
  }

  void helpAndVersionNeedNoDisplay() {
    Outcome o = run(QStringLiteral("/nonexistent"), {QStringLiteral("--help")});
    QCOMPARE(o.code, 0);
    QVERIFY(o.out.startsWith(QStringLiteral("usage: wanstudio")));
    o = run(QStringLiteral("/nonexistent"), {QStringLiteral("--version")});
    QCOMPARE(o.code, 0);
    // The version, then where this studio finds its worker and presets.
    const QStringList lines = o.out.trimmed().split(QLatin1Char('\n'));
    QCOMPARE(lines.value(0), QStringLiteral("wanstudio " WANSTUDIO_VERSION));
    QCOMPARE(lines.value(1), QStringLiteral("engine: /nonexistent"));
    QVERIFY2(lines.value(2).startsWith(QStringLiteral("presets: ")), qPrintable(o.out));
  }

  void completedExitsZero() {
    const Outcome o =
        batch(QStringLiteral("started 3; step 1; step 2; step 3; ev checkpoint '\"step\":3,\"path\":\"checkpoint-3\"'; "
                             "ev heartbeat '\"rss_bytes\":1'; finished completed 3; exit 0"));
    QCOMPARE(o.status, QProcess::NormalExit);
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.contains(QStringLiteral("started upsampler run, 3 steps")), qPrintable(o.out));
    QVERIFY2(o.out.contains(QStringLiteral("step 2/3  loss 0.48")), qPrintable(o.out));
    QVERIFY(o.out.contains(QStringLiteral("checkpoint step 3 -> checkpoint-3")));
    QVERIFY(o.out.contains(QStringLiteral("finished: completed at step 3")));
    QVERIFY(!o.out.contains(QStringLiteral("heartbeat")));
    QVERIFY(o.out.trimmed().endsWith(QStringLiteral("wanstudio: run completed at step 3")));
  }

  void severalRunFilesRunInOrderWithASummary() {
    // Each run's worker notes its config and flags; the one named fail.yaml fails.
    const QString order = dir_.filePath(QStringLiteral("order.log"));
    const QString w =
        worker(QStringLiteral("echo \"$*\" >> '%1'; case \"$*\" in *fail.yaml*) started 2; step 1; exit 1;; "
                              "*) started 2; step 1; step 2; finished completed 2;; esac")
                   .arg(order));
    auto named = [this](const QString& name) {
      const QString path = dir_.filePath(name);
      QFile f(path);
      f.open(QIODevice::WriteOnly);
      f.write("job: upsampler\n");
      return path;
    };
    const QString a = named(QStringLiteral("a.yaml")), f = named(QStringLiteral("fail.yaml")),
                  b = named(QStringLiteral("b.yaml"));
    const Outcome o = run(w, {QStringLiteral("--batch"), a, f, b, QStringLiteral("--seed"), QStringLiteral("9")});
    QCOMPARE(o.code, 1);  // one failed: the others still ran
    const QStringList ran = QString::fromUtf8(fake::readAll(order)).trimmed().split(QLatin1Char('\n'));
    QCOMPARE(ran.size(), 3);
    QVERIFY(ran[0].contains(QStringLiteral("a.yaml")) && ran[1].contains(QStringLiteral("fail.yaml")) &&
            ran[2].contains(QStringLiteral("b.yaml")));
    for (const QString& line : ran) QVERIFY2(line.contains(QStringLiteral("--seed 9")), qPrintable(line));
    QVERIFY2(o.err.contains(QStringLiteral("wanstudio: 2 of 3 runs completed")), qPrintable(o.err));
    QVERIFY2(o.err.contains(QStringLiteral("  a.yaml: completed at step 2")), qPrintable(o.err));
    QVERIFY2(o.err.contains(QStringLiteral("  fail.yaml: failed at step 1")), qPrintable(o.err));
    QVERIFY2(o.err.contains(QStringLiteral("  b.yaml: completed at step 2")), qPrintable(o.err));
    QVERIFY2(o.out.contains(QStringLiteral("wanstudio: run 3 of 3: ") + b), qPrintable(o.out));
    // All completed: exit 0, the summary on stdout.
    const Outcome ok = run(w, {QStringLiteral("--batch"), a, b});
    QCOMPARE(ok.code, 0);
    QVERIFY2(ok.out.contains(QStringLiteral("wanstudio: 2 of 2 runs completed")), qPrintable(ok.out));
  }

  void aCancelledRunStopsTheQueue() {
    const QString w = worker(QStringLiteral("started 3; step 1; finished cancelled 1; exit 130"));
    const Outcome o = run(w, {QStringLiteral("--batch"), yaml(QStringLiteral("job: upsampler\n")),
                              yaml(QStringLiteral("job: upsampler\n"))});
    QCOMPARE(o.code, 130);
    QVERIFY2(o.err.contains(QStringLiteral("wanstudio: 0 of 2 runs completed")), qPrintable(o.err));
    QVERIFY2(o.err.contains(QStringLiteral("not started (the queue was cancelled)")), qPrintable(o.err));
    QVERIFY2(!o.out.contains(QStringLiteral("run 2 of 2")), qPrintable(o.out));
  }

  void finalStateAndRunFolder() {
    const QString out = dir_.filePath(QStringLiteral("runs/u1"));
    Outcome o =
        batch(QStringLiteral("started 2; step 1; step 2; finished completed 2"), {QStringLiteral("--output_dir"), out});
    QCOMPARE(o.code, 0);
    QVERIFY2(o.out.trimmed().endsWith(
                 QStringLiteral("wanstudio: run completed at step 2\nwanstudio: run folder: %1").arg(out)),
             qPrintable(o.out));
    // From the YAML (relative to it) when no flag says otherwise; a failure says it on stderr.
    const QString y = yaml(QStringLiteral("job: upsampler\noutput_dir: runs/u2\n"));
    o = run(worker(QStringLiteral("started 2; step 1; exit 1")), {QStringLiteral("--batch"), y});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains(QStringLiteral("wanstudio: run folder: %1").arg(dir_.filePath(QStringLiteral("runs/u2")))),
             qPrintable(o.err));
  }

  void plainLinesWhenNotATerminal() {
    const Outcome o = batch(QStringLiteral("started 3; step 1; step 2; step 3; finished completed 3"));
    QCOMPARE(o.code, 0);
    QVERIFY(!o.out.contains(QLatin1Char('\r')));
    QVERIFY(!o.out.contains(QStringLiteral("\x1b[")));
    for (int s = 1; s <= 3; ++s) QVERIFY(o.out.contains(QStringLiteral("step %1/3  loss").arg(s)));
  }

  void progressLineOnATerminal() {
    // `script` gives wanstudio a pseudo-terminal, as an interactive shell would.
    const QString script = QStandardPaths::findExecutable(QStringLiteral("script"));
    if (script.isEmpty()) QSKIP("script (util-linux) is not installed");
    const QString w =
        worker(QStringLiteral("started 40; for i in $(seq 1 40); do step $i; done; "
                              "ev checkpoint '\"step\":40,\"path\":\"checkpoint-40\"'; finished completed 40"));
    const QString cmd =
        QStringLiteral("'%1' --batch '%2'").arg(QStringLiteral(WS_APP_EXE), yaml(QStringLiteral("job: upsampler\n")));
    QProcess p;
    setup(p, w, {});
    p.setProgram(script);
    p.setArguments({QStringLiteral("-qfec"), cmd, QStringLiteral("/dev/null")});
    QProcessEnvironment env = p.processEnvironment();
    env.insert(QStringLiteral("TERM"), QStringLiteral("xterm"));
    p.setProcessEnvironment(env);
    p.start();
    QVERIFY(p.waitForFinished(30'000));
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    // Redrawn in place: carriage return + erase line, never one line per step.
    QVERIFY2(out.contains(QStringLiteral("\r\x1b[Kstep 20/40 [##########..........]  50%  loss 0.3")), qPrintable(out));
    QVERIFY(out.contains(QStringLiteral("2 clips/s  eta 10s")));
    QVERIFY(!out.contains(QStringLiteral("step 20/40  loss")));  // the plain line's format
    // Other events are lines of their own; the last progress line stays; then the outcome.
    QVERIFY(out.contains(QStringLiteral("checkpoint step 40 -> checkpoint-40")));
    QVERIFY2(out.contains(QStringLiteral("step 40/40 [####################] 100%")), qPrintable(out));
    QVERIFY(out.trimmed().endsWith(QStringLiteral("wanstudio: run completed at step 40")));
  }

  void progressLineFormat() {
    RunEvents::StepPoint p;
    p.step = 5;
    p.expert = QStringLiteral("high");
    p.loss = 0.123456;
    p.samplesPerS = 3.25;
    p.etaS = 125;
    p.lr = p.gradNorm = 0;
    QCOMPARE(BatchProgress::render(p, 10, 200),
             QStringLiteral("step 5/10 [##########..........]  50% [high]  loss 0.12346  3.25 clips/s  eta 2m05s"));
    QCOMPARE(BatchProgress::render(p, 10, 20).size(), 19);  // cut to the terminal, minus one
    p.etaS = std::nan("");
    QCOMPARE(BatchProgress::render(p, 0, 200), QStringLiteral("step 5 [high]  loss 0.12346  3.25 clips/s"));
  }

  void warningsPrintOnce() {
    // The worker sends each warning as a `log` event and as a line of its human log on stderr.
    const Outcome o =
        batch(QStringLiteral("started 1; ev log '\"level\":\"warning\",\"message\":\"no GPU: bf16 falls back\"'; "
                             "echo '[12:00:01] [warning] no GPU: bf16 falls back' >&2; "
                             "echo '[12:00:02] [warning] only on stderr' >&2; step 1; finished completed 1; exit 0"));
    QCOMPARE(o.code, 0);
    const QString all = o.out + o.err;
    QCOMPARE(all.count(QStringLiteral("no GPU: bf16 falls back")), 1);
    QCOMPARE(all.count(QStringLiteral("only on stderr")), 1);
  }

  void failedExitsOne() {
    const Outcome o =
        batch(QStringLiteral("echo 'loading' >&2; ev error '\"message\":\"run.yaml: train_data_meta: no such file\"'; "
                             "finished failed 0; exit 1"));
    QCOMPARE(o.code, 1);
    QVERIFY(o.out.contains(QStringLiteral("error: run.yaml: train_data_meta: no such file")));
    QVERIFY2(o.err.contains(QStringLiteral("loading")), qPrintable(o.err));  // the worker's stderr goes through
    QVERIFY2(o.err.contains(QStringLiteral("error: run failed at step 0: run.yaml: train_data_meta: no such file")),
             qPrintable(o.err));
  }

  void cancelledExits130() {
    const Outcome o = batch(QStringLiteral("started 3; step 1; finished cancelled 1; exit 130"));
    QCOMPARE(o.code, 130);
    QVERIFY(o.out.contains(QStringLiteral("run cancelled at step 1")));
  }

  void endWithoutFinishedExitsOne() {
    Outcome o = batch(QStringLiteral("started 3; step 1; exit 0"));
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains(QStringLiteral("exited with code 0 without a finished event")), qPrintable(o.err));
    o = batch(QStringLiteral("started 3; step 1; exit 130"));
    QCOMPARE(o.code, 1);
    o = batch(QStringLiteral("started 3; step 1; kill -9 $$"));
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains(QStringLiteral("signal 9 (SIGKILL)")), qPrintable(o.err));
    QVERIFY(o.err.contains(QStringLiteral("out of memory")));
  }

  void heartbeatTimeout() {
    const QString w = worker(QStringLiteral("started 3; sleep 30"));
    const QString y = yaml(QStringLiteral("job: upsampler\n"));
    Outcome o = run(w, {QStringLiteral("--batch"), y},
                    {{QStringLiteral("WANSTUDIO_HEARTBEAT_TIMEOUT"), QStringLiteral("0.5")}});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains(QStringLiteral("no heartbeat for 0.5 s")), qPrintable(o.err));
    o = run(w, {QStringLiteral("--heartbeat-timeout"), QStringLiteral("0.4"), QStringLiteral("--batch"), y});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains(QStringLiteral("no heartbeat for 0.4 s")), qPrintable(o.err));
  }

  void verbAndFlagsReachTheWorker() {
    const QString args = dir_.filePath(QStringLiteral("args.txt"));
    const QString w = worker(QStringLiteral("echo \"$@\" > '%1'; finished completed 0").arg(args));
    const QString y = yaml(QStringLiteral("job: experts\nlearning_rate: 1e-4\n"));
    Outcome o = run(w, {QStringLiteral("--batch"), y, QStringLiteral("--max_train_steps"), QStringLiteral("5"),
                        QStringLiteral("--use_ema=false")});
    QCOMPARE(o.code, 0);
    QCOMPARE(QString::fromUtf8(fake::readAll(args)).trimmed(),
             QStringLiteral("train-experts --config %1 --max_train_steps 5 --use_ema=false").arg(y));
    o = run(w, {QStringLiteral("--batch"), yaml(QStringLiteral("job: upsampler\n"))});
    QVERIFY(fake::readAll(args).startsWith("train-upsampler --config "));
    o = run(w, {QStringLiteral("--batch"), yaml(QStringLiteral("job: vae\n"))});
    QVERIFY(fake::readAll(args).startsWith("train-vae --config "));
  }

  void nprocRunsTheRanksThroughTheLauncher() {
    const QString args = dir_.filePath(QStringLiteral("args_np.txt"));
    const QString w = worker(QStringLiteral("echo \"$@\" > '%1'; finished completed 0").arg(args));
    const QString y = yaml(QStringLiteral("job: experts\n"));
    Outcome o = run(w, {QStringLiteral("--batch"), y, QStringLiteral("--nproc"), QStringLiteral("2"),
                        QStringLiteral("--seed"), QStringLiteral("3")});
    QCOMPARE(o.code, 0);
    QCOMPARE(QString::fromUtf8(fake::readAll(args)).trimmed(),
             QStringLiteral("launch --nproc 2 train-experts --config %1 --seed 3").arg(y));
    o = run(w, {QStringLiteral("--batch"), y, QStringLiteral("--nproc=1")});  // one process: no launcher
    QCOMPARE(o.code, 0);
    QVERIFY(fake::readAll(args).startsWith("train-experts --config "));
    o = run(w, {QStringLiteral("--batch"), y, QStringLiteral("--nproc"), QStringLiteral("zero")});
    QCOMPARE(o.code, 1);
    QVERIFY2(o.err.contains("--nproc needs a number"), qPrintable(o.err));
  }

  static QString aliasBomb() {
    QString y = QStringLiteral("job: upsampler\na: &a [l,l,l,l,l,l,l,l,l]\n");
    const QString names = QStringLiteral("abcdefghi");
    for (int i = 1; i < names.size(); ++i) {
      QStringList refs;
      for (int k = 0; k < 9; ++k) refs << QStringLiteral("*") + names[i - 1];
      y += QStringLiteral("%1: &%1 [%2]\n").arg(names[i]).arg(refs.join(QLatin1Char(',')));
    }
    return y;
  }

  void badYamlIsOneLineErrorWithoutWorker() {
    const QString marker = dir_.filePath(QStringLiteral("ran.txt"));
    const QString w = worker(QStringLiteral("touch '%1'; finished completed 0").arg(marker));
    const QList<QPair<QStringList, QString>> cases = {
        {{QStringLiteral("--batch"), dir_.filePath(QStringLiteral("missing.yaml"))}, QStringLiteral("no such file")},
        {{QStringLiteral("--batch"), yaml(QStringLiteral("learning_rate: 1\n"))}, QStringLiteral("no `job:` key")},
        {{QStringLiteral("--batch"), yaml(QStringLiteral("job: painter\n"))}, QStringLiteral("unknown job 'painter'")},
        {{QStringLiteral("--batch"), yaml(QStringLiteral("job: [upsampler\n"))}, QStringLiteral(".yaml:")},
        {{QStringLiteral("--batch")}, QStringLiteral("--batch needs a run YAML file")},
        // "Billion laughs": it used to hang expanding 9^9 aliases.
        {{QStringLiteral("--batch"), yaml(aliasBomb())}, QStringLiteral("aliases are expanded")},
    };
    for (const auto& c : cases) {
      const Outcome o = run(w, c.first);
      QCOMPARE(o.code, 1);
      QVERIFY2(o.err.startsWith(QStringLiteral("error: ")) && o.err.count(QLatin1Char('\n')) == 1, qPrintable(o.err));
      QVERIFY2(o.err.contains(c.second), qPrintable(o.err));
    }
    QVERIFY(!QFileInfo::exists(marker));
  }

  void ctrlCReachesOnlyTheSupervisorWhichCancelsOnce() {
    const QString got = dir_.filePath(QStringLiteral("got.txt"));
    const QString w = worker(QStringLiteral(R"(
trap 'echo SIGINT >> "%1"' INT
started 100; step 1
while read -r line; do
  echo "$line" >> "%1"
  if [ "$line" = cancel ]; then step 2; finished cancelled 2; exit 130; fi
done)")
                                 .arg(got));
    QProcess p;
    setup(p, w, {QStringLiteral("--batch"), yaml(QStringLiteral("job: upsampler\n"))});
    p.start();
    QVERIFY(p.waitForStarted());
    QByteArray seen;  // QTRY evaluates its expression more than once: accumulate
    QTRY_VERIFY_WITH_TIMEOUT((seen += p.readAllStandardOutput()).contains("step 1"), 10'000);
    // A terminal's Ctrl-C goes to the foreground process group: wanstudio's, not the worker's.
    QCOMPARE(::kill(-pid_t(p.processId()), SIGINT), 0);
    QVERIFY(p.waitForFinished(10'000));
    QCOMPARE(p.exitCode(), 130);
    QCOMPARE(fake::readAll(got), QByteArray("cancel\n"));
  }

  void secondCtrlCKillsTheWorker() {
    const QString pidFile = dir_.filePath(QStringLiteral("stubborn.pid"));
    const QString w = worker(QStringLiteral(R"(
trap '' INT TERM
echo $$ > "%1"
started 100; step 1
while read -r line; do :; done
sleep 60)")
                                 .arg(pidFile));
    QProcess p;
    setup(p, w, {QStringLiteral("--batch"), yaml(QStringLiteral("job: upsampler\n"))});
    p.start();
    QVERIFY(p.waitForStarted());
    QByteArray seen;
    QTRY_VERIFY_WITH_TIMEOUT((seen += p.readAllStandardOutput()).contains("step 1"), 10'000);
    const qint64 workerPid = fake::readAll(pidFile).trimmed().toLongLong();
    QVERIFY(alive(workerPid));
    ::kill(pid_t(p.processId()), SIGINT);
    QTest::qWait(300);
    QCOMPARE(p.state(), QProcess::Running);  // the worker ignores the cancel
    ::kill(pid_t(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(10'000));
    QCOMPARE(p.exitCode(), 130);  // killed on request: cancelled, the last checkpoint stays
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains(QStringLiteral("killing the worker")));
    QTRY_VERIFY(!alive(workerPid));
  }
};

QTEST_GUILESS_MAIN(TestBatch)
#include "test_batch.moc"
