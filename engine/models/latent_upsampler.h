// SPDX-License-Identifier: Apache-2.0
// WanLatentUpsamplerModel (docs/design/latent-upsampler.md): upsamples normalised Wan2.2-VAE
// latents [B, 48, F, h, w] by a rational spatial scale (0.75, 1.5, 2, 4). Parameter and
// buffer names are the diffusers state-dict keys, so checkpoints load without a table.
#pragma once
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <map>
#include <string>

#include "io/state_dict.h"
#include "models/packed_conv.h"

namespace ws::models {

struct LatentUpsamplerConfig {
  int64_t in_channels = 48;
  int64_t mid_channels = 512;
  int64_t num_blocks_per_stage = 4;
  int64_t dims = 3;
  bool spatial_upsample = true;
  bool temporal_upsample = false;
  double rational_spatial_scale = 1.5;
  bool use_rational_resampler = true;

  // The (num, den) pair of the scale; throws ws::Error for an unsupported scale.
  std::pair<int64_t, int64_t> ratio() const;
  void validate() const;  // throws ws::Error with every problem in one line
  // Reads a diffusers config.json object: unknown keys ignored, wrong types are errors.
  static LatentUpsamplerConfig from_json(const nlohmann::json& j, const std::string& source = "config.json");
  nlohmann::json to_json() const;   // with _class_name / _diffusers_version
  int64_t parameter_count() const;  // analytic (docs/design/latent-upsampler.md §8)
};

// Conv with PyTorch's default init and diffusers' key names (`weight`, `bias`); 2-D or 3-D,
// 3×3(×3), stride 1, zero padding 1.
class ConvNdImpl : public torch::nn::Module {
 public:
  ConvNdImpl(int64_t dims, int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
  torch::Dtype compute = torch::kFloat;  // mixed precision: the conv runs in this dtype
  // Set while `weight` (and everything trained with it) is stored in oneDNN's blocked order.
  PackedLayoutPtr packed;

 private:
  int64_t dims_;
};
TORCH_MODULE(ConvNd);

class UpsamplerResBlockImpl : public torch::nn::Module {
 public:
  UpsamplerResBlockImpl(int64_t dims, int64_t channels);
  torch::Tensor forward(const torch::Tensor& x);
  ConvNd conv1{nullptr}, conv2{nullptr};
  torch::nn::GroupNorm norm1{nullptr}, norm2{nullptr};
};
TORCH_MODULE(UpsamplerResBlock);

// Frame-batched [N, M, h, w] -> [N, M, H', W'] (conv, pixel shuffle, blur + stride).
class SpatialResamplerImpl : public torch::nn::Module {
 public:
  SpatialResamplerImpl(int64_t channels, int64_t num, int64_t den, bool rational);
  torch::Tensor forward(const torch::Tensor& x, std::map<std::string, torch::Tensor>* inter = nullptr);
  int64_t num, den;
  bool rational;
  ConvNd conv{nullptr};                          // 2-D
  std::shared_ptr<torch::nn::Module> blur_down;  // holds buffer `kernel` [1,1,5,5]
  torch::Tensor kernel;
};
TORCH_MODULE(SpatialResampler);

class LatentUpsamplerImpl : public torch::nn::Module {
 public:
  explicit LatentUpsamplerImpl(const LatentUpsamplerConfig& cfg);
  // `inter` (optional) receives the intermediates the parity fixtures store.
  torch::Tensor forward(const torch::Tensor& x, std::map<std::string, torch::Tensor>* inter = nullptr);
  const LatentUpsamplerConfig& config() const { return cfg_; }
  // Recompute each ResBlock in backward instead of keeping its activations.
  void set_gradient_checkpointing(bool on) { checkpointing_ = on; }
  // Mixed precision as bf16 autocast does it: convs in `dt` (weights cast per call, so the
  // fp32 parameters stay the master copy and get fp32 gradients), GroupNorm in fp32, fp32 output.
  void set_compute_dtype(torch::Dtype dt);
  torch::Dtype compute_dtype() const { return compute_; }
  bool gradient_checkpointing() const { return checkpointing_; }

  ConvNd initial_conv{nullptr};
  torch::nn::GroupNorm initial_norm{nullptr};
  torch::nn::ModuleList res_blocks{nullptr}, post_upsample_res_blocks{nullptr};
  SpatialResampler upsampler{nullptr};
  ConvNd final_conv{nullptr};

 private:
  torch::Tensor run_block(UpsamplerResBlock& block, const torch::Tensor& x);
  LatentUpsamplerConfig cfg_;
  bool checkpointing_ = false;
  torch::Dtype compute_ = torch::kFloat;
};
TORCH_MODULE(LatentUpsampler);

// The fixed binomial blur kernel outer([1,4,6,4,1])/256 as [1,1,5,5].
torch::Tensor binomial_blur_kernel();

// Loads a `latent_upsampler/` directory (config.json + weights), a bare .safetensors/.pt
// with a config given separately, strictly. A missing blur kernel is rebuilt; one that
// differs from the binomial kernel gives a warning (returned in `warnings`).
LatentUpsampler load_latent_upsampler(const std::string& path, std::vector<std::string>* warnings = nullptr);
// Writes the diffusers directory form atomically (config.json + diffusion_pytorch_model.safetensors).
void save_latent_upsampler(LatentUpsampler& model, const std::string& dir, const nlohmann::json& extra_config = {});

}  // namespace ws::models
