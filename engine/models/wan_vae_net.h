// SPDX-License-Identifier: Apache-2.0
// The Wan VAE network (`WanVAE_`, docs/design/wan22-vae.md §5-§7, docs/design/wan21-vae.md §3-§4)
// for both types: state-dict keys are the official ones (wan2.2
// `encoder.downsamples.1.downsamples.2.time_conv.weight`, wan2.1 `encoder.downsamples.5.time_conv.weight`).
// Streaming schedules live here; normalisation, checks and devices live in WanVae.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "models/wan_vae_blocks.h"
#include "models/wan_vae_config.h"

namespace ws::models::vae {

class Encoder3dImpl : public torch::nn::Module {
 public:
  Encoder3dImpl(const WanVaeConfig& cfg, const InitOptions& io);
  // One chunk of patchified frames [B, 12, t, H/2, W/2] (wan2.1: RGB [B, 3, t, H, W]) ->
  // [B, 2·z, t', H/f, W/f].
  torch::Tensor forward(const torch::Tensor& x);

 private:
  std::shared_ptr<CausalConv3dImpl> conv1_, head_conv_;
  std::vector<std::shared_ptr<DownBlockImpl>> stages_;  // wan2.2
  std::shared_ptr<FlatStagesImpl> flat_;                // wan2.1
  std::shared_ptr<ResidualBlockImpl> mid1_, mid2_;
  std::shared_ptr<AttentionBlockImpl> attn_;
  std::shared_ptr<RMSNormImpl> head_norm_;
};

class Decoder3dImpl : public torch::nn::Module {
 public:
  Decoder3dImpl(const WanVaeConfig& cfg, const InitOptions& io);
  // One chunk of latent frames (after conv2) -> patchified frames [B, 12, t', H/2, W/2]
  // (wan2.1: RGB [B, 3, t', H, W]).
  torch::Tensor forward(const torch::Tensor& x, bool first_chunk);

 private:
  std::shared_ptr<CausalConv3dImpl> conv1_, head_conv_;
  std::vector<std::shared_ptr<UpBlockImpl>> stages_;  // wan2.2
  std::shared_ptr<FlatStagesImpl> flat_;              // wan2.1
  std::shared_ptr<ResidualBlockImpl> mid1_, mid2_;
  std::shared_ptr<AttentionBlockImpl> attn_;
  std::shared_ptr<RMSNormImpl> head_norm_;
};

// How a clip is cut into chunks. The reference: encoder frame 0 alone, then 4 frames; decoder
// one latent frame at a time. 0 = the whole sequence in one chunk (same result, more memory).
struct Schedule {
  int64_t encode_frames = 4;  // pixel frames per encoder chunk after the first (a multiple of 4)
  int64_t decode_frames = 1;  // latent frames per decoder chunk
};

class WanVAEImpl : public torch::nn::Module {
 public:
  WanVAEImpl(const WanVaeConfig& cfg, const InitOptions& io);
  const WanVaeConfig& config() const { return cfg_; }

  // Encoder3d over all chunks of x [B, 3, T, H, W] (wan2.2: patchified chunk by chunk),
  // concatenated: [B, 2·z, 1 + (T−1)/4, H/f, W/f]. Shapes are the caller's to check.
  torch::Tensor encode_raw(const torch::Tensor& x, const Schedule& s);
  // Top-level conv1 on the encoder output: {mu, log_var}.
  std::pair<torch::Tensor, torch::Tensor> moments(const torch::Tensor& enc_raw);
  // Un-normalised latent z [B, z, N, h, w] -> conv2 -> Decoder3d chunks (-> unpatchify):
  // [B, 3, 1 + 4(N−1), f·h, f·w], not clamped.
  torch::Tensor decode_raw(const torch::Tensor& z, const Schedule& s);

  std::shared_ptr<Encoder3dImpl> encoder;
  std::shared_ptr<Decoder3dImpl> decoder;
  std::shared_ptr<CausalConv3dImpl> conv1, conv2;

 private:
  WanVaeConfig cfg_;
};

}  // namespace ws::models::vae
