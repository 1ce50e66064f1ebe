// SPDX-License-Identifier: Apache-2.0
// The latent cache (docs/design/upsampler-training.md §6.1 [D], `cache_latents`): z_hr / z_lr of a clip
// stored once as `<latent_cache_dir>/<sha256>.safetensors`, keyed by the file's content, the
// frames, the sizes, the resize settings and the VAE weights, so later epochs skip the VAE.
// Entries are written atomically; a corrupt or mismatching entry is recomputed, never trusted.
#pragma once
#include <torch/torch.h>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace ws::train {

class LatentCache {
 public:
  LatentCache(std::string dir, std::string vae_sha256);
  // The entry name for one clip: frames are the file's frame indices actually encoded.
  std::string key(const std::string& file, const std::vector<int64_t>& frames, int64_t H, int64_t W, int64_t h_lr,
                  int64_t w_lr);
  // [48, F, ·, ·] each; false when absent or unusable (then the caller encodes and stores).
  bool load(const std::string& key, torch::Tensor* z_hr, torch::Tensor* z_lr);
  void store(const std::string& key, const torch::Tensor& z_hr, const torch::Tensor& z_lr);
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string content_hash(const std::string& file);
  std::string dir_, vae_sha_;
  // (path, size, mtime ns, inode, ctime ns) -> content hash: a file is hashed once per run.
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>, std::string> file_hashes_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace ws::train
