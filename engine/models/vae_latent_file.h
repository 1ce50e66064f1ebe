// SPDX-License-Identifier: Apache-2.0
// Latent files (docs/design/wan21-vae.md §7): `latents` [z, F, h, w] in a .safetensors whose
// __metadata__ says which VAE made them (type, z_dim, weights sha256, config) and from what
// (the file's frame indices, the pixel size). `vae encode`, `encode-latents` and train-experts'
// latent rows share the format.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "models/wan_vae_config.h"

namespace ws::models {

// The metadata of a latent file of a [T, H, W] clip; `frame_indices` are the source file's frames
// (0..T-1 when empty), `vae_name` the weights' file name.
std::map<std::string, std::string> latent_file_metadata(const std::string& vae_sha256, const std::string& vae_name,
                                                        const WanVaeConfig& cfg, int64_t frames, int64_t height,
                                                        int64_t width, const std::vector<int64_t>& frame_indices = {});

// A latent file whose metadata names the other VAE type, or whose channels are not the VAE's
// z_dim: "Z: latents have 16 channels (wan2.1) but the VAE is wan2.2 (z_dim 48)".
void check_latent_file_type(const std::string& path, int64_t channels, const WanVaeConfig& cfg);

}  // namespace ws::models
