// SPDX-License-Identifier: Apache-2.0
// The latents the experts train on (docs/design/dual-expert-training.md §9): a row's own latent
// file, a latent-cache entry, or the frozen VAE's encoding of the decoded clip (for i2v also of
// its first-frame clip). The cache stores `latents` (and i2v's `image_latents`) per clip.
#pragma once
#include <torch/torch.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "data/clip_loader.h"
#include "models/wan_vae.h"
#include "models/wan_dit_config.h"
#include "train/experts/expert_conditioning.h"
#include "train/latent_cache.h"

namespace ws::train {

// A micro-batch's latents: z [B, C, F, h, w] and, for i2v, the encodings of the first-frame
// clips (`image`) or the latent files' own `y`.
struct ExpertLatents {
  torch::Tensor z, image, y;
};

// Rows with latent files must fit the experts: out_dim channels, even h and w (patch 2).
void check_expert_latent_rows(const std::vector<data::TrainRow>& rows, const std::string& meta_path,
                              const models::WanConfig& config);

class ExpertLatentSource {
 public:
  // `vae` may be null when every row brings its latent file. With `cache_dir` (and a VAE) the
  // encodings are cached, keyed by content and the VAE weights (`vae_file` is hashed once).
  ExpertLatentSource(models::WanVae* vae, const std::string& vae_file, ImageConditioning cond,
                     const std::optional<std::string>& cache_dir);
  // A training batch: the files' latents, else the cache, else the VAE (then stored).
  ExpertLatents of(const data::Batch& batch);
  // Without the cache: the files' latents or the VAE (the eval set).
  ExpertLatents direct(const data::Batch& batch);
  bool cached() const { return cache_ != nullptr; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  ExpertLatents encode_batch(const torch::Tensor& x_hr);
  torch::Tensor encode(const torch::Tensor& x);

  models::WanVae* vae_;
  ImageConditioning cond_;
  std::unique_ptr<LatentCache> cache_;
  std::string vae_sha_;
  std::atomic<int64_t> hits_{0}, misses_{0};  // read by the step while the next batch is encoded ahead
};

}  // namespace ws::train
