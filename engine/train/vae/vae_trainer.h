// SPDX-License-Identifier: Apache-2.0
// `train-vae` (docs/design/wan22-vae.md §12): trains every parameter of a Wan2.2 VAE of the real
// architecture, normally the tiny widths the demo ships with. Loss per clip:
// mean((decode(z) − x)²) + kl_weight · KL with z = mu + exp(0.5·log_var)·ε in the
// un-normalised latent space, the decoder starting at conv2 and its output not clamped.
// The trainer (train/vae/vae_run.cpp) owns events and the run folder; this file holds the
// loss, the optimizer update, the clip sampler and the weights file, so tests drive the same
// code. The options are in train/vae/vae_options.h.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataset/metadata.h"
#include "models/wan_vae.h"
#include "train/adamw.h"
#include "train/grad_clip.h"
#include "train/lr_schedule.h"

namespace ws::train {

// configs/tiny/vae.yaml: the released layout with dim 4, dec_dim 6 (486,082 parameters).
models::WanVaeConfig tiny_vae_config();

// The docs/design/wan22-vae.md §12 loss of clips of one length, x [B, 3, T, H, W] in [-1, 1]. `loss` carries the
// graph; recon and kl are its detached terms (means over all elements).
struct VaeLoss {
  torch::Tensor loss, recon, kl;
};
VaeLoss vae_loss(models::vae::WanVAEImpl& net, const torch::Tensor& x, double kl_weight, at::Generator& noise,
                 const models::vae::Schedule& schedule = {0, 0});

struct VaeUpdateOptions {
  double learning_rate = 1e-4;
  AdamWOptions adam{0.9, 0.999, 1e-8, 1e-2};
  LrSchedule schedule;         // base_lr / training_steps filled by the caller
  double max_grad_norm = 1.0;  // ≤ 0: no clipping (the norm is still measured)
  double kl_weight = 1e-6;
  // The whole clip in one call: the same function as the reference's chunks (docs/design/wan22-vae.md §8) with fewer,
  // larger convolutions; the gradient flows through the cache either way.
  models::vae::Schedule chunking{0, 0};
};

struct VaeStepRecord {
  int64_t step = 0;                    // global step after this update
  double loss = 0, recon = 0, kl = 0;  // means over the batch's clips
  double lr = 0, grad_norm = 0;
  int64_t clips = 0;
};

class VaeUpdater {
 public:
  // Trains `vae`'s network in place (it must be unpacked: WanVaeOptions::pack_weights false).
  VaeUpdater(models::WanVae& vae, VaeUpdateOptions opts);
  // One optimizer update on `clips` ([3, T, H, W] each). Clips of the same length run as one
  // batch; every clip weighs the same in the loss. `noise_seed` seeds ε.
  VaeStepRecord step(const std::vector<torch::Tensor>& clips, uint64_t noise_seed);

  int64_t global_step() const { return global_step_; }
  void set_global_step(int64_t s) { global_step_ = s; }
  AdamW& optimizer() { return *optimizer_; }
  const VaeUpdateOptions& options() const { return opts_; }
  std::vector<torch::Tensor> params() const;

 private:
  models::WanVae& vae_;
  VaeUpdateOptions opts_;
  std::unique_ptr<AdamW> optimizer_;
  int64_t global_step_ = 0;
};

struct VaeDataOptions {
  int64_t size = 256;    // square crop edge (a multiple of 16)
  int64_t crop = 0;      // > 0: a random crop of this edge out of the size × size frames
  int64_t n_frames = 9;  // 4k + 1
  int64_t stride = 2;
  int64_t batch = 1;
  uint64_t seed = 42;
};

// Clips for VAE training: rows in a fresh random order every epoch, a random start per clip,
// frames resized to cover and center-cropped to size × size (then optionally a random
// crop × crop window: the content keeps the scale of `size` at a fraction of the cost), all
// from keyed random streams
// (the same step always gets the same clips, so resuming needs no loader state). Image rows
// are one-frame clips; a video shorter than n_frames gives its longest 4k + 1 prefix.
class VaeClipSampler {
 public:
  // Checks every row (needs video support); rows with problems are skipped with a warning.
  // Throws ws::Error when no row is usable.
  VaeClipSampler(dataset::Metadata meta, VaeDataOptions opts);
  // Rows known in advance (tests): frames per row (1 for images), no file checks.
  VaeClipSampler(dataset::Metadata meta, std::vector<int64_t> frames, VaeDataOptions opts);

  size_t rows() const { return usable_.size(); }
  size_t skipped() const { return skipped_; }
  // The clips of 0-based optimizer step `step`, [3, T, edge, edge] in [-1, 1]. A row that fails
  // to decode is dropped for the rest of the run (with a warning) and another is drawn.
  std::vector<torch::Tensor> batch(int64_t step);

 private:
  struct Row {
    size_t index;    // in meta_.rows
    int64_t frames;  // in the file (1 for images)
  };
  torch::Tensor read(const Row& r, int64_t step, int64_t slot);
  int64_t epoch_rows() const { return static_cast<int64_t>(usable_.size()); }
  dataset::Metadata meta_;
  VaeDataOptions opts_;
  std::vector<Row> usable_;
  std::vector<bool> failed_;
  size_t skipped_ = 0;
};

// The weights under the official key names with `__metadata__` {"config": widths JSON,
// "format": "pt"}, written atomically: WanVae::load reads it back with no other input.
void save_vae_weights(models::WanVae& vae, const std::string& path);
// WanVae::load for training: unpacked, parameters in their own (writable) memory.
std::unique_ptr<models::WanVae> load_vae_for_training(const std::string& path, const nlohmann::json& config);

}  // namespace ws::train
