// SPDX-License-Identifier: Apache-2.0
// The run directory contract: checkpoint naming, the commit protocol (including a re-save at
// the same step and failures part-way), crash leftovers recovered at start, pruning, run.yaml
// replaced atomically, events.jsonl appended across starts with a torn line repaired, logging.
#include <QtTest/QtTest>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "runtime/events.h"
#include "runtime/logging.h"
#include "runtime/run_dir.h"
#include "test_paths.h"
#include "test_util.h"

using namespace ws::runtime;
namespace stdfs = std::filesystem;
using json = nlohmann::json;

using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

// A fake checkpoint: one weights file whose content says which save it came from.
void fill(const std::string& dir, const std::string& tag) {
  write_bytes(dir + "/latent_upsampler/diffusion_pytorch_model.safetensors", tag);
  write_bytes(dir + "/trainer_state/state.json", "{\"tag\":\"" + tag + "\"}");
}
std::string tag_of(const std::string& dir) {
  return read_bytes(dir + "/latent_upsampler/diffusion_pytorch_model.safetensors");
}

std::vector<int64_t> steps(const std::vector<Checkpoint>& cs) {
  std::vector<int64_t> out;
  for (const auto& c : cs) out.push_back(c.step);
  return out;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : stdfs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(read_bytes(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

class TestRunDir : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    EventStream::global().set_stdout(false);  // keep the test's stdout readable
  }

  void checkpointNames() {
    int64_t step = -1;
    QVERIFY(parse_checkpoint_name("checkpoint-500", &step));
    QCOMPARE(step, int64_t(500));
    QVERIFY(parse_checkpoint_name("checkpoint-0", &step));
    QCOMPARE(step, int64_t(0));
    for (const char* bad : {"checkpoint-", "checkpoint-12abc", "checkpoint-1.5", "checkpoint--1", "xcheckpoint-1",
                            "Checkpoint-1", "checkpoint-12 ", "checkpoint-+3", ".checkpoint-3.tmp", "checkpoint-3.old",
                            "checkpoint-99999999999999999999", "checkpoint_3"})
      QVERIFY2(!parse_checkpoint_name(bad), bad);
    QCOMPARE(checkpoint_name(500), std::string("checkpoint-500"));
  }

  void listOnlyRealCheckpoints() {
    QTemporaryDir tmp;
    std::string d = tmp.path().toStdString();
    for (const char* n : {"checkpoint-10", "checkpoint-2", "checkpoint-100", "checkpoint-12abc", "checkpoint-",
                          ".checkpoint-300.tmp", "checkpoint-3.old", "sample", "logs"})
      stdfs::create_directories(d + "/" + n);
    write_bytes(d + "/checkpoint-7", "a file, not a folder");
    auto cs = list_checkpoints(d);
    QCOMPARE(steps(cs), (std::vector<int64_t>{2, 10, 100}));  // numeric order, not by name
    QCOMPARE(cs.back().name, std::string("checkpoint-100"));
    QCOMPARE(cs.back().path, ws::fs::absolute(d + "/checkpoint-100"));
    QCOMPARE(latest_checkpoint(d)->step, int64_t(100));
    QVERIFY(list_checkpoints(d + "/missing").empty());
    QVERIFY(!latest_checkpoint(d + "/missing"));
  }

  void createsFoldersAndCommits() {
    QTemporaryDir tmp;
    std::string d = tmp.filePath("runs/a").toStdString();  // parents are created too
    RunDir run(d);
    QVERIFY(stdfs::is_directory(d + "/logs"));
    QCOMPARE(run.path(), ws::fs::absolute(d));
    QVERIFY(!run.latest());

    CheckpointWriter w = run.begin_checkpoint(50);
    QCOMPARE(w.dir(), run.file(".checkpoint-50.tmp"));
    QVERIFY(stdfs::is_directory(w.dir()));
    fill(w.dir(), "first");
    QVERIFY(run.checkpoints().empty());  // invisible while being written
    QVERIFY(!run.has_checkpoint(50));
    Checkpoint c = run.commit_checkpoint(w);
    QCOMPARE(c.step, int64_t(50));
    QCOMPARE(c.name, std::string("checkpoint-50"));
    QCOMPARE(tag_of(run.file("checkpoint-50")), std::string("first"));
    QVERIFY(!stdfs::exists(run.file(".checkpoint-50.tmp")));
    QVERIFY(run.has_checkpoint(50));
    QCOMPARE(run.latest()->step, int64_t(50));
    QVERIFY_THROWS_EXCEPTION(ws::Error, run.commit_checkpoint(w));  // once only
  }

  void resaveAtSameStep() {
    QTemporaryDir tmp;
    RunDir run(tmp.path().toStdString());
    {
      auto w = run.begin_checkpoint(100);
      fill(w.dir(), "periodic");
      run.commit_checkpoint(w);
    }
    auto w = run.begin_checkpoint(100);
    fill(w.dir(), "final");
    // The complete earlier save stays in place until the new one is complete.
    QCOMPARE(tag_of(run.file("checkpoint-100")), std::string("periodic"));
    run.commit_checkpoint(w, 3);
    QCOMPARE(tag_of(run.file("checkpoint-100")), std::string("final"));
    QCOMPARE(steps(run.checkpoints()), (std::vector<int64_t>{100}));
    for (const auto& n : names_in(run.path())) QVERIFY2(n.rfind(".checkpoint", 0) != 0, n.c_str());
  }

  void abandonedWriterLeavesNothing() {
    QTemporaryDir tmp;
    RunDir run(tmp.path().toStdString());
    try {
      auto w = run.begin_checkpoint(7);
      fill(w.dir(), "half");
      throw std::runtime_error("disk full while saving");
    } catch (const std::runtime_error&) {
    }
    QVERIFY(!stdfs::exists(run.file(".checkpoint-7.tmp")));
    QVERIFY(run.checkpoints().empty());
  }

  void failedCommitKeepsEverything() {
    QTemporaryDir tmp;
    RunDir run(tmp.path().toStdString());
    for (int64_t s : {10, 20}) {
      auto w = run.begin_checkpoint(s);
      fill(w.dir(), "ok" + std::to_string(s));
      run.commit_checkpoint(w, 2);
    }
    // The temporary folder vanishes before the swap (a failing disk): the commit fails, the
    // existing checkpoint at that step stays and nothing is pruned.
    auto w = run.begin_checkpoint(20);
    fill(w.dir(), "broken");
    stdfs::remove_all(w.dir());
    QVERIFY_THROWS_EXCEPTION(ws::Error, run.commit_checkpoint(w, 1));
    QCOMPARE(steps(run.checkpoints()), (std::vector<int64_t>{10, 20}));
    QCOMPARE(tag_of(run.file("checkpoint-20")), std::string("ok20"));
    QVERIFY(!stdfs::exists(run.file(".checkpoint-20.old")));
  }

  void pruneOldestFirst() {
    QTemporaryDir tmp;
    RunDir run(tmp.path().toStdString());
    for (int64_t s = 1; s <= 5; ++s) {
      size_t before = run.checkpoints().size();
      auto w = run.begin_checkpoint(s * 100);
      fill(w.dir(), std::to_string(s));
      run.commit_checkpoint(w, 3);
      auto now = run.checkpoints();
      QCOMPARE(now.size(), std::min<size_t>(before + 1, 3));
      QVERIFY(now.size() >= before);  // never fewer complete checkpoints than before the save
      QCOMPARE(now.back().step, s * 100);
    }
    QCOMPARE(steps(run.checkpoints()), (std::vector<int64_t>{300, 400, 500}));
    // No limit: nothing is removed.
    auto w = run.begin_checkpoint(600);
    fill(w.dir(), "6");
    run.commit_checkpoint(w);
    QCOMPARE(run.checkpoints().size(), size_t(4));
    // A save at a lower step (a run resumed from an earlier checkpoint) is never the one pruned,
    // and a limit below 1 keeps the new checkpoint.
    auto low = run.begin_checkpoint(350);
    fill(low.dir(), "low");
    run.commit_checkpoint(low, 0);
    QCOMPARE(steps(run.checkpoints()), (std::vector<int64_t>{350}));
    // A kept checkpoint (Save Now) is never pruned and not counted: with a limit of 2, the two
    // newest others stay beside it.
    QVERIFY(run.keep_checkpoint(350, "saved on request"));
    QVERIFY(!run.keep_checkpoint(351, "no such checkpoint"));
    for (int64_t s = 7; s <= 9; ++s) {
      auto k = run.begin_checkpoint(s * 100);
      fill(k.dir(), std::to_string(s));
      run.commit_checkpoint(k, 2);
    }
    QCOMPARE(steps(run.checkpoints()), (std::vector<int64_t>{350, 800, 900}));
    QVERIFY(run.is_kept("checkpoint-350"));
    // Folders that are not checkpoints are never pruned.
    QVERIFY(stdfs::is_directory(run.logs_dir()));
  }

  void recoversCrashLeftovers() {
    QTemporaryDir tmp;
    std::string d = tmp.path().toStdString();
    fill(d + "/checkpoint-4", "four");
    fill(d + "/.checkpoint-7.tmp", "partial");       // crash while writing step 7
    fill(d + "/.checkpoint-5.old", "five");          // crash between the two renames
    fill(d + "/.checkpoint-6.old", "six-old");       // crash after the swap,
    fill(d + "/checkpoint-6", "six-new");            //   before deleting .old
    fill(d + "/.checkpoint-2.tmp", "being-pruned");  // crash while pruning
    fill(d + "/checkpoint-12abc", "not-a-checkpoint");
    fill(d + "/.checkpoint-x.old", "unknown");
    write_bytes(d + "/notes.txt", "mine");
    RunDir run(d);
    QCOMPARE(steps(run.checkpoints()), (std::vector<int64_t>{4, 5, 6}));
    QCOMPARE(tag_of(d + "/checkpoint-5"), std::string("five"));
    QCOMPARE(tag_of(d + "/checkpoint-6"), std::string("six-new"));
    QCOMPARE(tag_of(d + "/checkpoint-4"), std::string("four"));
    QVERIFY(!stdfs::exists(d + "/.checkpoint-7.tmp"));
    QVERIFY(!stdfs::exists(d + "/.checkpoint-2.tmp"));
    QVERIFY(!stdfs::exists(d + "/.checkpoint-5.old"));
    QVERIFY(!stdfs::exists(d + "/.checkpoint-6.old"));
    // Anything else is left alone.
    QCOMPARE(tag_of(d + "/checkpoint-12abc"), std::string("not-a-checkpoint"));
    QVERIFY(stdfs::exists(d + "/.checkpoint-x.old"));
    QCOMPARE(read_bytes(d + "/notes.txt"), std::string("mine"));
    QCOMPARE(run.recovery().restored, (std::vector<std::string>{".checkpoint-5.old"}));
    QCOMPARE(run.recovery().removed.size(), size_t(3));
  }

  void runYamlReplacedAtomically() {
    QTemporaryDir tmp;
    RunDir run(tmp.path().toStdString());
    std::string path = run.file("run.yaml");
    run.write_run_yaml("job: upsampler\nseed: 1\n");
    QCOMPARE(read_bytes(path), std::string("job: upsampler\nseed: 1\n"));
    // Replaced by rename, never rewritten in place: a reader holding the old file (here a
    // hard link) still sees it whole.
    QCOMPARE(::link(path.c_str(), run.file("held.yaml").c_str()), 0);
    run.write_run_yaml("job: upsampler\nseed: 2\n");
    QCOMPARE(read_bytes(path), std::string("job: upsampler\nseed: 2\n"));
    QCOMPARE(read_bytes(run.file("held.yaml")), std::string("job: upsampler\nseed: 1\n"));
    for (const auto& n : names_in(run.path())) QVERIFY2(n.find(".tmp") == std::string::npos, n.c_str());
  }

  void eventsAppendAcrossStarts() {
    QTemporaryDir tmp;
    std::string d = tmp.path().toStdString();
    auto& ev = EventStream::global();
    {
      RunDir run(d);
      run.open_events();
      ev.emit("started", {{"resume_step", 0}});
      ev.emit("step", {{"step", 1}, {"loss", 0.5}});
    }
    ev.emit("step", {{"step", 99}});  // after the run dir is gone: not in its file
    std::string path = d + "/events.jsonl";
    QCOMPARE(lines_of(path).size(), size_t(2));
    // A crash mid-write leaves a torn last line.
    { std::ofstream(path, std::ios::app) << "{\"type\":\"step\",\"time\":1.5,\"st"; }
    {
      RunDir run(d);
      run.open_events();
      ev.emit("started", {{"resume_step", 1}});
    }
    auto lines = lines_of(path);
    QCOMPARE(lines.size(), size_t(3));
    for (const auto& l : lines) QVERIFY2(json::accept(l), l.c_str());
    QCOMPARE(json::parse(lines[0])["type"], json("started"));
    QCOMPARE(json::parse(lines[1])["step"], json(1));
    QCOMPARE(json::parse(lines[2])["resume_step"], json(1));

    // A complete last event that only lost its newline is kept.
    { std::ofstream(path, std::ios::app) << "{\"type\":\"heartbeat\",\"time\":2.0}"; }
    {
      RunDir run(d);
      run.open_events();
      ev.emit("finished", {{"status", "completed"}, {"step", 1}});
    }
    lines = lines_of(path);
    QCOMPARE(lines.size(), size_t(5));
    QCOMPARE(json::parse(lines[3])["type"], json("heartbeat"));
    QCOMPARE(json::parse(lines[4])["type"], json("finished"));
  }

  void checkpointEventAfterCommit() {
    QTemporaryDir tmp;
    RunDir run(tmp.path().toStdString());
    run.open_events();
    auto w = run.begin_checkpoint(500);
    fill(w.dir(), "x");
    run.commit_checkpoint(w);
    auto lines = lines_of(run.file("events.jsonl"));
    QCOMPARE(lines.size(), size_t(1));
    auto e = json::parse(lines[0]);
    QCOMPARE(e["type"], json("checkpoint"));
    QCOMPARE(e["step"], json(500));
    QCOMPARE(e["path"], json("checkpoint-500"));
  }

  void oneWorkerPerFolder() {
    QTemporaryDir tmp;
    std::string d = tmp.path().toStdString();
    auto* first = new RunDir(d);
    try {
      RunDir second(d);
      QFAIL("a second worker took the same run folder");
    } catch (const ws::Error& e) {
      QVERIFY2(std::string(e.what()).find("another worker") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find(std::to_string(::getpid())) != std::string::npos, e.what());
    }
    delete first;
    RunDir again(d);  // free once the first is gone
  }

  void unusableFolderIsAnError() {
    QTemporaryDir tmp;
    std::string file = tmp.filePath("file").toStdString();
    write_bytes(file, "x");
    try {
      RunDir run(file + "/run");
      QFAIL("no error");
    } catch (const ws::Error& e) {
      QVERIFY2(std::string(e.what()).find(file) != std::string::npos, e.what());
    }
  }

  void logsToFileAndEvents() {
    QTemporaryDir tmp;
    {
      RunDir run(tmp.path().toStdString());
      run.open_events();
      run.setup_logging();
      ws::log::info("hello from the test");
      ws::log::warn("bf16 falls back to fp32");
    }
    ws::runtime::setup_logging();  // back to stderr only: the run's file is closed
    std::string log = read_bytes(tmp.filePath("logs/engine.log").toStdString());
    QVERIFY2(log.find("hello from the test") != std::string::npos, log.c_str());
    QVERIFY(log.find("bf16 falls back to fp32") != std::string::npos);
    auto lines = lines_of(tmp.filePath("events.jsonl").toStdString());
    QCOMPARE(lines.size(), size_t(1));  // the warning only, not the info line
    auto e = json::parse(lines[0]);
    QCOMPARE(e["type"], json("log"));
    QCOMPARE(e["level"], json("warning"));
    QCOMPARE(e["message"], json("bf16 falls back to fp32"));
  }
};

QTEST_APPLESS_MAIN(TestRunDir)
#include "test_run_dir.moc"
