// SPDX-License-Identifier: Apache-2.0
// The Wan2.2 VAE building blocks (docs/design/wan22-vae.md §4, §8) as torch::nn modules whose
// parameter names are the official state-dict keys. Parameter-free layers of the reference's
// nn.Sequential still take an index, so submodules are registered as "0", "2", "3", "6", ...
//
// Streaming: every cached conv keeps its own cache (docs/design/wan22-vae.md §8) and accepts chunks of any length, so
// the reference schedule (1 frame, then 4; one latent frame at a time) and a single
// whole-sequence chunk run through the same code. reset() clears every cache in a subtree.
#pragma once
#include <torch/torch.h>

#include <memory>

#include "models/packed_conv.h"
#include "models/wan_vae_ops.h"

namespace ws::models::vae {

// Parameters are created with `opts`; on the meta device nothing is allocated or initialised
// (shape checks and parameter counts of the released widths stay cheap).
struct InitOptions {
  torch::TensorOptions tensor = torch::TensorOptions().dtype(torch::kFloat);
  bool initialise =
      true;  // PyTorch's default conv init (docs/design/wan22-vae.md §12); false leaves memory uninitialised
};

// A module that only groups children under Sequential indices.
class SeqImpl : public torch::nn::Module {};

// Conv3d/Conv2d holding `weight` and `bias` with PyTorch's default init U(±1/sqrt(fan_in)).
class ConvImpl : public torch::nn::Module {
 public:
  ConvImpl(int64_t in, int64_t out, std::vector<int64_t> kernel, const InitOptions& io);
  void init();
  torch::Tensor weight, bias;
};

// docs/design/wan22-vae.md §4.1 + Rule A. Kernel (kt, k, k), declared padding (pt, p, p), stride (st, 1, 1). With a
// front padding (2·pt) > 0 the conv is cached: the last ≤ 2 input frames seen carry over.
class CausalConv3dImpl : public torch::nn::Module {
 public:
  CausalConv3dImpl(int64_t in, int64_t out, Int3 kernel, Int3 padding, Int3 stride, const InitOptions& io);
  torch::Tensor forward(const torch::Tensor& x);
  // conv(SiLU(RMS_norm(x, γ))), the norm written straight into the padded input buffer.
  torch::Tensor forward_norm_silu(const torch::Tensor& x, const torch::Tensor& gamma);
  void reset() { cache_ = torch::Tensor(); }
  void init();
  // CPU inference: the weight moves into oneDNN's layout and the parameter becomes a
  // placeholder of the same shape (no second copy); unpack() restores it. A causal 3×3×3 conv
  // whose channels come in 16s, on a CPU with oneDNN's Winograd kernels, is kept as its three
  // temporal taps and runs on them (packed_conv_causal); any other in oneDNN's 3-D order.
  void pack(bool winograd = true);
  void unpack();
  bool is_packed() const { return packed_.defined(); }
  bool on_winograd_taps() const { return taps_ != nullptr; }
  // The plain [O, I, kt, kh, kw] kernel, packed or not (a copy when packed).
  torch::Tensor dense_weight() const;
  torch::Tensor weight, bias;

 private:
  torch::Tensor run(const torch::Tensor& x, const torch::Tensor& gamma);
  torch::Tensor conv(const torch::Tensor& buf, const Int3& spatial_pad) const;
  Int3 kernel_, padding_, stride_;
  torch::Tensor cache_, packed_;
  PackedLayoutPtr taps_;  // set when packed_ holds Winograd taps rather than a oneDNN 3-D tensor
};

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, bool images, const InitOptions& io);
  void init();
  torch::Tensor gamma;
};

// docs/design/wan22-vae.md §4.4: norm → SiLU → conv → norm → SiLU → (dropout) → conv, plus the shortcut.
class ResidualBlockImpl : public torch::nn::Module {
 public:
  ResidualBlockImpl(int64_t in, int64_t out, const InitOptions& io);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  std::shared_ptr<RMSNormImpl> norm1_, norm2_;
  std::shared_ptr<CausalConv3dImpl> conv1_, conv2_, shortcut_;
};

// docs/design/wan22-vae.md §4.5: per-frame single-head self-attention with a residual add.
class AttentionBlockImpl : public torch::nn::Module {
 public:
  AttentionBlockImpl(int64_t dim, const InitOptions& io);
  torch::Tensor forward(const torch::Tensor& x);
  void zero_proj();

 private:
  std::shared_ptr<RMSNormImpl> norm_;
  std::shared_ptr<ConvImpl> to_qkv_, proj_;
};

