// SPDX-License-Identifier: Apache-2.0
// Bucket sizes and frame sampling against the spec's worked example and full table
// (docs/design/upsampler-training.md §3.3, §4.4, §4.5).
#include <QtTest/QtTest>

#include "core/error.h"
#include "dataset/buckets.h"
#include "dataset/frame_sampling.h"

using namespace ws::dataset;

class TestBuckets : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void worked_example() {
    auto b = bucket_size(1080, 1920, 640, 1.5);
    QCOMPARE(b.key, 0.57);
    QCOMPARE(b.H, int64_t{480});
    QCOMPARE(b.W, int64_t{816});
    QCOMPARE(b.h_lr, int64_t{320});
    QCOMPARE(b.w_lr, int64_t{544});
  }

  void full_table_at_640() {
    // key -> HR H x W | LR h x w, from docs/design/upsampler-training.md §4.5.
    struct Row {
      double key;
      int64_t H, W, h, w;
    };
    const Row rows[] = {{0.25, 288, 1248, 192, 832}, {0.27, 288, 1200, 192, 800}, {0.32, 336, 1104, 224, 736},
                        {0.42, 384, 960, 256, 640},  {0.5, 432, 864, 288, 576},   {0.72, 480, 720, 320, 480},
                        {0.94, 576, 624, 384, 416},  {1.0, 624, 624, 416, 416},   {1.46, 720, 480, 480, 320},
                        {1.75, 816, 480, 544, 320},  {2.5, 960, 384, 640, 256},   {3.88, 1200, 288, 800, 192},
                        {4.0, 1248, 288, 832, 192}};
    for (const auto& r : rows) {
      // A clip whose ratio is exactly the key lands in that bucket.
      auto b = bucket_size(static_cast<int64_t>(r.key * 10000), 10000, 640, 1.5);
      QCOMPARE(b.key, r.key);
      QCOMPARE(b.H, r.H);
      QCOMPARE(b.W, r.W);
      QCOMPARE(b.h_lr, r.h);
      QCOMPARE(b.w_lr, r.w);
      // The exact 3:2 latent relation the upsampler needs.
      QCOMPARE(b.H / 16 * 2, b.h_lr / 16 * 3);
    }
  }

  void alignment_and_square_bucket() {
    QCOMPARE(bucket_alignment(1.5), int64_t{48});
    QCOMPARE(bucket_alignment(2.0), int64_t{32});
    QCOMPARE(bucket_alignment(0.75), int64_t{48});
    QCOMPARE(bucket_alignment(4.0), int64_t{64});
    auto b = bucket_size(1080, 1920, 256, 1.5, 1.0, false);  // the bench's 240×240 -> 160×160
    QCOMPARE(b.H, int64_t{240});
    QCOMPARE(b.W, int64_t{240});
    QCOMPARE(b.h_lr, int64_t{160});
  }

  void ties_take_the_first_key() { QCOMPARE(aspect_ratio_512()[nearest_bucket(0.255)].key, 0.25); }

  void frame_sampling() {
    auto s = plan_clip(100, 81, 2);  // n = min(81, 50) = 50
    QCOMPARE(s.n, int64_t{50});
    QCOMPARE(s.clip_len, int64_t{99});
    QCOMPARE(s.max_start, int64_t{1});
    auto idx = clip_indices(s, 1);
    QCOMPARE(idx.front(), int64_t{1});
    QCOMPARE(idx[1], int64_t{3});
    QCOMPARE(idx.back(), int64_t{99});
    s = plan_clip(200, 17, 4);
    QCOMPARE(s.n, int64_t{17});
    QCOMPARE(s.clip_len, int64_t{65});
    idx = clip_indices(s, 10);
    for (int64_t i = 0; i < 17; ++i) QCOMPARE(idx[i], 10 + 4 * i);
    QCOMPARE(plan_clip(1, 17, 2).n, int64_t{0});  // too short: dropped
    QCOMPARE(plan_clip(1, 17, 1).n, int64_t{1});  // an image row
  }

  // docs/design/datasets.md §5: the windows each mode fixes, worked out by hand for T = 100
  // frames, N = 9 frames at stride 2 (a window spans 17 frames, starts 0..83).
  void frame_extraction_windows() {
    ExtractionRule rule;
    QVERIFY(extraction_windows(100, 16, 9, 2, rule).empty());  // random: drawn each epoch
    rule.mode = Extraction::Head;
    auto w = extraction_windows(100, 16, 9, 2, rule);
    QCOMPARE(w.size(), size_t{1});
    QCOMPARE(w[0], (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14, 16}));
    rule.mode = Extraction::Chunk;  // starts 0, 17, 34, 51, 68 (85 would end past 99)
    w = extraction_windows(100, 16, 9, 2, rule);
    QCOMPARE(w.size(), size_t{5});
    for (size_t i = 0; i < w.size(); ++i) {
      QCOMPARE(w[i].front(), int64_t(17 * i));
      QCOMPARE(w[i].back(), int64_t(17 * i + 16));
    }
    rule.mode = Extraction::Slide;  // every 30 frames: 0, 30, 60 (90 > 83)
    rule.step = 30;
    w = extraction_windows(100, 16, 9, 2, rule);
    QCOMPARE(w.size(), size_t{3});
    QCOMPARE(w[2].front(), int64_t{60});
    rule.mode = Extraction::Uniform;  // linspace(0, 83, 3) = 0, 41.5, 83
    rule.windows = 3;
    w = extraction_windows(100, 16, 9, 2, rule);
    QCOMPARE(w.size(), size_t{3});
    QCOMPARE(w[1].front(), int64_t{41});
    QCOMPARE(w[2].back(), int64_t{99});
    rule.windows = 50;  // more windows than starts: equal starts merge
    QCOMPARE(extraction_windows(20, 16, 9, 2, rule).size(), size_t{4});
    rule.mode = Extraction::Full;  // 30 fps resampled to 10: every third frame, N caps it
    rule.fps = 10;
    w = extraction_windows(100, 30, 9, 2, rule);
    QCOMPARE(w.size(), size_t{1});
    QCOMPARE(w[0], (std::vector<int64_t>{0, 3, 6, 9, 12, 15, 18, 21, 24}));
    w = extraction_windows(10, 30, 81, 2, rule);  // the whole clip: 0, 3, 6, 9
    QCOMPARE(w[0], (std::vector<int64_t>{0, 3, 6, 9}));
    w = extraction_windows(10, 8, 81, 2, rule);  // slower than the target: every frame
    QCOMPARE(w[0].size(), size_t{10});
    rule.mode = Extraction::Chunk;
    QVERIFY(extraction_windows(1, 16, 9, 2, rule).empty());  // too short for the stride
    QCOMPARE(parse_extraction("slide"), Extraction::Slide);
    QCOMPARE(extraction_name(Extraction::Full), std::string("full"));
    QVERIFY_THROWS_EXCEPTION(ws::Error, parse_extraction("sideways"));
  }

  void batch_frames_is_4k_plus_1() {
    QCOMPARE(batch_frames(81, 200), int64_t{85});
    QCOMPARE(batch_frames(81, 81), int64_t{81});
    QCOMPARE(batch_frames(81, 50), int64_t{49});
    QCOMPARE(batch_frames(17, 1), int64_t{1});
    QCOMPARE(batch_frames(17, 4), int64_t{1});
  }

  void hw_adapt() {
    QCOMPARE(hw_adapt_choices(640).first.size(), size_t{1});
    QCOMPARE(hw_adapt_choices(768).first.size(), size_t{3});
    QCOMPARE(hw_adapt_choices(2048).second.front(), 0.75);
    auto b = bucket_size(1080, 1920, 1024, 1.5, 2.0);  // r divides the size
    QCOMPARE(b.H, bucket_size(1080, 1920, 512, 1.5).H);
  }

  void python_rounding() {
    QCOMPARE(round_half_even(0.5), int64_t{0});
    QCOMPARE(round_half_even(1.5), int64_t{2});
    QCOMPARE(round_half_even(2.5), int64_t{2});
  }
};

QTEST_APPLESS_MAIN(TestBuckets)
#include "test_buckets.moc"
