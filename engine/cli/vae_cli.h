// SPDX-License-Identifier: Apache-2.0
// Helpers of the `vae` and `bench vae-*` verbs: clip tensors in .safetensors files, the latent
// file's __metadata__, thread setup.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "models/wan_vae_config.h"

namespace ws::cli {

// The first of `names` present in the file (or its only tensor), as fp32 [1, ...]: a
// [C, T, H, W] tensor gets a batch axis, a [1, C, T, H, W] one keeps it. `channels` >= 0
// checks C. Throws ws::Error naming the file.
torch::Tensor read_clip_tensor(const std::string& path, const std::vector<std::string>& names, int64_t channels);

// __metadata__ of a latent file: VAE type, z_dim, sha256, config, the frame indices read from the file
// (`frame_indices`; 0..T-1 when empty) and the pixel size of `video` [1, 3, T, H, W].
std::map<std::string, std::string> latent_metadata(const std::string& vae_path, const models::WanVaeConfig& cfg,
                                                   const torch::Tensor& video,
                                                   const std::vector<int64_t>& frame_indices = {});

// at::set_num_threads(n), or the machine's core count for n <= 0 (LibTorch may start with 1).
void vae_cli_threads(int64_t n);

}  // namespace ws::cli
