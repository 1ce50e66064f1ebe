// SPDX-License-Identifier: Apache-2.0
// The Wan VAE for the rest of the engine, either type (docs/design/wan22-vae.md,
// docs/design/wan21-vae.md): video [B, 3, T, H, W] in [-1, 1] <-> normalised latent
// [B, z, 1 + (T−1)/4, H/f, W/f] (wan2.2: z 48, f 16; wan2.1: z 16, f 8). The network itself is
// in wan_vae_net.h; this wrapper loads weights strictly by official key names, detects the type,
// checks shapes, applies the normalisation, the decoder clamp, optional tiled decoding and
// device options.
#pragma once
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "io/state_dict.h"
#include "models/wan_vae_config.h"
#include "models/wan_vae_net.h"

namespace ws::models {

struct WanVaeOptions {
  std::string device = "cpu";  // "cuda" / "cuda:N" in CUDA builds
  bool bf16 = false;           // CUDA only: bf16 weights and activations, fp32 outputs
  bool low_vram = false;       // CUDA only: weights live on the CPU and visit the GPU per call
  // docs/design/wan22-vae.md §12 decode tiling: latent tiles of `tile`² positions overlapping by `tile_overlap`,
  // each decoded over the whole clip and blended linearly in pixel space. Not exact.
  bool tiled_decode = false;
  int64_t tile = 32, tile_overlap = 8;
  vae::Schedule schedule;  // chunking; the default is the reference's
  // CPU fp32: conv weights live in oneDNN's blocked layout (no per-call reorder; the module's
  // weight parameters become placeholders, state_dict() unpacks them).
  bool pack_weights = true;
  // With packing, on a CPU with oneDNN's Winograd kernels: the causal 3×3×3 convs run on them as
  // temporal taps (wan22-vae.md §4); false keeps the direct kernels (to compare).
  bool winograd = true;
  // Decoding only (`vae decode`, `bench vae-decode`): the encoder's weights are dropped before they
  // are initialised, packed or moved, so they cost no memory; encode() is an error.
  bool decoder_only = false;
  // Encoding only (`vae encode`, `encode-latents`, `bench vae-encode`): the same for the decoder;
  // decode() is an error.
  bool encoder_only = false;
  // CUDA only: 3-D conv weights (and so their inputs and outputs) in channels-last order, the layout
  // cuDNN's bf16 kernels run natively.
  bool channels_last = true;
};

struct VaeEncodeOutput {
  torch::Tensor enc_raw;      // Encoder3d output [B, 2z, N, h, w]
  torch::Tensor mu, log_var;  // top-level conv1 output split; mu is un-normalised
  torch::Tensor latent;       // (mu − mean) · (1/std): what the DiT and the upsampler see
};

class WanVae {
 public:
  // The type comes from the weights (a declared `config["vae_type"]` or metadata vae_type must
  // agree). Widths: `config` keys (a model YAML, a fixture), then the weights' `__metadata__`
  // "config" entry (JSON), then the shapes, then the released widths (models/wan_vae_weights.h).
  // Loading is strict: a missing, unexpected or mis-shaped key is a ws::Error naming it.
  static std::unique_ptr<WanVae> load(const std::string& weights_path,
                                      const nlohmann::json& config = nlohmann::json::object(),
                                      const WanVaeOptions& opts = {});
  static std::unique_ptr<WanVae> from_state_dict(const io::StateDict& sd, const WanVaeConfig& config,
                                                 const std::string& source, const WanVaeOptions& opts = {});
  // Fresh initialisation (docs/design/wan22-vae.md §12) from `seed`: tests, benchmarks, train-vae.
  static std::unique_ptr<WanVae> random(const WanVaeConfig& config, uint64_t seed, const WanVaeOptions& opts = {});
  static WanVaeConfig resolve_config(const std::string& weights_path, const nlohmann::json& config);

  // x: [B, 3, T, H, W] in [-1, 1], T = 1 + 4k, H and W multiples of the spatial factor (16 or 8).
  // Returns fp32 on x's device.
  torch::Tensor encode(const torch::Tensor& x);
  VaeEncodeOutput encode_full(const torch::Tensor& x);
  // latent: normalised [B, z, N, h, w] -> [B, 3, 1 + 4(N−1), f·h, f·w] fp32, clamped to [-1, 1]
  // when asked (what Wan2_x_VAE.decode returns).
  torch::Tensor decode(const torch::Tensor& latent, bool clamp = true);

  // Normalisation constants (default: the published ones for wan2.2 z_dim 48 and wan2.1 z_dim 16,
  // the identity otherwise). Throws unless both have z_dim entries.
  void set_latent_stats(const std::vector<double>& mean, const std::vector<double>& std);
  // Schedule and tiling may change between calls; device, dtype and packing are fixed at load.
  WanVaeOptions& options() { return opts_; }
  const WanVaeConfig& config() const { return cfg_; }
  VaeType type() const { return cfg_.type; }
  int64_t z_dim() const { return cfg_.z_dim; }
  int64_t spatial_factor() const { return cfg_.spatial_factor(); }
  int64_t parameter_count() const;
  // The network; on the CPU its packed conv weights are placeholders (use state_dict()).
  vae::WanVAEImpl& net() { return *net_; }
  io::StateDict state_dict() const;

  // Shape checks (a ws::Error naming `what` and the shape); the static forms let callers
  // fail before loading anything.
  void check_video(const torch::Tensor& x, const std::string& what = "VAE encode") const;
  void check_latent(const torch::Tensor& z, const std::string& what = "VAE decode") const;
  static void check_video(const WanVaeConfig& cfg, const torch::Tensor& x, const std::string& what);
  static void check_latent(const WanVaeConfig& cfg, const torch::Tensor& z, const std::string& what);

 private:
  WanVae(const WanVaeConfig& cfg, const WanVaeOptions& opts, bool initialise);
  bool cpu_inference() const;  // false only for a usable CUDA device
  vae::Half unused_half() const;
  void setup_device();
  torch::Tensor decode_tiled(const torch::Tensor& z);

  WanVaeConfig cfg_;
  WanVaeOptions opts_;
  std::shared_ptr<vae::WanVAEImpl> net_;
  torch::Tensor mean_, inv_std_;  // fp32 [1, z, 1, 1, 1] on the CPU
  torch::Device device_{torch::kCPU};
  torch::Dtype dtype_ = torch::kFloat;
  bool low_vram_ = false;
  friend struct VaeCallScope;
};

}  // namespace ws::models
