// SPDX-License-Identifier: Apache-2.0
// The training loader (docs/design/upsampler-training.md §3–§5): the start-of-run row check, then batches
// decoded ahead by worker threads into a bounded queue, handed out strictly in sampler order.
// Every random draw comes from a keyed stream (data/random_streams.h), so a batch is a pure
// function of (rows, options, plan): the number of workers and their timing change nothing,
// and a restored cursor yields exactly the batches that followed it.
#pragma once
#include <torch/torch.h>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "data/bucket_sampler.h"
#include "dataset/buckets.h"
#include "dataset/frame_sampling.h"
#include "dataset/metadata.h"

namespace ws::data {

// A metadata row that passed the start check.
struct TrainRow {
  size_t meta_index = 0;
  std::string path;  // resolved file
  bool image = false;
  int64_t frames = 1;             // frames training may use (1 for images): the trim's length if any
  int64_t first_frame = 0;        // the trim's in point: frame indices are offset by it
  int64_t width = 0, height = 0;  // displayed size
  double fps = 0;                 // the file's frame rate, 0 when unknown
  // A fixed window (a frame_extraction other than random): the frames this sample trains on,
  // counted from the trim's in point. Empty: a window is drawn at random each epoch.
  std::vector<int64_t> window;
  // A row with its own latents (`latent_path`, docs/design/dual-expert-training.md §9) trains from that
  // file without decoding: `latents` [C, F, h, w] and, for i2v, `y`.
  std::string latent_path;
  std::vector<int64_t> latent_shape;  // [C, F, h, w]
};

struct DroppedRow {
  size_t meta_index = 0;
  std::string file;
  std::string reason;
};

// Checks every row (file, header, type, frame count vs stride) and returns those that can
// train; the others land in `dropped` with a reason.
std::vector<TrainRow> usable_rows(const dataset::Metadata& meta, int64_t stride, std::vector<DroppedRow>* dropped,
                                  const std::function<void(size_t, size_t)>& progress = {});

// The same with rows that name a latent file (`latent_path`, relative to the data folder):
// those are checked by the file (it must hold a 4-D `latents`), their video is not opened.
std::vector<TrainRow> usable_rows_with_latents(const dataset::Metadata& meta, int64_t stride,
                                               std::vector<DroppedRow>* dropped);
// The latent file a row names, resolved; empty when it names none.
std::string row_latent_path(const dataset::Metadata& meta, const dataset::MetaRow& row);

// One row per sample (docs/design/datasets.md §5): with a fixed frame extraction each window of a
// video row becomes its own TrainRow with `window` set; pictures, latent rows and `random` pass as
// they are. A video without any window lands in `dropped`.
std::vector<TrainRow> extraction_samples(std::vector<TrainRow> rows, int64_t n_frames, int64_t stride,
                                         const dataset::ExtractionRule& rule, std::vector<DroppedRow>* dropped);

struct LoaderOptions {
  uint64_t seed = 42;
  int64_t sample_size = 640;  // S
  int64_t n_frames = 81;      // N
  int64_t stride = 2;         // s
  double scale = 1.5;         // the model's rational_spatial_scale
  int64_t batch_size = 1;
  bool enable_bucket = true;
  bool random_hw_adapt = true;
  bool degradation = false;
  int64_t min_ops = 1, max_ops = 4;
  bool frames_per_row =
      false;  // latent cache: a row always trains on the same frames (docs/design/upsampler-training.md §6.1)
  bool start_at_zero = false;  // every clip from its first frame (the experts' eval set)
  int workers = 1;             // decode threads; 0 = decode on the caller's thread
  int prefetch = 0;            // batches decoded ahead (0: 2 per worker)
  int rank = 0, world = 1;
};

// Bucket key of a row: (type, nearest aspect key); one key for all when buckets are off.
std::string bucket_key(const TrainRow& row, bool enable_bucket);

struct ClipInfo {
  size_t meta_index = 0;
  std::string file;
  std::vector<int64_t> frames;           // indices in the file (before trimming to L)
  int attempts = 0;                      // > 0: this row replaced a failed one
  std::vector<std::string> degradation;  // op names applied
};

struct Batch {
  BatchPlan plan;
  torch::Tensor x_hr;  // [B, 3, L, H, W] in [-1, 1], clean
  torch::Tensor x_lr;  // [B, 3, L, h, w]: bilinear down (no antialias) of the (degraded) x_hr
  // Rows with latent files: x_hr/x_lr stay undefined and these hold the files' tensors.
  torch::Tensor latents;  // [B, C, F, h, w]
  torch::Tensor y;        // [B, C_y, F, h, w] when the files have `y`
  dataset::BucketSize size;
  double hw_ratio = 1.0;  // the random_hw_adapt r of this batch
  std::vector<ClipInfo> clips;
};

// Called (from any thread) when a row fails to decode: its file and the reason.
using SkipCallback = std::function<void(const std::string& file, const std::string& reason)>;

class ClipLoader {
 public:
  ClipLoader(std::vector<TrainRow> rows, LoaderOptions options, SkipCallback on_skip = {});
  ~ClipLoader();
  ClipLoader(const ClipLoader&) = delete;
  ClipLoader& operator=(const ClipLoader&) = delete;

  // Continue after `cursor` (before the first next()).
  void restore(const LoaderCursor& cursor);
  // The next batch in sampler order; blocks while it is being decoded. Rethrows a worker's error.
  Batch next();
  // Time next() spent waiting for data, summed (seconds).
  double wait_seconds() const { return wait_s_; }
  // Decode threads running (0 until the first next(), and with `workers` 0).
  int worker_threads() const { return static_cast<int>(threads_.size()); }
  // Batches decoded ahead and waiting for next().
  size_t batches_ready() const;
  int64_t failed_rows() const;
  const BucketSampler& sampler() const { return sampler_; }
  const std::vector<TrainRow>& rows() const { return rows_; }

  // The batch a plan describes (what the workers run). Public for tests and benchmarks.
  Batch make_batch(const BatchPlan& plan);

 private:
  void start_workers();
  void worker_loop();
  bool known_failed(int64_t row);
  void mark_failed(int64_t row, const std::string& file, const std::string& reason);

  std::vector<TrainRow> rows_;
  LoaderOptions opt_;
  SkipCallback on_skip_;
  BucketSampler sampler_;

  mutable std::mutex mu_;
  std::condition_variable cv_work_, cv_done_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  int64_t next_plan_ = 0;     // seq of the next plan handed to a worker
  int64_t next_deliver_ = 0;  // seq the consumer waits for
  std::map<int64_t, Batch> done_;
  std::map<int64_t, std::exception_ptr> errors_;
  std::set<int64_t> failed_;
  double wait_s_ = 0;
};

}  // namespace ws::data
