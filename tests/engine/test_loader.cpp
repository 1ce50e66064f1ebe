// SPDX-License-Identifier: Apache-2.0
// The training loader: keyed random streams, the bucket sampler and its exact cursor, and
// the threaded clip loader on the demo dataset (docs/design/upsampler-training.md §3–§4, §4.6).
#include <QtTest/QtTest>

#include <chrono>
#include <set>
#include <thread>

#include "core/fs.h"
#include "data/bucket_sampler.h"
#include "data/clip_loader.h"
#include "data/demo_data.h"
#include "dataset/metadata.h"
#include "data/random_streams.h"
#include "dataset/row_check.h"
#include "test_util.h"
#include "train/flow_noise.h"

using namespace ws::data;
using namespace ws::dataset;

namespace {

std::vector<std::string> mixed_keys(int n) {
  std::vector<std::string> k;
  for (int i = 0; i < n; ++i) k.push_back(i % 3 == 0 ? "video:0.57" : (i % 3 == 1 ? "video:1.0" : "image:1.0"));
  return k;
}

bool same_items(const BatchPlan& a, const BatchPlan& b) {
  return a.epoch == b.epoch && a.batch_in_epoch == b.batch_in_epoch && a.items == b.items && a.cursor == b.cursor;
}

}  // namespace

