// SPDX-License-Identifier: Apache-2.0
// Making datasets: import from a folder with sidecar captions, scene detection and splitting
// on a recording of several shots joined together, near-duplicate search (engine/dataset/).
#include <QtTest/QtTest>

#include <random>

#include "core/fs.h"
#include "data/synthetic.h"
#include "dataset/import_folder.h"
#include "dataset/near_duplicates.h"
#include "dataset/row_check.h"
#include "dataset/scene_split.h"
#include "dataset/sidecar_caption.h"
#include "test_util.h"
#include "video/video_decode.h"
#include "video/video_encode.h"
#include "video/video_resize.h"

using namespace ws;

namespace {

std::vector<video::RgbFrame> shot(uint64_t seed, int frames, int w = 192, int h = 112) {
  data::SyntheticSpec spec;
  spec.width = w, spec.height = h, spec.frames = frames, spec.seed = seed;
  return data::make_synthetic_clip(spec);
}

void write(const std::string& path, const std::vector<video::RgbFrame>& frames, int crf = 18) {
  video::EncodeOptions o;
  o.fps = 16;
  o.crf = crf;
  video::write_video(path, frames, o);
}

void write_text(const std::string& path, const std::string& text) { test::write_bytes(path, text); }

}  // namespace

class TestDatasetTools : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir() const { return tmp_.path().toStdString(); }

 private Q_SLOTS:
  void initTestCase() {
    if (!dataset::video_support_built()) QSKIP("built without video support");
  }

  // Scenes cut on keyframes are copied without re-encoding (their frames decode bit for bit as the
  // source's); a scene that starts or ends between keyframes is re-encoded; --no_stream_copy
  // re-encodes all.
  void streamCopyOnKeyframes() {
    std::vector<video::RgbFrame> all;
    for (int i = 0; i < 4; ++i) {
      auto s = shot(300 + i, 32);
      all.insert(all.end(), s.begin(), s.end());
    }
    const std::string rec = fs::join(dir(), "gop32.mp4");
    video::EncodeOptions o;
    o.fps = 16;
    o.gop = 32;  // keyframes at 0, 32, 64, 96
    video::write_video(rec, all, o);
    dataset::SplitOptions opts;
    opts.use_cuts = true;
    opts.cuts = {32, 64, 96};
    opts.output_dir = fs::join(dir(), "copied");
    auto r = dataset::split_video(rec, opts, false);
    QCOMPARE(r.copied, (std::vector<bool>{true, true, true, true}));
    video::VideoReader source(rec);
    for (int k = 0; k < 4; ++k) {
      const std::string clip = fs::join(opts.output_dir, dataset::scene_clip_name(rec, size_t(k)));
      video::VideoReader reader(clip);
      QCOMPARE(reader.frame_count(), int64_t{32});
      for (int64_t f : {int64_t{0}, int64_t{17}, int64_t{31}}) {
        const video::RgbFrame a = reader.read(f), b = source.read(32 * k + f);
        QVERIFY2(a.data == b.data, "a copied frame differs from the source's");
      }
      QCOMPARE(r.rows[size_t(k)].raw.at("frame_range").at(0).get<int64_t>(), int64_t{32 * k});
    }
    opts.cuts = {40, 64};  // 40 is no keyframe: the scenes either side of it are re-encoded
    opts.output_dir = fs::join(dir(), "mixed");
    r = dataset::split_video(rec, opts, false);
    QCOMPARE(r.copied, (std::vector<bool>{false, false, true}));
    const int64_t lengths[] = {40, 24, 64};
    for (size_t k = 0; k < 3; ++k)
      QCOMPARE(video::probe_video(fs::join(opts.output_dir, dataset::scene_clip_name(rec, k))).frames, lengths[k]);
    opts.stream_copy = false;
    opts.output_dir = fs::join(dir(), "encoded");
    r = dataset::split_video(rec, opts, false);
    QCOMPARE(r.copied, (std::vector<bool>{false, false, false}));
  }

  // Four shots of different lengths joined: every join found within two frames, nothing else.
  void scenesOfAJoinedRecording() {
    const std::vector<int> lengths = {40, 23, 57, 31};
    std::vector<video::RgbFrame> all;
    std::vector<int64_t> joins;
    for (size_t i = 0; i < lengths.size(); ++i) {
      if (i > 0) joins.push_back(static_cast<int64_t>(all.size()));
      auto s = shot(100 + i, lengths[i]);
      all.insert(all.end(), s.begin(), s.end());
    }
    const std::string rec = fs::join(dir(), "recording.mp4");
    write(rec, all);
    const auto scan = dataset::scan_scenes(rec, {});
    QCOMPARE(static_cast<int64_t>(scan.scores.size()), static_cast<int64_t>(all.size()));
    QCOMPARE(scan.cuts.size(), joins.size());
    for (size_t i = 0; i < joins.size(); ++i) QVERIFY2(std::abs(scan.cuts[i] - joins[i]) <= 2, "a cut off its join");

    // A threshold above every score finds none; a minimum scene longer than the shots merges.
    dataset::SceneOptions strict;
    strict.threshold = 255;
    QVERIFY(dataset::cuts_from_scores(scan.scores, strict).empty());
    dataset::SceneOptions longer;
    longer.min_scene_frames = 45;
    const auto merged = dataset::cuts_from_scores(scan.scores, longer);
    QVERIFY(merged.size() < joins.size());

    // Split writes one clip per scene with its source range, and the clips decode to those lengths.
    write_text(fs::join(dir(), "recording.txt"), "  a test recording \n");
    dataset::SplitOptions opts;
    opts.output_dir = fs::join(dir(), "scenes");
    const auto r = dataset::split_video(rec, opts, false);
    QCOMPARE(r.rows.size(), lengths.size());
    const auto meta = dataset::read_metadata(r.metadata_path);
    QCOMPARE(meta.rows.size(), lengths.size());
    for (size_t i = 0; i < meta.rows.size(); ++i) {
      const auto& raw = meta.rows[i].raw;
      const int64_t a = raw["frame_range"][0].get<int64_t>(), b = raw["frame_range"][1].get<int64_t>();
      QCOMPARE(a, i == 0 ? 0 : scan.cuts[i - 1]);
      QCOMPARE(video::probe_video(meta.resolve(meta.rows[i])).frames, b - a);
      QCOMPARE(meta.rows[i].text, std::string("a test recording"));
      QCOMPARE(raw["source"].get<std::string>(), fs::absolute(rec));
    }
    // A second split into the same folder refuses to replace the clips.
    const std::string err = test::error_of([&] { dataset::split_video(rec, opts, false); }).toStdString();
    QVERIFY2(err.find("exists") != std::string::npos, err.c_str());
  }

  // VideoX-Fun's rule: pieces of max_seconds from each scene's start, shorter than min_seconds dropped.
  void minAndMaxSeconds() {
    // Scenes of 50 and 20 frames at 10 fps: max 2 s -> 20+20+10 and 20; min 1.5 s drops the 10.
    const auto r = dataset::scene_ranges({50}, 70, 10.0, 1.5, 2.0);
    const std::vector<std::pair<int64_t, int64_t>> want = {{0, 20}, {20, 40}, {50, 70}};
    QCOMPARE(r, want);
    const auto whole = dataset::scene_ranges({50}, 70, 10.0);
    QCOMPARE(whole.size(), size_t(2));
    QVERIFY(!test::error_of([] { dataset::scene_ranges({5}, 10, 0.0, 1.0, 0.0); }).isEmpty());
  }

  // A re-encoded, rescaled copy is found; other shots of the same recording are not copies.
  void nearDuplicates() {
    const auto a = shot(7, 33);
    const std::string orig = fs::join(dir(), "orig.mp4");
    write(orig, a);
    std::vector<video::RgbFrame> smaller;
    for (const auto& f : video::read_video_frames(orig, [] {
           std::vector<int64_t> v;
           for (int i = 0; i < 33; ++i) v.push_back(i);
           return v;
         }()))
      smaller.push_back(video::resize_rgb(f, 128, 74));
    const std::string copy = fs::join(dir(), "copy.mp4");
    write(copy, smaller, 30);
    std::vector<dataset::ClipHashes> clips = {dataset::hash_clip(orig), dataset::hash_clip(copy)};
    for (uint64_t seed : {8, 9, 10, 11}) {
      const std::string p = fs::join(dir(), "other" + std::to_string(seed) + ".mp4");
      write(p, shot(seed, 33));
      clips.push_back(dataset::hash_clip(p));
    }
    const double copy_sim = dataset::clip_similarity(clips[0], clips[1]);
    double worst_other = 0;
    for (size_t i = 0; i < clips.size(); ++i)
      for (size_t j = i + 1; j < clips.size(); ++j)
        if (!(i == 0 && j == 1)) worst_other = std::max(worst_other, dataset::clip_similarity(clips[i], clips[j]));
    qInfo("copy %.3f, most alike distinct shots %.3f", copy_sim, worst_other);
    const auto pairs = dataset::find_duplicates(clips, 0.85);
    QCOMPARE(pairs.size(), size_t(1));
    QCOMPARE(pairs[0].a, size_t(0));
    QCOMPARE(pairs[0].b, size_t(1));
    // The banded search (what datasets past 5,000 clips use) finds the same pair on real clips.
    const auto banded = dataset::find_duplicates(clips, 0.85, 0);
    QCOMPARE(banded.size(), size_t(1));
    QCOMPARE(banded[0].b, size_t(1));
  }

  // At scale: 20,000 clips of random frame hashes with 20 planted copies (each frame a few bits
  // off its original, in other positions): the banded search finds every copy and nothing else,
  // and compares a small share of the 200 million pairs.
  void duplicatesAtScale() {
    std::mt19937_64 rng(7);
    std::vector<dataset::ClipHashes> clips(20000);
    for (auto& c : clips)
      for (int f = 0; f < 8; ++f) c.frames.push_back(rng());
    std::vector<std::pair<size_t, size_t>> planted;
    for (size_t k = 0; k < 20; ++k) {
      const size_t from = k * 997, to = 19999 - k * 13;
      clips[to].frames.clear();
      for (int f = 7; f >= 0; --f) {
        uint64_t h = clips[from].frames[size_t(f)];
        for (int b = 0; b < 5; ++b) h ^= uint64_t{1} << (rng() % 64);  // up to 5 bits off
        clips[to].frames.push_back(h);
      }
      planted.emplace_back(from, to);
    }
    QElapsedTimer t;
    t.start();
    const auto pairs = dataset::find_duplicates(clips, 0.85);
    qInfo("20,000 clips, banded search: %lld ms, %zu pairs", static_cast<long long>(t.elapsed()), pairs.size());
    QCOMPARE(pairs.size(), planted.size());
    for (const auto& [a, b] : planted) {
      const bool found = std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) { return p.a == a && p.b == b; });
      QVERIFY2(found, qPrintable(QString("copy %1 of %2 missed").arg(b).arg(a)));
    }
  }

  // Rows for videos and pictures under the folder, captions from sidecars, problems listed.
  void importFolder() {
    const std::string root = fs::join(dir(), "import");
    fs::make_dirs(fs::join(root, "sub"));
    fs::make_dirs(fs::join(root, ".hidden"));
    write(fs::join(root, "b.mp4"), shot(1, 17));
    write_text(fs::join(root, "b.txt"), "clip b\n");
    write(fs::join(root, "sub/a.mp4"), shot(2, 9));
    write_text(fs::join(root, "sub/a.caption"), "clip a");
    write(fs::join(root, "c.mp4"), shot(3, 17));  // no caption
    video::write_png(fs::join(root, "still.png"), shot(4, 1)[0]);
    write_text(fs::join(root, "still.txt"), "a picture");
    write_text(fs::join(root, "broken.mp4"), "not a video at all");
    write(fs::join(root, ".hidden/x.mp4"), shot(5, 9));
    write_text(fs::join(root, "notes.md"), "not media");

    dataset::ImportOptions o;
    o.root = root;
    o.metadata_path = fs::join(root, "metadata.json");
    o.min_frames = 10;
    const auto r = dataset::import_folder(o);
    QCOMPARE(r.media_files, size_t(5));
    std::vector<std::string> names;
    for (const auto& row : r.rows) names.push_back(row.file_path);
    QCOMPARE(names, (std::vector<std::string>{"b.mp4", "c.mp4", "still.png"}));
    QCOMPARE(r.rows[0].text, std::string("clip b"));
    QCOMPARE(r.rows[0].raw["frames"].get<int64_t>(), int64_t(17));
    QCOMPARE(*r.rows[0].width, int64_t(192));
    QCOMPARE(r.rows[2].type, std::string("image"));
    auto problem = [&](const std::string& file) {
      for (const auto& p : r.problems)
        if (fs::basename(p.file) == file) return p;
      return dataset::ImportProblem{};
    };
    QVERIFY(problem("broken.mp4").excluded);
    QVERIFY(problem("a.mp4").excluded);  // 9 frames < 10
    QVERIFY(!problem("c.mp4").excluded);
    QVERIFY(problem("c.mp4").message.find("no caption") != std::string::npos);
    o.min_frames = 0;
    QCOMPARE(dataset::import_folder(o).rows.size(), size_t(4));  // sub/a.mp4 too

    // A caption written back is read back the same.
    const std::string side = dataset::write_sidecar_caption(fs::join(root, "c.mp4"), "now captioned");
    QCOMPARE(side, fs::join(root, "c.txt"));
    QCOMPARE(*dataset::read_sidecar_caption(fs::join(root, "c.mp4")), std::string("now captioned"));
    write_text(fs::join(root, "b.txt"), std::string("bad \xff\xfe bytes"));
    QVERIFY(test::error_of([&] { dataset::read_sidecar_caption(fs::join(root, "b.mp4")); }).contains("UTF-8"));
  }
};

QTEST_GUILESS_MAIN(TestDatasetTools)
#include "test_dataset_tools.moc"
