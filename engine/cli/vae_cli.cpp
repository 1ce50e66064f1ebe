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

std::map<std::string, std::string> latent_metadata(const std::string& vae_path, const models::Wan22VaeConfig& cfg,
                                                   const torch::Tensor& video, const std::vector<int64_t>& frame_indices) {
  std::map<std::string, std::string> m;
  m["format"] = "wanstudio-latents";
  m["layout"] = "[C,F,h,w]";
  m["normalised"] = "true";
  m["vae_weights"] = fs::basename(vae_path);
  m["vae_config"] = cfg.to_json().dump();
  // Every size: the released VAEs (over 256 MiB) are the ones a cache must tell apart.
  if (!fs::is_dir(vae_path)) m["vae_sha256"] = sha256_file(vae_path);
  const int64_t t = video.size(2);
  // The file's frame indices (a stride skips some); 0..T-1 when the clip came as a tensor.
  std::string idx = "[";
  for (int64_t i = 0; i < t; ++i)
    idx += (i ? "," : "") + std::to_string(static_cast<size_t>(i) < frame_indices.size() ? frame_indices[static_cast<size_t>(i)] : i);
  m["frame_indices"] = idx + "]";
  m["pixel_frames"] = std::to_string(t);
  m["pixel_height"] = std::to_string(video.size(3));
  m["pixel_width"] = std::to_string(video.size(4));
  return m;
}

void vae_cli_threads(int64_t n) {
  if (n <= 0) n = std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
  at::set_num_threads(static_cast<int>(n));
}

}  // namespace ws::cli
