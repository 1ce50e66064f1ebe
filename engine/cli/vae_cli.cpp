// SPDX-License-Identifier: Apache-2.0
#include "cli/vae_cli.h"

#include <ATen/Parallel.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "io/safetensors.h"
#include "io/state_dict.h"
#include "models/vae_latent_file.h"

namespace ws::cli {

torch::Tensor read_clip_tensor(const std::string& path, const std::vector<std::string>& names, int64_t channels) {
  if (!fs::exists(path)) throw Error(path + ": file not found");
  io::StateDict sd = io::read_safetensors(path);
  torch::Tensor t;
  std::string used;
  for (const auto& n : names)
    if (sd.count(n)) {
      t = sd.at(n), used = n;
      break;
    }
  if (!t.defined() && sd.size() == 1) t = sd.begin()->second, used = sd.begin()->first;
  if (!t.defined()) {
    std::string want;
    for (const auto& n : names) want += (want.empty() ? "'" : ", '") + n + "'";
    throw Error(path + ": no tensor " + want + " (and more than one tensor to choose from)");
  }
  if (t.dim() == 4) t = t.unsqueeze(0);
  if (t.dim() != 5 || t.size(0) != 1 || (channels >= 0 && t.size(1) != channels))
    throw Error(path + ": tensor '" + used + "' is " + io::shape_str(t.sizes().vec()) + "; expected [" +
                (channels >= 0 ? std::to_string(channels) : std::string("C")) + ", T, H, W] (one clip)");
  if (!t.is_floating_point()) throw Error(path + ": tensor '" + used + "' must be floating point");
  return t.to(torch::kFloat).contiguous();
}

std::map<std::string, std::string> latent_metadata(const std::string& vae_path, const models::WanVaeConfig& cfg,
                                                   const torch::Tensor& video,
                                                   const std::vector<int64_t>& frame_indices) {
  // Every size is hashed: the released VAEs (over 256 MiB) are the ones a cache must tell apart.
  return models::latent_file_metadata(fs::is_dir(vae_path) ? std::string() : sha256_file(vae_path),
                                      fs::basename(vae_path), cfg, video.size(2), video.size(3), video.size(4),
                                      frame_indices);
}

void vae_cli_threads(int64_t n) {
  if (n <= 0) n = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  at::set_num_threads(static_cast<int>(n));
}

}  // namespace ws::cli
