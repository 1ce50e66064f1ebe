// SPDX-License-Identifier: Apache-2.0
#include "models/wan_vae_net.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <string>

#include "core/interrupt.h"
#include "core/error.h"

namespace ws::models::vae {
namespace {

std::shared_ptr<CausalConv3dImpl> k3_conv(int64_t in, int64_t out, const InitOptions& io) {
  return std::make_shared<CausalConv3dImpl>(in, out, Int3{3, 3, 3}, Int3{1, 1, 1}, Int3{1, 1, 1}, io);
}

std::shared_ptr<CausalConv3dImpl> pointwise(int64_t in, int64_t out, const InitOptions& io) {
  return std::make_shared<CausalConv3dImpl>(in, out, Int3{1, 1, 1}, Int3{0, 0, 0}, Int3{1, 1, 1}, io);
}

// Streaming state never outlives one encode/decode call, even when it throws.
struct StreamingScope {
  explicit StreamingScope(torch::nn::Module& m) : m(m) { reset_streaming(m); }
  ~StreamingScope() { reset_streaming(m); }
  torch::nn::Module& m;
};

}  // namespace

Encoder3dImpl::Encoder3dImpl(const WanVaeConfig& cfg, const InitOptions& io) {
  const auto dims = cfg.encoder_dims();
  const size_t stages = cfg.dim_mult.size();
  conv1_ = register_module("conv1", k3_conv(cfg.encoder_in_channels(), dims[0], io));
  if (cfg.wan21()) {
    // Flat: every stage's blocks, then its resampler, under one index sequence.
    flat_ = register_module("downsamples", std::make_shared<FlatStagesImpl>());
    for (size_t i = 0; i < stages; ++i) {
      for (int64_t j = 0; j < cfg.num_res_blocks; ++j) flat_->add_block(j ? dims[i + 1] : dims[i], dims[i + 1], io);
      if (i + 1 != stages)
        flat_->add_resample(dims[i + 1], cfg.temporal_down(i) ? ResampleMode::Downsample3d : ResampleMode::Downsample2d,
                            io);
    }
  } else {
    auto downsamples = register_module("downsamples", std::make_shared<SeqImpl>());
    for (size_t i = 0; i < stages; ++i)
      stages_.push_back(downsamples->register_module(
          std::to_string(i), std::make_shared<DownBlockImpl>(dims[i], dims[i + 1], cfg.num_res_blocks,
                                                             cfg.temporal_down(i), i + 1 != stages, io)));
  }
  const int64_t c = dims.back();
  auto middle = register_module("middle", std::make_shared<SeqImpl>());
  mid1_ = middle->register_module("0", std::make_shared<ResidualBlockImpl>(c, c, io));
  attn_ = middle->register_module("1", std::make_shared<AttentionBlockImpl>(c, io));
  mid2_ = middle->register_module("2", std::make_shared<ResidualBlockImpl>(c, c, io));
  auto head = register_module("head", std::make_shared<SeqImpl>());
  head_norm_ = head->register_module("0", std::make_shared<RMSNormImpl>(c, false, io));
  head_conv_ = head->register_module("2", k3_conv(c, cfg.z_dim * 2, io));
}

torch::Tensor Encoder3dImpl::forward(const torch::Tensor& input) {
  auto x = conv1_->forward(input);
  if (flat_) x = flat_->forward(x);
  for (auto& s : stages_) {
    interruption_point();  // a stop asked for mid-encode ends within one stage
    x = s->forward(x);
  }
  x = mid2_->forward(attn_->forward(mid1_->forward(x)));
  return head_conv_->forward_norm_silu(x, head_norm_->gamma);
}

Decoder3dImpl::Decoder3dImpl(const WanVaeConfig& cfg, const InitOptions& io) {
  const auto dims = cfg.decoder_dims();
  const size_t stages = cfg.dim_mult.size();
  conv1_ = register_module("conv1", k3_conv(cfg.z_dim, dims[0], io));
  auto middle = register_module("middle", std::make_shared<SeqImpl>());
  mid1_ = middle->register_module("0", std::make_shared<ResidualBlockImpl>(dims[0], dims[0], io));
  attn_ = middle->register_module("1", std::make_shared<AttentionBlockImpl>(dims[0], io));
  mid2_ = middle->register_module("2", std::make_shared<ResidualBlockImpl>(dims[0], dims[0], io));
  if (cfg.wan21()) {
    flat_ = register_module("upsamples", std::make_shared<FlatStagesImpl>());
    for (size_t i = 0; i < stages; ++i) {
      for (int64_t j = 0; j <= cfg.num_res_blocks; ++j)
        flat_->add_block(j ? dims[i + 1] : cfg.decoder_stage_in(i), dims[i + 1], io);
      if (i + 1 != stages)  // the conv halves the width for the next stage
        flat_->add_resample(dims[i + 1], cfg.temporal_up(i) ? ResampleMode::Upsample3d : ResampleMode::Upsample2d, io,
                            dims[i + 1] / 2);
    }
  } else {
    auto upsamples = register_module("upsamples", std::make_shared<SeqImpl>());
    for (size_t i = 0; i < stages; ++i)
      stages_.push_back(upsamples->register_module(
          std::to_string(i), std::make_shared<UpBlockImpl>(dims[i], dims[i + 1], cfg.num_res_blocks + 1,
                                                           cfg.temporal_up(i), i + 1 != stages, io)));
  }
  auto head = register_module("head", std::make_shared<SeqImpl>());
  head_norm_ = head->register_module("0", std::make_shared<RMSNormImpl>(dims.back(), false, io));
  head_conv_ = head->register_module("2", k3_conv(dims.back(), cfg.decoder_out_channels(), io));
}

torch::Tensor Decoder3dImpl::forward(const torch::Tensor& input, bool first_chunk) {
  auto x = conv1_->forward(input);
  x = mid2_->forward(attn_->forward(mid1_->forward(x)));
  if (flat_) x = flat_->forward(x);
  for (auto& s : stages_) {
    interruption_point();
    x = s->forward(x, first_chunk);
  }
  return head_conv_->forward_norm_silu(x, head_norm_->gamma);
}

WanVAEImpl::WanVAEImpl(const WanVaeConfig& cfg, const InitOptions& io) : cfg_(cfg) {
  cfg.validate();
  encoder = register_module("encoder", std::make_shared<Encoder3dImpl>(cfg, io));
  conv1 = register_module("conv1", pointwise(cfg.z_dim * 2, cfg.z_dim * 2, io));
  conv2 = register_module("conv2", pointwise(cfg.z_dim, cfg.z_dim, io));
  decoder = register_module("decoder", std::make_shared<Decoder3dImpl>(cfg, io));
}

torch::Tensor WanVAEImpl::encode_raw(const torch::Tensor& x, const Schedule& s) {
  if (s.encode_frames < 0 || s.encode_frames % 4) throw Error("VAE encode: chunk length must be a multiple of 4");
  StreamingScope scope(*this);
  const int64_t t = x.size(2);
  std::vector<torch::Tensor> outs;
  for (int64_t start = 0; start < t;) {
    // Frame 0 alone, then chunks of `encode_frames` (0: everything at once).
    int64_t len = s.encode_frames == 0 ? t - start : start == 0 ? 1 : std::min(s.encode_frames, t - start);
    auto chunk = x.narrow(2, start, len);
    outs.push_back(encoder->forward(cfg_.wan21() ? chunk : patchify(chunk)));
    start += len;
  }
  return outs.size() == 1 ? outs[0] : at::cat(outs, 2);
}

std::pair<torch::Tensor, torch::Tensor> WanVAEImpl::moments(const torch::Tensor& enc_raw) {
  auto m = conv1->forward(enc_raw);
  return {m.narrow(1, 0, cfg_.z_dim).contiguous(), m.narrow(1, cfg_.z_dim, cfg_.z_dim).contiguous()};
}

torch::Tensor WanVAEImpl::decode_raw(const torch::Tensor& z, const Schedule& s) {
  if (s.decode_frames < 0) throw Error("VAE decode: chunk length must not be negative");
  StreamingScope scope(*this);
  auto x = conv2->forward(z);
  const int64_t n = x.size(2);
  const int64_t frames = 1 + cfg_.temporal_factor() * (n - 1), f = cfg_.spatial_factor();
  auto out = at::empty({x.size(0), 3, frames, x.size(3) * f, x.size(4) * f}, x.options());
  int64_t done = 0;
  for (int64_t start = 0; start < n;) {
    int64_t len = s.decode_frames == 0 ? n : std::min(s.decode_frames, n - start);
    // Pixels go straight into the output: activation memory stays bounded by one chunk.
    auto px = decoder->forward(x.narrow(2, start, len), start == 0);
    if (!cfg_.wan21()) px = unpatchify(px);
    if (done + px.size(2) > frames || px.size(3) != out.size(3) || px.size(4) != out.size(4))
      throw Error("VAE decode: internal frame count mismatch");
    out.narrow(2, done, px.size(2)).copy_(px);
    done += px.size(2);
    start += len;
#ifdef __GLIBC__
    malloc_trim(0);  // the chunk's freed blocks go back before the next chunk's peak
#endif
  }
  if (done != frames) throw Error("VAE decode: internal frame count mismatch");
  return out;
}

}  // namespace ws::models::vae
