// SPDX-License-Identifier: Apache-2.0
#include "data/clip_loader.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

// Resolved at run time from the OpenMP runtime LibTorch loads (libgomp, or the copy a pip
// wheel bundles); weak, so no OpenMP link flag and no mismatch between the two.
extern "C" void omp_set_num_threads(int) __attribute__((weak));
extern "C" int omp_get_max_threads() __attribute__((weak));

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "data/clip_tensor.h"
#include "data/degradation.h"
#include "dataset/frame_sampling.h"
#include "data/random_streams.h"
#include "dataset/row_check.h"

namespace ws::data {
namespace {

// Runs the calling thread's ATen work on one OpenMP thread while in scope (a no-op where OpenMP
// is not loaded, or the thread already runs on one).
class OneOmpThread {
 public:
  OneOmpThread() : before_(omp_get_max_threads && omp_set_num_threads ? omp_get_max_threads() : 1) {
    if (before_ > 1) omp_set_num_threads(1);
  }
  ~OneOmpThread() {
    if (before_ > 1) omp_set_num_threads(before_);
  }
  OneOmpThread(const OneOmpThread&) = delete;
  OneOmpThread& operator=(const OneOmpThread&) = delete;

 private:
  int before_;
};

}  // namespace

std::vector<TrainRow> usable_rows(const dataset::Metadata& meta, int64_t stride, std::vector<DroppedRow>* dropped,
                                  const std::function<void(size_t, size_t)>& progress) {
  std::vector<TrainRow> out;
  auto reports = dataset::check_rows(meta, {}, progress);
  for (const auto& r : reports) {
    const dataset::MetaRow& row = meta.rows[r.index];
    std::string reason;
    if (!r.problems.empty()) {
      reason = r.problems.front();
    } else if (row.type != "video" && row.type != "image") {
      reason = "type '" + row.type + "' is neither video nor image";
    } else if (const int64_t n = row.trim ? row.trim->second - row.trim->first : r.frames;
               !row.is_image() && n / stride < 1) {
      reason = "too short: " + std::to_string(n) + (row.trim ? " trimmed" : "") + " frames < stride " +
               std::to_string(stride);
    }
    if (!reason.empty()) {
      if (dropped) dropped->push_back({r.index, r.file, reason});
      continue;
    }
    TrainRow t;
    t.meta_index = r.index;
    t.path = r.file;
    t.image = row.is_image();
    t.frames = t.image ? 1 : r.frames;
    if (row.trim && !t.image) {  // row_check refused a trim past the file
      t.first_frame = row.trim->first;
      t.frames = row.trim->second - row.trim->first;
    }
    t.width = r.width;
    t.height = r.height;
    t.fps = r.fps;
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<TrainRow> extraction_samples(std::vector<TrainRow> rows, int64_t n_frames, int64_t stride,
                                         const dataset::ExtractionRule& rule, std::vector<DroppedRow>* dropped) {
  if (rule.mode == dataset::Extraction::Random) return rows;
  std::vector<TrainRow> out;
  out.reserve(rows.size());
  for (TrainRow& r : rows) {
    if (r.image || !r.latent_path.empty()) {
      out.push_back(std::move(r));
      continue;
    }
    auto windows = dataset::extraction_windows(r.frames, r.fps, n_frames, stride, rule);
    if (windows.empty()) {
      if (dropped)
        dropped->push_back(
            {r.meta_index, r.path,
             "no " + dataset::extraction_name(rule.mode) + " window in " + std::to_string(r.frames) + " frames"});
      continue;
    }
    for (auto& w : windows) {
      TrainRow t = r;
      t.window = std::move(w);
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::string row_latent_path(const dataset::Metadata& meta, const dataset::MetaRow& row) {
  if (!row.raw.is_object() || !row.raw.contains("latent_path") || !row.raw["latent_path"].is_string()) return {};
  const std::string p = row.raw["latent_path"].get<std::string>();
  if (p.empty()) return {};
  return p[0] == '/' ? p : fs::join(meta.data_dir, p);
}

std::vector<TrainRow> usable_rows_with_latents(const dataset::Metadata& meta, int64_t stride,
                                               std::vector<DroppedRow>* dropped) {
  dataset::Metadata videos = meta;
  videos.rows.clear();
  std::vector<size_t> video_index;  // videos.rows[i] is meta.rows[video_index[i]]
  std::vector<TrainRow> out;
  for (size_t i = 0; i < meta.rows.size(); ++i) {
    const std::string lp = row_latent_path(meta, meta.rows[i]);
    if (lp.empty()) {
      videos.rows.push_back(meta.rows[i]);
      video_index.push_back(i);
      continue;
    }
    std::string reason;
    TrainRow t;
    try {
      auto sd = io::read_safetensors(lp);
      auto it = sd.find("latents");
      if (it == sd.end()) throw Error("no tensor 'latents'");
      if (it->second.dim() != 4) throw Error("'latents' must be [C, F, h, w]");
      t.latent_shape = it->second.sizes().vec();
      auto y = sd.find("y");
      if (y != sd.end() && (y->second.dim() != 4 || y->second.sizes().slice(1) != it->second.sizes().slice(1)))
        throw Error("'y' must be [C_y, F, h, w] with the latents' F, h, w");
    } catch (const std::exception& e) {
      reason = std::string("latent file ") + lp + ": " + e.what();
    }
    if (!reason.empty()) {
      if (dropped) dropped->push_back({i, lp, reason});
      continue;
    }
    t.meta_index = i;
    t.path = lp;
    t.latent_path = lp;
    t.frames = t.latent_shape[1];
    t.height = t.latent_shape[2];
    t.width = t.latent_shape[3];
    out.push_back(std::move(t));
  }
  if (!videos.rows.empty()) {
    std::vector<DroppedRow> d;
    for (TrainRow& r : usable_rows(videos, stride, &d)) {
      r.meta_index = video_index[r.meta_index];
      out.push_back(std::move(r));
    }
    for (DroppedRow& r : d) {
      r.meta_index = video_index[r.meta_index];
      if (dropped) dropped->push_back(std::move(r));
    }
  }
  std::sort(out.begin(), out.end(), [](const TrainRow& a, const TrainRow& b) { return a.meta_index < b.meta_index; });
  return out;
}

std::string bucket_key(const TrainRow& row, bool enable_bucket) {
  if (!row.latent_path.empty()) {
    // Latent files batch only with files of the same shape: they cannot be resized.
    std::string k = "latent";
    for (int64_t d : row.latent_shape) {
      k += ':';
      k += std::to_string(d);
    }
    return k;
  }
  if (!enable_bucket) return row.image ? "image:square" : "video:square";
  const size_t k = dataset::nearest_bucket(static_cast<double>(row.height) / static_cast<double>(row.width));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s:%g", row.image ? "image" : "video", dataset::aspect_ratio_512()[k].key);
  return buf;
}

static std::vector<std::string> keys_of(const std::vector<TrainRow>& rows, bool enable_bucket) {
  std::vector<std::string> keys;
  keys.reserve(rows.size());
  for (const auto& r : rows) keys.push_back(bucket_key(r, enable_bucket));
  return keys;
}

ClipLoader::ClipLoader(std::vector<TrainRow> rows, LoaderOptions options, SkipCallback on_skip)
    : rows_(std::move(rows)),
      opt_(std::move(options)),
      on_skip_(std::move(on_skip)),
      sampler_(keys_of(rows_, opt_.enable_bucket), opt_.batch_size, opt_.seed, opt_.rank, opt_.world) {
  if (opt_.prefetch <= 0) opt_.prefetch = std::max(2, 2 * opt_.workers);
}

ClipLoader::~ClipLoader() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (auto& t : threads_) t.join();
}

void ClipLoader::restore(const LoaderCursor& cursor) {
  std::lock_guard<std::mutex> lk(mu_);
  if (!threads_.empty() || next_deliver_ > 0) throw Error("ClipLoader::restore after the first batch");
  sampler_.restore(cursor);
}

int64_t ClipLoader::failed_rows() const {
  std::lock_guard<std::mutex> lk(const_cast<std::mutex&>(mu_));
  return static_cast<int64_t>(failed_.size());
}

bool ClipLoader::known_failed(int64_t row) {
  std::lock_guard<std::mutex> lk(mu_);
  return failed_.count(row) > 0;
}

void ClipLoader::mark_failed(int64_t row, const std::string& file, const std::string& reason) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    first = failed_.insert(row).second;
  }
  if (first && on_skip_) on_skip_(file, reason);
}

// The random_hw_adapt ratio r (docs/design/upsampler-training.md §4.3) from the batch stream.
static double draw_hw_ratio(int64_t S, Rng& rng) {
  auto [choices, probs] = dataset::hw_adapt_choices(S);
  if (choices.size() <= 1) return 1.0;
  const double u = rng.uniform();
  double acc = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    acc += probs[i];
    if (u < acc) return choices[i];
  }
  return choices.back();
}

Batch ClipLoader::make_batch(const BatchPlan& plan) {
  Batch b;
  b.plan = plan;
  Rng batch_rng = Rng::keyed(opt_.seed, "batch", plan.epoch, plan.batch_in_epoch);
  b.hw_ratio = opt_.random_hw_adapt ? draw_hw_ratio(opt_.sample_size, batch_rng) : 1.0;
  const int64_t n_rows = static_cast<int64_t>(rows_.size());

  std::vector<torch::Tensor> clips, latents, ys;
  std::vector<Rng> clip_rngs;  // each clip's stream continues into its degradation draws
  bool sized = false;
  for (const SampleRef& item : plan.items) {
    std::string last_error;
    for (int attempt = 0;; ++attempt) {
      if (attempt > 64) throw Error("no replacement row decodes after 64 attempts (last: " + last_error + ")");
      Rng rng = Rng::keyed(opt_.seed, "clip", item.epoch, item.pos, attempt);
      // A failed row is replaced by one drawn uniformly over all rows (docs/design/upsampler-training.md §3.2 [D]).
      const int64_t row = attempt == 0 ? item.row : rng.uniform_int(0, n_rows - 1);
      if (known_failed(row)) continue;
      const TrainRow& tr = rows_[static_cast<size_t>(row)];
      if (!tr.latent_path.empty()) {
        // Checked at the start of the run; a file that breaks later stops it (a replacement row
        // from another bucket could not join this batch).
        if (attempt > 0) continue;
        auto sd = io::read_safetensors(tr.latent_path);
        auto z = sd.find("latents");
        if (z == sd.end() || z->second.sizes().vec() != tr.latent_shape)
          throw Error(tr.latent_path + ": 'latents' changed since the start of the run");
        auto y = sd.find("y");
        if (!latents.empty() && (y != sd.end()) != !ys.empty())
          throw Error(tr.latent_path + ": some latent files of this bucket have 'y' and some not");
        latents.push_back(z->second.to(torch::kFloat).clone());
        if (y != sd.end()) ys.push_back(y->second.to(torch::kFloat).clone());
        ClipInfo info;
        info.meta_index = tr.meta_index;
        info.file = tr.latent_path;
        b.clips.push_back(std::move(info));
        break;
      }
      std::vector<int64_t> idx{0};
      if (!tr.window.empty()) {
        idx = tr.window;
        for (auto& i : idx) i += tr.first_frame;
      } else if (!tr.image) {
        dataset::ClipPlan cp = dataset::plan_clip(tr.frames, opt_.n_frames, opt_.stride);
        if (cp.n == 0) {
          mark_failed(row, tr.path, "too short");
          continue;
        }
        int64_t start = 0;
        if (opt_.start_at_zero) {
          // start stays 0
        } else if (opt_.frames_per_row) {
          Rng row_rng = Rng::keyed(opt_.seed, "row", row);
          start = row_rng.uniform_int(0, cp.max_start);
        } else {
          start = rng.uniform_int(0, cp.max_start);
        }
        idx = dataset::clip_indices(cp, start);
        for (auto& i : idx) i += tr.first_frame;
      }
      // docs/design/upsampler-training.md §4.2 step 3: the first clip's size picks the batch's bucket.
      dataset::BucketSize size = sized ? b.size
                                       : dataset::bucket_size(tr.height, tr.width, opt_.sample_size, opt_.scale,
                                                              b.hw_ratio, opt_.enable_bucket);
      torch::Tensor x;
      try {
        x = read_clip(tr.path, idx, size.H, size.W);
      } catch (const std::exception& e) {
        last_error = e.what();
        mark_failed(row, tr.path, e.what());
        continue;
      }
      if (!sized) {
        b.size = size;
        sized = true;
      }
      ClipInfo info;
      info.meta_index = tr.meta_index;
      info.file = tr.path;
      info.frames = idx;
      info.attempts = attempt;
      b.clips.push_back(std::move(info));
      clips.push_back(x);
      clip_rngs.push_back(rng);
      break;
    }
  }

  if (!latents.empty()) {
    if (!clips.empty()) throw Error("a batch mixes latent files and videos");
    b.latents = torch::stack(latents);
    if (!ys.empty()) b.y = torch::stack(ys);
    return b;
  }
  int64_t shortest = clips.front().size(1);
  for (const auto& c : clips) shortest = std::min<int64_t>(shortest, c.size(1));
  const int64_t L = dataset::batch_frames(opt_.n_frames, shortest);
  namespace F = torch::nn::functional;
  std::vector<torch::Tensor> hr, lr;
  for (size_t i = 0; i < clips.size(); ++i) {
    torch::Tensor x = clips[i].narrow(1, 0, L).contiguous();
    torch::Tensor src = x;
    if (opt_.degradation) {
      DegradationResult d = degrade_clip(x, opt_.min_ops, opt_.max_ops, clip_rngs[i]);
      src = d.clip;
      for (const auto& op : d.ops) b.clips[i].degradation.push_back(op.name);
    }
    // Frame-wise bilinear down, align_corners false, no antialias (docs/design/upsampler-training.md §4.2 step 7).
    // On one OpenMP thread, as in a decode worker: LibTorch 2.x's bilinear kernel rounds differently
    // with the number of threads (1e-5), and a batch must not depend on the worker count.
    const OneOmpThread one_thread;
    torch::Tensor low =
        F::interpolate(src.permute({1, 0, 2, 3}), F::InterpolateFuncOptions()
                                                      .size(std::vector<int64_t>{b.size.h_lr, b.size.w_lr})
                                                      .mode(torch::kBilinear)
                                                      .align_corners(false))
            .permute({1, 0, 2, 3});
    hr.push_back(x);
    lr.push_back(low);
  }
  b.x_hr = torch::stack(hr).contiguous();
  b.x_lr = torch::stack(lr).contiguous();
  return b;
}

void ClipLoader::start_workers() {
  for (int i = 0; i < opt_.workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

void ClipLoader::worker_loop() {
  // One OpenMP thread per decode worker: the training thread owns the cores, and nested
  // spinning teams cost far more than they give on a small machine.
  (void)at::get_num_threads();  // ATen's lazy per-thread init first, or it would undo ours
  if (omp_set_num_threads) omp_set_num_threads(1);
  torch::NoGradGuard no_grad;
  for (;;) {
    BatchPlan plan;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_work_.wait(lk, [&] { return stop_ || next_plan_ - next_deliver_ < opt_.prefetch; });
      if (stop_) return;
      plan = sampler_.next();
      ++next_plan_;
    }
    try {
      Batch b = make_batch(plan);
      std::lock_guard<std::mutex> lk(mu_);
      done_.emplace(plan.seq, std::move(b));
    } catch (...) {
      std::lock_guard<std::mutex> lk(mu_);
      errors_.emplace(plan.seq, std::current_exception());
    }
    cv_done_.notify_all();
  }
}

size_t ClipLoader::batches_ready() const {
  std::lock_guard<std::mutex> lk(mu_);
  return done_.size();
}

Batch ClipLoader::next() {
  if (opt_.workers <= 0) {
    torch::NoGradGuard no_grad;
    BatchPlan plan = sampler_.next();
    ++next_deliver_;
    return make_batch(plan);
  }
  std::unique_lock<std::mutex> lk(mu_);
  if (threads_.empty()) start_workers();
  const auto t0 = std::chrono::steady_clock::now();
  cv_done_.wait(lk, [&] { return done_.count(next_deliver_) > 0 || errors_.count(next_deliver_) > 0; });
  wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto err = errors_.find(next_deliver_);
  if (err != errors_.end()) {
    std::exception_ptr e = err->second;
    errors_.erase(err);
    ++next_deliver_;
    cv_work_.notify_all();
    std::rethrow_exception(e);
  }
  auto it = done_.find(next_deliver_);
  Batch b = std::move(it->second);
  done_.erase(it);
  ++next_deliver_;
  cv_work_.notify_all();
  return b;
}

}  // namespace ws::data