enum class ResampleMode { Upsample2d, Upsample3d, Downsample2d, Downsample3d };

// docs/design/wan22-vae.md §4.6 with Rules B and C of docs/design/wan22-vae.md §8.
class ResampleImpl : public torch::nn::Module {
 public:
  // `out` < 0 means `dim`; the Wan2.1 VAE's upsampling convs go to dim / 2 (docs/design/wan21-vae.md §3.1).
  ResampleImpl(int64_t dim, ResampleMode mode, const InitOptions& io, int64_t out = -1);
  torch::Tensor forward(const torch::Tensor& x);
  void reset();
  // CPU inference: packs resample.1 (see CausalConv3dImpl::pack); the upsampling modes get the
  // sub-pixel form instead, whose dense kernel is rebuilt from resample.1 by unpack().
  void pack();
  void unpack();
  // resample.1's weight as the module holds it (the dense one even while packed).
  torch::Tensor dense_weight() const;

 private:
  bool upsampling() const;
  torch::Tensor spatial(const torch::Tensor& x) const;
  torch::Tensor upsample_subpixel(const torch::Tensor& x) const;
  ResampleMode mode_;
  torch::Tensor packed_;                         // downsampling modes: resample.1 packed, the parameter a placeholder
  torch::Tensor phase_packed_, phase_bias_;      // upsampling modes: nearest ×2 + 3×3 conv as 4 phases of 2×2
  std::shared_ptr<ConvImpl> conv_;               // resample.1
  std::shared_ptr<CausalConv3dImpl> time_conv_;  // 3d modes only
  bool seen_first_ = false;                      // upsample3d: frame 0 gets no time conv
  torch::Tensor prev_;                           // downsample3d: last spatially downsampled frame
};

// Encoder stage (Down_ResidualBlock): RBs (+ Resample) plus the AvgDown3D shortcut.
class DownBlockImpl : public torch::nn::Module {
 public:
  DownBlockImpl(int64_t in, int64_t out, int64_t num_res_blocks, bool temporal, bool down, const InitOptions& io);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  std::vector<std::shared_ptr<ResidualBlockImpl>> blocks_;
  std::shared_ptr<ResampleImpl> resample_;
  int64_t out_, ft_, fs_;
};

// Decoder stage (Up_ResidualBlock): RBs (+ Resample) plus the DupUp3D shortcut when it resamples.
class UpBlockImpl : public torch::nn::Module {
 public:
  UpBlockImpl(int64_t in, int64_t out, int64_t num_blocks, bool temporal, bool up, const InitOptions& io);
  torch::Tensor forward(const torch::Tensor& x, bool first_chunk);

 private:
  std::vector<std::shared_ptr<ResidualBlockImpl>> blocks_;
  std::shared_ptr<ResampleImpl> resample_;
  int64_t out_, ft_, fs_;
  bool up_;
};

// A flat list of residual blocks and resamplers registered under one Sequential (the Wan2.1
// VAE's `downsamples` / `upsamples`: indices run across stages, nothing is added around them).
class FlatStagesImpl : public torch::nn::Module {
 public:
  void add_block(int64_t in, int64_t out, const InitOptions& io);
  void add_resample(int64_t dim, ResampleMode mode, const InitOptions& io, int64_t out = -1);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  std::vector<std::shared_ptr<ResidualBlockImpl>> blocks_;  // null where the layer is a resample
  std::vector<std::shared_ptr<ResampleImpl>> resamples_;    // null where the layer is a block
};

// Clears the streaming state of every module under `root`.
void reset_streaming(torch::nn::Module& root);
// The half of a WanVAE a caller leaves out (decode-only or encode-only use): its tensors are never
// initialised, packed or moved.
enum class Half { none, encoder, decoder };
// Fresh initialisation (docs/design/wan22-vae.md §12) of every parameter under `root`, packing convs as it goes.
void initialise_parameters(torch::nn::Module& root, bool pack, Half skip = Half::none, bool winograd = true);
// Packs / unpacks every conv under `root` for CPU inference (see CausalConv3dImpl::pack).
void pack_weights(torch::nn::Module& root, Half skip = Half::none, bool winograd = true);
// Whether a WanVAE submodule name (`encoder...`, the top-level `conv1`) belongs to the encoding path.
bool is_encoder_module(const std::string& name);
// Whether it belongs to the decoding path (`decoder...`, the top-level `conv2`).
bool is_decoder_module(const std::string& name);
// Whether the submodule `name` is in the half `skip`.
bool in_half(const std::string& name, Half skip);
void unpack_weights(torch::nn::Module& root);

}  // namespace ws::models::vae