class TestLoader : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  Metadata meta_;
  std::vector<TrainRow> rows_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    if (!video_support_built()) return;
    auto s = write_demo_dataset(tmp_.path().toStdString() + "/demo");
    meta_ = read_metadata(s.metadata_path);
    std::vector<DroppedRow> dropped;
    rows_ = usable_rows(meta_, 2, &dropped);
    QVERIFY(dropped.empty());
    QVERIFY(rows_.size() >= 6);
  }

  void streams_are_keyed() {
    Rng a = Rng::keyed(42, "clip", 0, 5, 0), b = Rng::keyed(42, "clip", 0, 5, 0);
    for (int i = 0; i < 100; ++i) QCOMPARE(a.next_u64(), b.next_u64());
    Rng c = Rng::keyed(42, "clip", 0, 5, 1), d = Rng::keyed(42, "batch", 0, 5, 0), e = Rng::keyed(43, "clip", 0, 5, 0);
    Rng a2 = Rng::keyed(42, "clip", 0, 5, 0);
    const uint64_t first = a2.next_u64();
    QVERIFY(c.next_u64() != first);
    QVERIFY(d.next_u64() != first);
    QVERIFY(e.next_u64() != first);
    Rng r(7);
    std::vector<int> hist(5, 0);
    for (int i = 0; i < 5000; ++i) {
      int64_t v = r.uniform_int(3, 7);
      QVERIFY(v >= 3 && v <= 7);
      ++hist[static_cast<size_t>(v - 3)];
    }
    for (int h : hist) QVERIFY(h > 850 && h < 1150);  // uniform within sampling noise
  }

  void permutation_is_a_seeded_randperm() {
    // LibTorch's randperm with a generator seeded seed + epoch: the reference's order.
    auto p = epoch_permutation(50, 42);
    auto sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 50; ++i) QCOMPARE(sorted[static_cast<size_t>(i)], i);
    QCOMPARE(epoch_permutation(50, 42), p);
    QVERIFY(epoch_permutation(50, 43) != p);
  }

  void sampler_batches_share_a_bucket() {
    auto keys = mixed_keys(30);
    BucketSampler s(keys, 3, 7);
    std::set<int64_t> seen;
    for (int i = 0; i < 10; ++i) {
      BatchPlan p = s.next();
      QCOMPARE(p.items.size(), size_t{3});
      for (const auto& it : p.items)
        QCOMPARE(keys[static_cast<size_t>(it.row)], keys[static_cast<size_t>(p.items[0].row)]);
      if (p.epoch == 0)
        for (const auto& it : p.items) QVERIFY(seen.insert(it.row).second);  // no row twice in an epoch
    }
  }

  void sampler_order_depends_on_seed_only() {
    auto keys = mixed_keys(20);
    BucketSampler a(keys, 2, 5), b(keys, 2, 5), c(keys, 2, 6);
    bool differs = false;
    for (int i = 0; i < 25; ++i) {
      auto pa = a.next(), pb = b.next(), pc = c.next();
      QVERIFY(same_items(pa, pb));
      differs = differs || !(pa.items == pc.items);
    }
    QVERIFY(differs);
  }

  void cursor_restores_exactly() {
    // Partial buckets carry over epochs: resume from any batch's cursor continues identically.
    auto keys = mixed_keys(11);
    BucketSampler straight(keys, 4, 3);
    std::vector<BatchPlan> plans;
    for (int i = 0; i < 20; ++i) plans.push_back(straight.next());
    QVERIFY(plans.back().epoch >= 2);
    for (int k : {0, 3, 7, 12}) {
      json_round_trip(plans[static_cast<size_t>(k)].cursor);
      BucketSampler resumed(keys, 4, 3);
      resumed.restore(LoaderCursor::from_json(plans[static_cast<size_t>(k)].cursor.to_json(), "test"));
      for (size_t j = static_cast<size_t>(k) + 1; j < plans.size(); ++j) QVERIFY(same_items(resumed.next(), plans[j]));
    }
  }

  void ranks_split_the_batches() {
    auto keys = mixed_keys(24);
    BucketSampler all(keys, 2, 9), r0(keys, 2, 9, 0, 2), r1(keys, 2, 9, 1, 2);
    for (int i = 0; i < 6; ++i) {
      auto g0 = all.next(), g1 = all.next();
      auto a = r0.next(), b = r1.next();
      QCOMPARE(a.items, g0.items);
      QCOMPARE(b.items, g1.items);
      // Both ranks save the cursor after the round, so a resume skips the other rank's batch.
      QVERIFY(a.cursor == b.cursor);
      QVERIFY(b.cursor == g1.cursor);
      if (i == 2) {
        BucketSampler q0(keys, 2, 9, 0, 2), q1(keys, 2, 9, 1, 2);
        q0.restore(a.cursor);
        q1.restore(b.cursor);
        BucketSampler ref0(keys, 2, 9, 0, 2), ref1(keys, 2, 9, 1, 2);
        for (int k = 0; k <= i; ++k) ref0.next(), ref1.next();
        for (int k = 0; k < 4; ++k) {
          QCOMPARE(q0.next().items, ref0.next().items);
          QCOMPARE(q1.next().items, ref1.next().items);
        }
      }
    }
  }

  void restore_rejects_a_changed_dataset() {
    BucketSampler s(mixed_keys(5), 1, 1);
    LoaderCursor c;
    c.pos = 9;
    QVERIFY(!ws::test::error_of([&] { s.restore(c); }).isEmpty());
  }

  void loader_batches_do_not_depend_on_workers() {
    if (!video_support_built()) QSKIP("no video support");
    LoaderOptions o;
    o.sample_size = 256;
    o.n_frames = 9;
    o.stride = 2;
    o.seed = 11;
    o.degradation = false;
    o.workers = 0;
    ClipLoader sync(rows_, o);
    o.workers = 2;
    ClipLoader threaded(rows_, o);
    for (int i = 0; i < 6; ++i) {
      Batch a = sync.next(), b = threaded.next();
      QVERIFY(same_items(a.plan, b.plan));
      QVERIFY(torch::equal(a.x_hr, b.x_hr));
      QVERIFY(torch::equal(a.x_lr, b.x_lr));
      // Sizes follow the bucket of the first clip; x_lr is exactly 2/3 for 1.5x.
      QCOMPARE(a.x_hr.size(3), a.size.H);
      QCOMPARE(a.x_hr.size(4), a.size.W);
      QCOMPARE(a.x_lr.size(3), a.size.h_lr);
      QCOMPARE(a.x_lr.size(4), a.size.w_lr);
      QCOMPARE(a.x_hr.size(3) * 2, a.x_lr.size(3) * 3);
      QCOMPARE((a.x_hr.size(2) - 1) % 4, int64_t{0});
      QVERIFY(a.x_hr.min().item<float>() >= -1.0f && a.x_hr.max().item<float>() <= 1.0f);
    }
  }

  // dataloader_num_workers acts: that many threads decode, and they work ahead of the consumer
  // (the next batches get ready while nobody asks); with 0 nothing is decoded until asked.
  void workers_decode_ahead() {
    if (!video_support_built()) QSKIP("no video support");
    LoaderOptions o;
    o.sample_size = 64;
    o.n_frames = 5;
    o.stride = 2;
    o.seed = 3;
    o.workers = 0;
    ClipLoader sync(rows_, o);
    sync.next();
    QCOMPARE(sync.worker_threads(), 0);
    QCOMPARE(sync.batches_ready(), size_t{0});
    o.workers = 2;
    ClipLoader threaded(rows_, o);
    QCOMPARE(threaded.worker_threads(), 0);  // started by the first request
    threaded.next();
    QCOMPARE(threaded.worker_threads(), 2);
    // Waits for the event itself, bounded generously for a loaded machine.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (threaded.batches_ready() < 1 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    QVERIFY2(threaded.batches_ready() >= 1, "no batch was decoded ahead within 2 minutes");
  }

  void loader_resumes_at_a_cursor() {
    if (!video_support_built()) QSKIP("no video support");
    LoaderOptions o;
    o.sample_size = 128;
    o.n_frames = 5;
    o.seed = 3;
    o.workers = 1;
    o.degradation = true;
    ClipLoader a(rows_, o);
    std::vector<Batch> straight;
    for (int i = 0; i < 5; ++i) straight.push_back(a.next());
    ClipLoader b(rows_, o);
    b.restore(straight[1].plan.cursor);
    for (size_t i = 2; i < straight.size(); ++i) {
      Batch r = b.next();
      QVERIFY(same_items(r.plan, straight[i].plan));
      QVERIFY(torch::equal(r.x_hr, straight[i].x_hr));
      QVERIFY(torch::equal(r.x_lr, straight[i].x_lr));  // degradation draws are keyed too
    }
  }

  void degradation_touches_only_the_input() {
    if (!video_support_built()) QSKIP("no video support");
    LoaderOptions o;
    o.sample_size = 128;
    o.n_frames = 5;
    o.seed = 3;
    o.workers = 0;
    ClipLoader clean(rows_, o);
    o.degradation = true;
    o.min_ops = o.max_ops = 3;
    ClipLoader degraded(rows_, o);
    Batch a = clean.next(), b = degraded.next();
    QVERIFY(torch::equal(a.x_hr, b.x_hr));   // the target stays clean
    QVERIFY(!torch::equal(a.x_lr, b.x_lr));  // the input is degraded
    QCOMPARE(b.clips[0].degradation.size(), size_t{3});
  }

  // A row's `trim` [first, end) is what training sees: every clip's frames lie inside it, its
  // length is the trim's, a trim past the file or on a picture is a reason to drop the row, and the
  // trim survives a write of the metadata (and goes when cleared).
  void trim_bounds_the_frames_a_row_gives() {
    if (!video_support_built()) QSKIP("no video support");
    const std::string dir = tmp_.path().toStdString() + "/trim";
    ws::fs::make_dirs(dir);
    const std::string clip = meta_.resolve(meta_.rows[0]);
    MetaRow trimmed = make_row(clip, "t", "video"), past = make_row(clip, "p", "video");
    trimmed.trim = std::make_pair(int64_t{6}, int64_t{16});
    past.trim = std::make_pair(int64_t{0}, int64_t{100000});
    write_metadata(dir + "/metadata.json", {trimmed, past});
    Metadata m = read_metadata(dir + "/metadata.json");
    QVERIFY(m.rows[0].trim && m.rows[0].trim->first == 6 && m.rows[0].trim->second == 16);
    std::vector<DroppedRow> dropped;
    auto rows = usable_rows(m, 2, &dropped);
    QCOMPARE(rows.size(), size_t{1});
    QCOMPARE(rows[0].frames, int64_t{10});
    QCOMPARE(rows[0].first_frame, int64_t{6});
    QCOMPARE(dropped.size(), size_t{1});
    QVERIFY2(dropped[0].reason.find("past the file") != std::string::npos, dropped[0].reason.c_str());
    LoaderOptions o;
    o.sample_size = 64;
    o.n_frames = 5;
    o.stride = 2;
    o.degradation = false;
    o.workers = 0;
    ClipLoader loader(rows, o);
    for (int i = 0; i < 8; ++i) {
      Batch b = loader.next();
      for (int64_t f : b.clips.at(0).frames) QVERIFY2(f >= 6 && f < 16, std::to_string(f).c_str());
    }
    m.rows[0].trim.reset();
    write_metadata(dir + "/metadata.json", m.rows);
    QVERIFY(!read_metadata(dir + "/metadata.json").rows[0].trim);
    // A malformed trim is a row problem, not a crash.
    ws::test::write_bytes(dir + "/bad.json", R"([{"file_path": "a.mp4", "trim": [5, 2]}])");
    QVERIFY(!read_metadata(dir + "/bad.json").rows[0].problems.empty());
  }

  // Each fixed frame extraction on a real clip (docs/design/datasets.md §5): one epoch hands out
  // every window exactly once, and each batch decodes the window's frames.
  void frame_extraction_modes_on_real_clips() {
    if (!video_support_built()) QSKIP("no video support");
    const TrainRow& clip = rows_[0];
    QVERIFY(clip.fps > 0);
    const int64_t T = clip.frames, N = 5, s = 2;  // a window spans 9 frames
    struct Case {
      ExtractionRule rule;
      std::vector<int64_t> starts;
    };
    ExtractionRule head, chunk, slide, uniform, full;
    head.mode = Extraction::Head;
    chunk.mode = Extraction::Chunk;
    slide.mode = Extraction::Slide;
    slide.step = 3;
    uniform.mode = Extraction::Uniform;
    uniform.windows = 3;
    full.mode = Extraction::Full;
    full.fps = clip.fps / 2;  // every second frame
    std::vector<int64_t> chunk_starts, slide_starts;
    for (int64_t i = 0; i + 9 <= T; i += 9) chunk_starts.push_back(i);
    for (int64_t i = 0; i + 9 <= T; i += 3) slide_starts.push_back(i);
    const std::vector<Case> cases{
        {head, {0}}, {chunk, chunk_starts}, {slide, slide_starts}, {uniform, {0, (T - 9) / 2, T - 9}}, {full, {0}}};
    for (const Case& c : cases) {
      const std::string mode = extraction_name(c.rule.mode);
      std::vector<DroppedRow> dropped;
      auto samples = extraction_samples({clip}, N, s, c.rule, &dropped);
      QVERIFY2(dropped.empty(), mode.c_str());
      QCOMPARE(samples.size(), c.starts.size());
      LoaderOptions o;
      o.sample_size = 64;
      o.n_frames = N;
      o.stride = s;
      o.workers = 0;
      o.random_hw_adapt = false;
      ClipLoader loader(samples, o);
      std::multiset<int64_t> seen;
      for (size_t i = 0; i < samples.size(); ++i) {
        Batch b = loader.next();
        const auto& f = b.clips.at(0).frames;
        seen.insert(f.front());
        if (c.rule.mode == Extraction::Full) {
          QCOMPARE(int64_t(f.size()), std::min<int64_t>(N, (T + 1) / 2));
          for (size_t k = 0; k < f.size(); ++k) QCOMPARE(f[k], int64_t(2 * k));
        } else {
          QCOMPARE(f.size(), size_t(N));
          QCOMPARE(f.back() - f.front(), int64_t{8});
        }
        QCOMPARE(b.x_hr.size(2), batch_frames(N, int64_t(f.size())));
      }
      QCOMPARE(seen, std::multiset<int64_t>(c.starts.begin(), c.starts.end()));
    }
    // A picture passes as it is; random leaves the rows alone.
    QCOMPARE(extraction_samples(rows_, N, s, ExtractionRule{}, nullptr).size(), rows_.size());
  }

  void bad_rows_are_dropped_with_a_reason() {
    if (!video_support_built()) QSKIP("no video support");
    const std::string dir = tmp_.path().toStdString() + "/bad";
    ws::fs::make_dirs(dir);
    ws::test::write_bytes(dir + "/empty.mp4", "");
    ws::test::write_bytes(dir + "/text.mp4", "this is not a video\n");
    std::string good = meta_.resolve(meta_.rows[0]);
    std::string bytes = ws::test::read_bytes(good);
    ws::test::write_bytes(dir + "/truncated.mp4", bytes.substr(0, bytes.size() / 3));
    std::vector<MetaRow> rows{make_row("empty.mp4", "", "video"),   make_row("text.mp4", "", "video"),
                              make_row("missing.mp4", "", "video"), make_row("truncated.mp4", "", "video"),
                              make_row(good, "", "video"),          make_row(good, "", "sound")};
    write_metadata(dir + "/metadata.json", rows);
    Metadata m = read_metadata(dir + "/metadata.json");
    std::vector<DroppedRow> dropped;
    auto ok = usable_rows(m, 2, &dropped);
    QCOMPARE(ok.size(), size_t{1});
    QCOMPARE(dropped.size(), size_t{5});
    for (const auto& d : dropped) QVERIFY2(!d.reason.empty(), d.file.c_str());
  }

  void sigma_pool_matches_the_scheduler() {
    auto p = ws::train::flow_sigma_pool(50, 5.0);
    QCOMPARE(p.size(), size_t{50});
    const double head[] = {1.0, 0.99587, 0.99160, 0.98719, 0.98263};
    const double tail[] = {0.32051, 0.26076, 0.19280, 0.11482, 0.02441};
    for (int i = 0; i < 5; ++i) {
      QVERIFY(std::abs(p[static_cast<size_t>(i)] - head[i]) < 1e-5);
      QVERIFY(std::abs(p[static_cast<size_t>(45 + i)] - tail[i]) < 1e-5);
    }
    auto q = ws::train::flow_sigma_pool(50, 12.0);
    const double tail12[] = {0.55028, 0.48351, 0.39792, 0.28426, 0.12598};
    for (int i = 0; i < 5; ++i) QVERIFY(std::abs(q[static_cast<size_t>(45 + i)] - tail12[i]) < 1e-5);
    QVERIFY(!ws::test::error_of([] {
               ws::train::make_noise_options(true, "scheduler", 50, 5.0, std::make_pair<int64_t, int64_t>(30, 60), 0,
                                             0.25);
             }).isEmpty());
  }

  void noise_mixes_with_one_sigma_per_sample() {
    auto opt = ws::train::make_noise_options(true, "uniform", 50, 5.0, std::nullopt, 0.1, 0.2);
    torch::Tensor hr = torch::zeros({3, 4, 2, 6, 6}), lr = torch::zeros({3, 4, 2, 4, 4});
    Rng rng = Rng::keyed(1, "step", 0, 0, 0);
    auto sig = ws::train::add_flow_noise(hr, lr, opt, rng);
    QCOMPARE(sig.size(), size_t{3});
    for (int b = 0; b < 3; ++b) {
      QVERIFY(sig[static_cast<size_t>(b)] >= 0.1f && sig[static_cast<size_t>(b)] < 0.2f);
      // z = 0: the result is σ·ε, so its std is σ.
      const double sd = hr[b].std().item<double>();
      QVERIFY(std::abs(sd - sig[static_cast<size_t>(b)]) < 0.03);
    }
  }

 private:
  void json_round_trip(const LoaderCursor& c) { QVERIFY(LoaderCursor::from_json(c.to_json(), "test") == c); }
};

QTEST_APPLESS_MAIN(TestLoader)
#include "test_loader.moc"
