// SPDX-License-Identifier: Apache-2.0
#include "models/vae_latent_file.h"

#include "core/error.h"
#include "io/weights.h"

namespace ws::models {

std::map<std::string, std::string> latent_file_metadata(const std::string& vae_sha256, const std::string& vae_name,
                                                        const WanVaeConfig& cfg, int64_t frames, int64_t height,
                                                        int64_t width, const std::vector<int64_t>& frame_indices) {
  std::map<std::string, std::string> m;
  m["format"] = "wanstudio-latents";
  m["layout"] = "[C,F,h,w]";
  m["normalised"] = "true";
  m["vae_weights"] = vae_name;
  m["vae_config"] = cfg.to_json().dump();
  m["vae_type"] = vae_type_name(cfg.type);
  m["z_dim"] = std::to_string(cfg.z_dim);
  if (!vae_sha256.empty()) m["vae_sha256"] = vae_sha256;
  // The file's frame indices (a stride skips some); 0..T-1 when the clip came as a tensor.
  std::string idx = "[";
  for (int64_t i = 0; i < frames; ++i) {
    if (i) idx += ',';
    idx += std::to_string(static_cast<size_t>(i) < frame_indices.size() ? frame_indices[static_cast<size_t>(i)] : i);
  }
  idx += ']';
  m["frame_indices"] = idx;
  m["pixel_frames"] = std::to_string(frames);
  m["pixel_height"] = std::to_string(height);
  m["pixel_width"] = std::to_string(width);
  return m;
}

void check_latent_file_type(const std::string& path, int64_t channels, const WanVaeConfig& cfg) {
  std::string file_type;
  if (auto meta = io::weights_metadata(path); meta.count("vae_type")) file_type = meta.at("vae_type");
  const bool type_differs = !file_type.empty() && file_type != vae_type_name(cfg.type);
  if (type_differs || channels != cfg.z_dim)
    throw Error(path + ": latents have " + std::to_string(channels) + " channels" +
                (file_type.empty() ? "" : " (" + file_type + ")") + " but the VAE is " + vae_type_name(cfg.type) +
                " (z_dim " + std::to_string(cfg.z_dim) + ")");
}

}  // namespace ws::models
