// SPDX-License-Identifier: Apache-2.0
// Event stream reading: torn lines, unknown fields, the resume rule, the run summary and the
// state a run is shown with; the run YAML reader; the tail of a growing events.jsonl.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <cmath>

#include "jobs/events_file_tail.h"
#include "runfolder/event_format.h"
#include "runfolder/log_tail.h"
#include "runfolder/run_checkpoints.h"
#include "config/run_config.h"
#include "runfolder/run_events.h"
#include "runfolder/run_status.h"

using namespace ws;

namespace {

QByteArray line(const char* json) { return QByteArray(json) + '\n'; }

QByteArray stepLine(int step, double loss, const char* expert = "upsampler", double time = 100) {
  return QStringLiteral(
             "{\"type\":\"step\",\"time\":%1,\"step\":%2,\"expert\":\"%3\",\"expert_step\":%2,\"loss\":%4,"
             "\"lr\":0.001,\"grad_norm\":1,\"samples_per_s\":2,\"eta_s\":5}\n")
      .arg(time)
      .arg(step)
      .arg(QLatin1String(expert))
      .arg(loss)
      .toUtf8();
}

QByteArray startedLine(int resumeStep, int maxSteps = 10, const char* job = "upsampler") {
  return QStringLiteral(
             "{\"type\":\"started\",\"time\":90,\"job\":\"%1\",\"config\":{\"learning_rate\":0.001,"
             "\"output_dir\":\"/runs/a\"},\"world_size\":1,\"resume_step\":%2,\"max_train_steps\":%3}\n")
      .arg(QLatin1String(job))
      .arg(resumeStep)
      .arg(maxSteps)
      .toUtf8();
}

QVector<qint64> liveSteps(const RunEvents& ev) {
  QVector<qint64> out;
  for (const auto& p : ev.steps())
    if (!p.dropped) out << p.step;
  return out;
}

}  // namespace

