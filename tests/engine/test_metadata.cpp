// SPDX-License-Identifier: Apache-2.0
// metadata.json: reading VideoX-Fun rows (defaults, path resolution, per-row field problems),
// writing back atomically with a backup and without losing unknown keys, checking rows against
// their files, and the deterministic synthetic generator behind demo-data.
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/metadata.h"
#include "dataset/row_check.h"
#include "data/synthetic.h"
#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_encode.h"
#endif
#include "test_paths.h"
#include "test_util.h"

using namespace ws;
namespace stdfs = std::filesystem;

using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

bool has_problem(const std::vector<std::string>& problems, const std::string& needle) {
  for (const auto& p : problems)
    if (p.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestMetadata : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir() const { return tmp_.path().toStdString(); }

 private Q_SLOTS:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void readRowsAndResolve() {
    std::string meta = dir() + "/ds/metadata.json";
    write_bytes(meta, R"([
      {"file_path": "videos/a.mp4", "text": "a cat", "type": "video", "width": 640, "height": 360},
      {"file_path": "/abs/b.mp4", "text": "b"},
      {"file_path": "images/c.png", "type": "image", "width": 512.0, "height": 512, "extra": [1, 2]}
    ])");
    dataset::Metadata m = dataset::read_metadata(meta);
    QCOMPARE(m.rows.size(), size_t(3));
    QCOMPARE(m.rows[0].width.value(), int64_t(640));
    QCOMPARE(m.rows[1].type, std::string("video"));  // missing type means video
    QVERIFY(!m.rows[1].width.has_value());
    QVERIFY(m.rows[2].is_image());
    QCOMPARE(m.rows[2].width.value(), int64_t(512));
    for (const auto& r : m.rows) QVERIFY2(r.problems.empty(), r.problems.empty() ? "" : r.problems[0].c_str());
    // Relative to the metadata.json's folder, or to train_data_dir; absolute as is.
    QCOMPARE(m.resolve(m.rows[0]), fs::join(dir() + "/ds", "videos/a.mp4"));
    QCOMPARE(m.resolve(m.rows[1]), std::string("/abs/b.mp4"));
    dataset::Metadata m2 = dataset::read_metadata(meta, "/data/root");
    QCOMPARE(m2.resolve(m2.rows[0]), std::string("/data/root/videos/a.mp4"));
    QCOMPARE(m2.resolve(m2.rows[1]), std::string("/abs/b.mp4"));
  }

  void fieldProblems() {
    std::string meta = dir() + "/bad/metadata.json";
    write_bytes(meta, R"([
      {"file_path": 3, "text": "x"},
      {"text": "no path"},
      {"file_path": "a.mp4", "type": "movie"},
      {"file_path": "a.mp4", "width": "640", "height": 360},
      {"file_path": "a.mp4", "width": -5, "height": 1.5},
      {"file_path": "a.mp4", "width": 640},
      {"file_path": "a.mp4", "text": ["not", "text"]},
      "just a string"
    ])");
    dataset::Metadata m = dataset::read_metadata(meta);
    QCOMPARE(m.rows.size(), size_t(8));  // no row is dropped
    QVERIFY(has_problem(m.rows[0].problems, "`file_path` must be a string"));
    QVERIFY(has_problem(m.rows[1].problems, "`file_path` is missing"));
    QVERIFY(has_problem(m.rows[2].problems, "`type` must be \"video\" or \"image\""));
    QVERIFY(has_problem(m.rows[3].problems, "`width` must be a positive whole number"));
    QVERIFY(has_problem(m.rows[4].problems, "`width`"));
    QVERIFY(has_problem(m.rows[4].problems, "`height`"));
    QVERIFY(has_problem(m.rows[5].problems, "`width` without `height`"));
    QVERIFY(has_problem(m.rows[6].problems, "`text` must be a string"));
    QVERIFY(has_problem(m.rows[7].problems, "expected an object"));
  }

  void wholeFileErrors() {
    auto expect = [&](const std::string& path, const std::string& needle) {
      try {
        dataset::read_metadata(path);
      } catch (const Error& e) {
        std::string msg = e.what();
        QVERIFY2(msg.find(path) != std::string::npos && msg.find(needle) != std::string::npos, msg.c_str());
        QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
        return;
      }
      QFAIL(("no error for " + path).c_str());
    };
    expect(dir() + "/nope.json", "no such file");
    write_bytes(dir() + "/broken.json", "[{\"file_path\": \"a.mp4\",]");
    expect(dir() + "/broken.json", "not valid JSON");
    write_bytes(dir() + "/object.json", "{\"file_path\": \"a.mp4\"}");
    expect(dir() + "/object.json", "expected a JSON list");
  }

  void writeWithBackup() {
    std::string meta = dir() + "/w/metadata.json";
    write_bytes(meta, R"([{"text": "keep order", "file_path": "a.mp4", "zeta": 1, "alpha": {"x": 2}}])");
    std::string before = read_bytes(meta);
    dataset::Metadata m = dataset::read_metadata(meta);
    m.rows[0].width = 320;
    m.rows[0].height = 240;
    m.rows.push_back(dataset::make_row("b.png", "a still", "image", 64, 32));
    dataset::write_metadata(meta, m.rows);
    QCOMPARE(read_bytes(meta + ".bak"), before);  // the previous version is kept
    auto doc = nlohmann::ordered_json::parse(read_bytes(meta));
    QCOMPARE(doc.size(), size_t(2));
    // Unknown keys survive, in their original order; new keys are appended.
    std::vector<std::string> keys;
    for (auto it = doc[0].begin(); it != doc[0].end(); ++it) keys.push_back(it.key());
    QCOMPARE(keys, (std::vector<std::string>{"text", "file_path", "zeta", "alpha", "type", "width", "height"}));
    QCOMPARE(doc[0]["alpha"]["x"].get<int>(), 2);
    QCOMPARE(doc[0]["width"].get<int>(), 320);
    QCOMPARE(doc[1]["type"].get<std::string>(), std::string("image"));
    // No temporary left behind; reading it back gives the same rows.
    for (const auto& e : stdfs::directory_iterator(dir() + "/w"))
      QVERIFY2(e.path().string().find(".tmp") == std::string::npos, e.path().c_str());
    dataset::Metadata back = dataset::read_metadata(meta);
    QCOMPARE(back.rows[0].height.value(), int64_t(240));
    QCOMPARE(back.rows[1].file_path, std::string("b.png"));
  }

  void checkRowsAgainstFiles() {
#ifndef WANSTUDIO_HAVE_VIDEO
    QVERIFY_THROWS_EXCEPTION(
        Error, dataset::check_rows(dataset::parse_metadata("[{\"file_path\": \"a.mp4\"}]", dir() + "/m.json")));
    QSKIP("built without video support");
#else
    std::string ds = dir() + "/check";
    stdfs::create_directories(ds);
    video::EncodeOptions o;
    o.preset = "veryfast";
    video::write_video(ds + "/clip.mp4", data::make_synthetic_clip({64, 48, 9, 1}), o);
    o.rotation = 90;
    video::write_video(ds + "/portrait.mp4", data::make_synthetic_clip({64, 48, 5, 2}), o);
    video::write_png(ds + "/img.png", data::make_synthetic_clip({30, 20, 1, 3}).front());
    write_bytes(ds + "/empty.mp4", "");
    write_bytes(ds + "/metadata.json", R"([
      {"file_path": "clip.mp4", "text": "ok", "width": 64, "height": 48},
      {"file_path": "clip.mp4", "text": "wrong size", "width": 48, "height": 64},
      {"file_path": "portrait.mp4", "text": "rotated: displayed size", "width": 48, "height": 64},
      {"file_path": "img.png", "type": "image", "text": "an image row"},
      {"file_path": "missing.mp4", "text": "missing"},
      {"file_path": "empty.mp4", "text": "zero bytes"}
    ])");
    dataset::Metadata m = dataset::read_metadata(ds + "/metadata.json");
    auto reps = dataset::check_rows(m);
    QCOMPARE(reps.size(), size_t(6));
    QVERIFY(reps[0].problems.empty());
    QCOMPARE(reps[0].frames, int64_t(9));
    QVERIFY(has_problem(reps[1].problems, "metadata says 48x64, the file is 64x48"));
    QVERIFY2(reps[2].problems.empty(), reps[2].problems.empty() ? "" : reps[2].problems[0].c_str());
    QCOMPARE(reps[2].rotation, 90);
    QCOMPARE(reps[3].frames, int64_t(1));
    QCOMPARE(reps[3].width, 30);
    QVERIFY(reps[3].problems.empty());
    QVERIFY(has_problem(reps[4].problems, "no such file"));
    QVERIFY(has_problem(reps[5].problems, "empty file"));
#endif
  }

  void syntheticIsDeterministic() {
    data::SyntheticSpec spec{96, 54, 5, 42};
    auto a = data::make_synthetic_clip(spec);
    auto b = data::make_synthetic_clip(spec);
    QCOMPARE(a.size(), size_t(5));
    for (size_t i = 0; i < a.size(); ++i) QVERIFY(a[i].data == b[i].data);
    QVERIFY(a[0].data != a[4].data);  // it moves
    spec.seed = 43;
    QVERIFY(data::make_synthetic_clip(spec)[0].data != a[0].data);
    std::string caption = data::describe_scene(data::make_scene(spec));
    QVERIFY2(caption.size() > 20 && caption.back() == '.', caption.c_str());
    // The index pattern reads back.
    for (int i : {0, 1, 37, 255}) QCOMPARE(data::read_index_frame(data::make_index_frame(64, 16, i)), i);
  }
};

QTEST_APPLESS_MAIN(TestMetadata)
#include "test_metadata.moc"