class TestRunEvents : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parseLine() {
    const auto ev =
        parseEventLine("{\"type\":\"step\",\"time\":1.5,\"step\":7,\"loss\":0.25,\"future_field\":{\"x\":1}}");
    QVERIFY(ev);
    QCOMPARE(ev->type, QStringLiteral("step"));
    QCOMPARE(ev->time, 1.5);
    QCOMPARE(ev->step(), 7);
    QCOMPARE(ev->number(QLatin1StringView("loss"), 0), 0.25);
    QCOMPARE(ev->number(QLatin1StringView("missing"), -1), -1.0);
  }

  void parseRejectsWhatIsNotAnEvent() {
    const char* bad[] = {"",
                         "   ",
                         "{\"type\":\"step\",\"ste" /* torn */,
                         "[1,2]",
                         "{\"time\":1}" /* no type */,
                         "{\"type\":3}",
                         "Loading weights..."};
    for (const char* b : bad) QVERIFY2(!parseEventLine(b), b);
  }

  void tornLastLineIsIgnored() {
    RunEvents ev;
    ev.appendData(startedLine(0) + stepLine(1, 0.5) + stepLine(2, 0.4) + "{\"type\":\"step\",\"time\":1,\"st");
    QCOMPARE(ev.steps().size(), 2);
    ev.finishData();  // end of file: the fragment is a torn write, not an error
    QCOMPARE(ev.steps().size(), 2);
    QCOMPARE(ev.skippedLines(), 1);
    QCOMPARE(ev.summary().lastStep, 2);
  }

  void tornLineInTheMiddle() {
    // The worker terminates a torn line before appending after a crash: it becomes a bad line.
    RunEvents ev;
    ev.appendData(startedLine(0) + stepLine(1, 0.5) + "{\"type\":\"step\",\"time\":1,\"st\n" + startedLine(1) +
                  stepLine(2, 0.4));
    ev.finishData();
    QCOMPARE(liveSteps(ev), (QVector<qint64>{1, 2}));
    QCOMPARE(ev.skippedLines(), 1);
  }

  void wholePendingLineIsTakenAtTheEnd() {
    RunEvents ev;
    ev.appendData(startedLine(0) + stepLine(1, 0.5).chopped(1));  // no trailing newline
    QCOMPARE(ev.steps().size(), 0);                               // still being written, maybe
    ev.finishData();
    QCOMPARE(ev.steps().size(), 1);
  }

  void anySplitOfTheBytesGivesTheSameEvents() {
    const QByteArray all = startedLine(0) + stepLine(1, 0.5) + stepLine(2, 0.4) +
                           line("{\"type\":\"finished\",\"time\":2,\"status\":\"completed\",\"step\":2}");
    for (int chunk : {1, 3, 7, 64}) {
      RunEvents ev;
      for (int i = 0; i < all.size(); i += chunk)
        ev.appendData(QByteArrayView(all).sliced(i, std::min<qsizetype>(chunk, all.size() - i)));
      QCOMPARE(ev.steps().size(), 2);
      QCOMPARE(ev.events().size(), 2);
      QVERIFY(ev.summary().finished);
    }
  }

  void unknownFieldsAndTypesAreKept() {
    RunEvents ev;
    ev.appendData(
        startedLine(0) + line("{\"type\":\"new_kind\",\"time\":3,\"payload\":[1,2,3]}") +
        line("{\"type\":\"step\",\"time\":4,\"step\":1,\"expert\":\"upsampler\",\"loss\":0.5,\"brand_new\":true}"));
    QCOMPARE(ev.events().size(), 2);
    QCOMPARE(ev.steps().size(), 1);
    QCOMPARE(ev.logRowCount(), 3);
    QVERIFY(formatEvent(ev.events().at(1)).startsWith(QStringLiteral("new_kind ")));
  }

  void resumeDropsPointsPastTheResumeStep() {
    RunEvents ev;
    QSignalSpy reset(&ev, &RunEvents::pointsReset);
    QByteArray data = startedLine(0);
    for (int s = 1; s <= 7; ++s) data += stepLine(s, 1.0 / s);
    data += line("{\"type\":\"checkpoint\",\"time\":5,\"step\":5,\"path\":\"checkpoint-5\"}");
    data += line("{\"type\":\"eval\",\"time\":5,\"step\":6,\"expert\":\"upsampler\",\"loss\":0.3}");
    ev.appendData(data);
    QCOMPARE(reset.size(), 0);
    QCOMPARE(ev.summary().lastStep, 7);
    // Crash after step 7; resume from checkpoint-5: steps 6 and 7 (and the eval at 6) were lost.
    ev.appendData(startedLine(5) + stepLine(6, 0.11) + stepLine(7, 0.1) + stepLine(8, 0.09));
    QCOMPARE(reset.size(), 1);
    QCOMPARE(liveSteps(ev), (QVector<qint64>{1, 2, 3, 4, 5, 6, 7, 8}));
    int dropped = 0;
    for (const auto& p : ev.steps()) dropped += p.dropped;
    QCOMPARE(dropped, 2);
    for (const auto& p : ev.steps()) {
      if (p.dropped) {
        QCOMPARE(p.segment, 1);
        QVERIFY(p.step > 5);
      }
    }
    for (const RunEvent& e : ev.events()) {
      if (e.type == QLatin1String("eval")) QVERIFY(e.dropped);
      if (e.type == QLatin1String("checkpoint")) QVERIFY(!e.dropped);  // step 5 == resume_step stays
    }
    QCOMPARE(ev.summary().segments, 2);
    QCOMPARE(ev.summary().resumeStep, 5);
    QCOMPARE(ev.summary().lastStep, 8);
    QCOMPARE(ev.summary().lastLoss, 0.09);
  }

  void resumeBeforeAnyNewStepLeavesTheLastValidStep() {
    RunEvents ev;
    QByteArray data = startedLine(0);
    for (int s = 1; s <= 4; ++s) data += stepLine(s, s);
    ev.appendData(data + startedLine(2));
    QCOMPARE(ev.summary().lastStep, 2);
    QCOMPARE(ev.summary().lastLoss, 2.0);
    QVERIFY(!ev.summary().finished);
  }

  void summaryOnlyReaderAgrees() {
    RunEvents full, light;
    light.setKeepHistory(false);
    QByteArray data = startedLine(0, 4, "experts") + stepLine(1, 0.5, "high") + stepLine(2, 0.4, "low") +
                      line("{\"type\":\"finished\",\"time\":2,\"status\":\"completed\",\"step\":2}");
    full.appendData(data);
    light.appendData(data);
    QCOMPARE(light.steps().size(), 0);
    QCOMPARE(light.logRowCount(), 0);
    QCOMPARE(light.summary().lastStep, full.summary().lastStep);
    QCOMPARE(light.summary().job, QStringLiteral("experts"));
    QCOMPARE(light.summary().finishedStatus, QStringLiteral("completed"));
  }

  void summaryOnlyReaderHandlesResumeAndTornSteps() {
    RunEvents light;
    light.setKeepHistory(false);
    QByteArray data = startedLine(0);
    for (int s = 1; s <= 7; ++s) data += stepLine(s, 1.0 / s);
    light.appendData(data + startedLine(5) + stepLine(6, 0.3));
    QCOMPARE(light.summary().lastStep, 6);
    QCOMPARE(light.summary().lastLoss, 0.3);
    QCOMPARE(light.summary().segments, 2);
    light.appendData(stepLine(7, 0.2) + "{\"type\":\"step\",\"time\":3,\"step\":8,\"lo\n");
    QCOMPARE(light.summary().lastStep, 7);  // the torn step 8 does not count
    QCOMPARE(light.summary().lastLoss, 0.2);
    QCOMPARE(light.skippedLines(), 1);
    // Writers that put spaces after the colons (Python's json.dumps) read the same.
    light.appendData("{\"type\": \"step\", \"time\": 4, \"step\": 9, \"expert\": \"upsampler\", \"loss\": 0.1}\n");
    QCOMPARE(light.summary().lastStep, 9);
  }

  void heartbeatsStayOutOfTheLog() {
    RunEvents ev;
    ev.appendData(startedLine(0) + line("{\"type\":\"heartbeat\",\"time\":95,\"rss_bytes\":2000000000}"));
    QCOMPARE(ev.logRowCount(), 1);
    QVERIFY(ev.lastHeartbeat().isValid());
    QCOMPARE(ev.summary().lastTime, 95.0);
  }

  void statusRules() {
    RunEvents ev;
    const double now = 1000;
    auto status = [&](bool live = false, std::optional<RunStatus> outcome = std::nullopt) {
      return deriveRunStatus(ev.summary(), live, outcome, now, 30);
    };
    QCOMPARE(status().state, RunState::NotStarted);
    ev.appendData(QByteArray(
        "{\"type\":\"started\",\"time\":990,\"job\":\"upsampler\",\"resume_step\":0,\"max_train_steps\":5}\n"));
    QCOMPARE(status(true).state, RunState::Running);
    // Fresh events, no worker of ours: someone else runs it.
    QCOMPARE(status().state, RunState::Running);
    QVERIFY(status().elsewhere);
    QCOMPARE(status().label(), QStringLiteral("running (elsewhere)"));
    // Our supervisor saw it die: its reason wins over guessing.
    const RunStatus oom{RunState::Failed, QStringLiteral("worker killed by signal 9 (SIGKILL)"), false};
    QCOMPARE(status(false, oom), oom);
    // Quiet for long and no finished: nobody runs it.
    const RunStatus later = deriveRunStatus(ev.summary(), false, std::nullopt, 990 + 31, 30);
    QCOMPARE(later.state, RunState::Interrupted);
    QCOMPARE(later.label(), QStringLiteral("interrupted: worker gone (no finished event)"));
    ev.appendData(QByteArray("{\"type\":\"finished\",\"time\":995,\"status\":\"cancelled\",\"step\":3}\n"));
    QCOMPARE(status().state, RunState::Cancelled);
    QCOMPARE(status(false, oom).state, RunState::Cancelled);  // `finished` is the truth
  }

  void configErrorBeforeStart() {
    RunEvents ev;
    ev.appendData(
        line("{\"type\":\"error\",\"time\":1,\"message\":\"run.yaml: train_data_meta: /x/meta.json: no such file\"}") +
        line("{\"type\":\"error\",\"time\":1,\"message\":\"run.yaml: vae: /x/vae.pth: no such file\"}") +
        line("{\"type\":\"finished\",\"time\":1,\"status\":\"failed\",\"step\":0}"));
    const RunStatus s = deriveRunStatus(ev.summary(), false, std::nullopt, 1e9, 30);
    QCOMPARE(s.state, RunState::Failed);
    QVERIFY(s.reason.contains(QStringLiteral("meta.json: no such file")));
    QVERIFY(s.reason.contains(QStringLiteral("vae.pth: no such file")));
    QVERIFY(!ev.summary().attemptStarted);
  }

  void failedRestartAfterACompletedRun() {
    RunEvents ev;
    ev.appendData(startedLine(0) + stepLine(1, 0.5) +
                  line("{\"type\":\"finished\",\"time\":2,\"status\":\"completed\",\"step\":1}") +
                  line("{\"type\":\"error\",\"time\":3,\"message\":\"bad learning_rate\"}") +
                  line("{\"type\":\"finished\",\"time\":3,\"status\":\"failed\",\"step\":0}"));
    const RunStatus s = deriveRunStatus(ev.summary(), false, std::nullopt, 1e9, 30);
    QCOMPARE(s.state, RunState::Failed);
    QCOMPARE(s.reason, QStringLiteral("bad learning_rate"));
  }

  void eventLevels() {
    auto level = [](const char* json) { return eventLevel(*parseEventLine(json)); };
    const char* warning = "{\"type\":\"log\",\"time\":1,\"level\":\"warning\",\"message\":\"x\"}";
    const char* debug = "{\"type\":\"log\",\"time\":1,\"level\":\"debug\",\"message\":\"x\"}";
    const char* error = "{\"type\":\"error\",\"time\":1,\"message\":\"x\"}";
    const char* failed = "{\"type\":\"finished\",\"time\":1,\"status\":\"failed\",\"step\":0}";
    const char* step = "{\"type\":\"step\",\"time\":1,\"step\":1}";
    QCOMPARE(level(warning), LogLevel::Warning);
    QCOMPARE(level(debug), LogLevel::Debug);
    QCOMPARE(level(error), LogLevel::Error);
    QCOMPARE(level(failed), LogLevel::Error);
    QCOMPARE(level(step), LogLevel::Step);
    const QString s = formatEvent(*parseEventLine(stepLine(3, 0.125, "high")), 10);
    QVERIFY2(s.startsWith(QStringLiteral("step 3/10 [high]  loss 0.125")), qPrintable(s));
    const QString best =
        formatEvent(*parseEventLine("{\"type\":\"best\",\"time\":1,\"step\":30,\"path\":\"checkpoint-30\",\"metric\":"
                                    "\"val_psnr\",\"value\":20.1256}"));
    QCOMPARE(best, QStringLiteral("best so far: checkpoint-30 (val_psnr 20.13)"));
  }

  // A FIFO planted as events.jsonl (or a log) is refused at once: opening it for reading would
  // block the GUI thread until somebody writes to it.
  void specialFilesAreRefusedWithoutBlocking() {
    QTemporaryDir dir;
    const QString fifo = dir.filePath(QStringLiteral("events.jsonl"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    RunEvents events;
    QString error;
    QVERIFY(!events.loadFile(fifo, &error));
    QVERIFY2(error.contains(QStringLiteral("not a regular file")), qPrintable(error));
    QVERIFY(lastLines(fifo, 10).isEmpty());
    QVERIFY(!events.loadFile(dir.path(), &error));  // a folder
    QVERIFY2(error.contains(QStringLiteral("not a regular file")), qPrintable(error));
  }

  void loadFileAndMissingFile() {
    QTemporaryDir dir;
    QFile f(dir.filePath(QStringLiteral("events.jsonl")));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(startedLine(0) + stepLine(1, 0.5));
    f.close();
    RunEvents ev;
    QVERIFY(ev.loadFile(f.fileName()));
    QCOMPARE(ev.steps().size(), 1);
    QString error;
    QVERIFY(!ev.loadFile(dir.filePath(QStringLiteral("nope.jsonl")), &error));
    QVERIFY(error.contains(QStringLiteral("nope.jsonl")));
  }

  void peakMemoryFromHeartbeats() {
    RunEvents ev;
    ev.appendData(startedLine(0) + line("{\"type\":\"heartbeat\",\"time\":91,\"rss_bytes\":2000}") +
                  line("{\"type\":\"heartbeat\",\"time\":92,\"rss_bytes\":5000,\"gpu_mem_bytes\":7000}") +
                  line("{\"type\":\"heartbeat\",\"time\":93,\"rss_bytes\":3000}"));
    QCOMPARE(ev.summary().peakRssBytes, 5000.0);
    QCOMPARE(ev.summary().peakGpuMemBytes, 7000.0);
    QCOMPARE(ev.lastHeartbeat().number(QLatin1StringView("rss_bytes"), 0), 3000.0);
    QCOMPARE(ev.logRowCount(), 1);  // heartbeats stay out of the log
  }

  void checkpointsAreCheckpointDashDigitsDirectories() {
    QTemporaryDir dir;
    QDir d(dir.path());
    for (const char* name : {"checkpoint-500", "checkpoint-20", "checkpoint-1000", ".checkpoint-1500.tmp",
                             ".checkpoint-20.old", "checkpoint-final", "checkpoint-", "checkpoint-12a", "logs"})
      QVERIFY(d.mkdir(QLatin1String(name)));
    QFile f(d.filePath(QStringLiteral("checkpoint-3000")));  // a file, not a directory
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    QCOMPARE(checkpointSteps(dir.path()), (QList<qint64>{20, 500, 1000}));
    QCOMPARE(latestCheckpointStep(dir.path()), 1000);
    QCOMPARE(latestCheckpointStep(dir.filePath(QStringLiteral("logs"))), -1);
    QCOMPARE(latestCheckpointStep(dir.filePath(QStringLiteral("missing"))), -1);
  }

  void lastLinesOfALog() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("engine.log"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    for (int i = 1; i <= 5000; ++i) f.write(QStringLiteral("line %1\r\n").arg(i).toUtf8());
    f.write("\n\n");
    f.close();
    QCOMPARE(lastLines(path, 3),
             (QStringList{QStringLiteral("line 4998"), QStringLiteral("line 4999"), QStringLiteral("line 5000")}));
    // Read from the end: a cut first line is not returned.
    const QStringList many = lastLines(path, 100'000, 100);
    QVERIFY(!many.isEmpty());
    for (const QString& l : many) QVERIFY2(l.startsWith(QStringLiteral("line ")) && l.size() >= 9, qPrintable(l));
    QVERIFY(lastLines(dir.filePath(QStringLiteral("none.log")), 3).isEmpty());
  }

  void tailFollowsAGrowingFile() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("events.jsonl"));
    EventsFileTail tail;
    tail.setPollInterval(50);
    RunEvents ev;
    connect(&tail, &EventsFileTail::dataAppended, &ev, [&ev](const QByteArray& b) { ev.appendData(b); });
    connect(&tail, &EventsFileTail::reset, &ev, &RunEvents::clear);
    tail.setFile(path);  // does not exist yet
    QCOMPARE(ev.summary().eventCount, 0);
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Append));
    f.write(startedLine(0) + stepLine(1, 0.5));
    f.flush();
    QTRY_COMPARE_WITH_TIMEOUT(ev.steps().size(), 1, 5000);
    f.write(stepLine(2, 0.4).left(20));  // a line half written
    f.flush();
    QTest::qWait(200);
    QCOMPARE(ev.steps().size(), 1);
    f.write(stepLine(2, 0.4).mid(20) + stepLine(3, 0.3));
    f.flush();
    QTRY_COMPARE_WITH_TIMEOUT(ev.steps().size(), 3, 5000);
    f.close();
    // Rewritten from scratch (a new run in the same folder): start over.
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(startedLine(0));
    f.close();
    QTRY_COMPARE_WITH_TIMEOUT(ev.steps().size(), 0, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(ev.summary().segments, 1, 5000);
  }

  void runConfigYaml() {
    QTemporaryDir dir;
    const QString yaml = dir.filePath(QStringLiteral("run.yaml"));
    QFile f(yaml);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        "# a run\njob: experts\noutput_dir: out/run1\nlearning_rate: 2e-5\nvalidation_paths:\n  - a.mp4\n  - b.mp4\n");
    f.close();
    QString error;
    const auto cfg = RunConfig::load(yaml, &error);
    QVERIFY2(cfg, qPrintable(error));
    QCOMPARE(cfg->job, QStringLiteral("experts"));
    QCOMPARE(cfg->outputDir, dir.filePath(QStringLiteral("out/run1")));
    QCOMPARE(cfg->options.size(), 4);
    QCOMPARE(cfg->options.at(3).second, QStringLiteral("[a.mp4, b.mp4]"));
    QCOMPARE(RunConfig::verbForJob(QStringLiteral("experts")), QStringLiteral("train-experts"));
    QCOMPARE(RunConfig::verbForJob(QStringLiteral("upsampler")), QStringLiteral("train-upsampler"));
    QCOMPARE(RunConfig::verbForJob(QStringLiteral("vae")), QStringLiteral("train-vae"));
    QCOMPARE(RunConfig::verbForJob(QStringLiteral("nope")), QString());

    QVERIFY(!RunConfig::load(dir.filePath(QStringLiteral("missing.yaml")), &error));
    QVERIFY(error.endsWith(QStringLiteral("missing.yaml: no such file")));
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write("job: upsampler\nlist: [1, 2\n");
    f.close();
    QVERIFY(!RunConfig::load(yaml, &error));
    QVERIFY2(error.startsWith(yaml + QLatin1Char(':')) && !error.contains(QLatin1Char('\n')), qPrintable(error));
  }
};

QTEST_GUILESS_MAIN(TestRunEvents)
#include "test_run_events.moc"
