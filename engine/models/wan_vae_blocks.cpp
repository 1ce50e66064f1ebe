// SPDX-License-Identifier: Apache-2.0
#include "models/wan_vae_blocks.h"

#include <cmath>
#include <set>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "core/error.h"

namespace ws::models::vae {
namespace {

constexpr int64_t kCacheT = 2;  // frames a cached conv carries over (the reference's CACHE_T)

torch::Tensor new_param(torch::nn::Module& m, const std::string& name, std::vector<int64_t> shape,
                        const InitOptions& io) {
  return m.register_parameter(name, torch::empty(shape, io.tensor));
}

// PyTorch's default conv init, kaiming_uniform_(a=sqrt(5)) and the bias rule of
// torch.nn.ConvNd: both U(±1/sqrt(fan_in)), fan_in = in·k….
void init_conv(torch::Tensor& weight, torch::Tensor& bias) {
  torch::NoGradGuard no_grad;
  const double bound = 1.0 / std::sqrt(static_cast<double>(weight.numel() / weight.size(0)));
  weight.uniform_(-bound, bound);
  bias.uniform_(-bound, bound);
}

// weight [out, in, kernel...] and bias [out].
std::pair<torch::Tensor, torch::Tensor> conv_params(torch::nn::Module& m, int64_t in, int64_t out,
                                                    const std::vector<int64_t>& kernel, const InitOptions& io) {
  std::vector<int64_t> shape{out, in};
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  auto weight = new_param(m, "weight", shape, io);
  auto bias = new_param(m, "bias", {out}, io);
  if (io.initialise) init_conv(weight, bias);
  return {weight, bias};
}

}  // namespace

ConvImpl::ConvImpl(int64_t in, int64_t out, std::vector<int64_t> kernel, const InitOptions& io) {
  std::tie(weight, bias) = conv_params(*this, in, out, kernel, io);
}

void ConvImpl::init() { init_conv(weight, bias); }

CausalConv3dImpl::CausalConv3dImpl(int64_t in, int64_t out, Int3 kernel, Int3 padding, Int3 stride,
                                   const InitOptions& io)
    : kernel_(kernel), padding_(padding), stride_(stride) {
  std::tie(weight, bias) = conv_params(*this, in, out, {kernel[0], kernel[1], kernel[2]}, io);
}

void CausalConv3dImpl::init() {
  unpack();
  init_conv(weight, bias);
}

torch::Tensor CausalConv3dImpl::forward(const torch::Tensor& x) { return run(x, torch::Tensor()); }

torch::Tensor CausalConv3dImpl::forward_norm_silu(const torch::Tensor& x, const torch::Tensor& gamma) {
  return run(x, gamma);
}

torch::Tensor CausalConv3dImpl::run(const torch::Tensor& x, const torch::Tensor& gamma) {
  const Int3 spatial_pad{0, padding_[1], padding_[2]};
  const int64_t front = 2 * padding_[0];
  if (front == 0) {
    auto u = gamma.defined() ? rms_norm_silu(x, gamma) : x;
    if (kernel_ == Int3{1, 1, 1} && stride_ == Int3{1, 1, 1}) return pointwise_conv(u, weight, bias);
    return conv(u, spatial_pad);
  }
  const int64_t have = cache_.defined() ? cache_.size(2) : 0;
  const int64_t t = x.size(2);
  const int64_t keep = std::min<int64_t>(kCacheT, have + t);
  if (grad_path(x, weight, gamma) || grad_path(cache_)) {
    // Training: the same [zeros | cache | u] built out of place, so gradients flow through the
    // cache into earlier chunks (the whole clip is one causal conv, docs/design/wan22-vae.md §8).
    std::vector<torch::Tensor> parts;
    if (front > have) {
      auto sizes = x.sizes().vec();
      sizes[2] = front - have;
      parts.push_back(at::zeros(sizes, x.options()));
    }
    if (have) parts.push_back(cache_);
    parts.push_back(gamma.defined() ? rms_norm_silu(x, gamma) : x);
    auto buf = at::cat(parts, 2);
    cache_ = buf.narrow(2, front + t - keep, keep);
    return conv(buf, spatial_pad);
  }
  // [zeros | cache | u] in one buffer: the cache replaces as many front zero frames as it has.
  auto sizes = x.sizes().vec();
  sizes[2] = front + t;
  auto buf = at::empty(sizes, x.options());
  if (front > have) buf.narrow(2, 0, front - have).zero_();
  if (have) buf.narrow(2, front - have, have).copy_(cache_);
  auto slot = buf.narrow(2, front, t);
  if (gamma.defined()) rms_norm_silu_into(x, gamma, slot);
  else slot.copy_(x);
  // The new cache comes from real frames only (old cache + input), never from padding.
  cache_ = buf.narrow(2, front + t - keep, keep).clone(at::MemoryFormat::Contiguous);
  return conv(buf, spatial_pad);
}

torch::Tensor CausalConv3dImpl::conv(const torch::Tensor& buf, const Int3& spatial_pad) const {
  if (!taps_) return conv3d(buf, weight, bias, stride_, spatial_pad, packed_);
  if (packed_path(buf)) return packed_conv_causal(buf, packed_, bias, taps_);
  return conv3d(buf, dense_weight(), bias, stride_, spatial_pad);  // e.g. a grad-mode call: rare, slow, right
}

torch::Tensor CausalConv3dImpl::dense_weight() const {
  if (!packed_.defined()) return weight;
  if (!taps_) return packed_.to_dense();
  torch::NoGradGuard no_grad;
  auto plain = packed_.clone();
  unpack_(plain, *taps_);
  return plain;
}

void CausalConv3dImpl::pack(bool winograd) {
  if (packed_.defined() || kernel_ == Int3{1, 1, 1}) return;  // 1×1×1 convs are GEMMs already
  torch::NoGradGuard no_grad;
  torch::Tensor dense = weight.detach();
  // The causal 3×3×3 convs on Winograd's taps where the CPU and the channels allow: about a third
  // of the direct kernels' time at the released widths (docs/design/wan22-vae.md).
  if (winograd && kernel_ == Int3{3, 3, 3} && stride_ == Int3{1, 1, 1} && padding_ == Int3{1, 1, 1} &&
      packed_path(dense) && bias.defined())
    if (auto layout = choose_packed_layout(dense, /*winograd=*/true); layout && layout_is_winograd(*layout)) {
      packed_ = dense.contiguous().clone();
      pack_(packed_, *layout);
      taps_ = layout;
      weight.set_data(placeholder_like(weight));
      release_pages(dense);
      return;
    }
  weight.set_data(placeholder_like(weight));  // `dense` now holds the only reference
  packed_ = pack_conv3d_weight(dense, stride_, {0, padding_[1], padding_[2]});
  if (!packed_.defined()) weight.set_data(dense);
}

void CausalConv3dImpl::unpack() {
  if (!packed_.defined()) return;
  torch::NoGradGuard no_grad;
  weight.set_data(dense_weight());
  packed_ = torch::Tensor();
  taps_ = nullptr;
}

RMSNormImpl::RMSNormImpl(int64_t dim, bool images, const InitOptions& io) {
  gamma = new_param(*this, "gamma", images ? std::vector<int64_t>{dim, 1, 1} : std::vector<int64_t>{dim, 1, 1, 1}, io);
  if (io.initialise) init();
}

void RMSNormImpl::init() {
  torch::NoGradGuard no_grad;
  gamma.fill_(1.0);
}

ResidualBlockImpl::ResidualBlockImpl(int64_t in, int64_t out, const InitOptions& io) {
  auto residual = register_module("residual", std::make_shared<SeqImpl>());
  norm1_ = residual->register_module("0", std::make_shared<RMSNormImpl>(in, false, io));
  conv1_ = residual->register_module(
      "2", std::make_shared<CausalConv3dImpl>(in, out, Int3{3, 3, 3}, Int3{1, 1, 1}, Int3{1, 1, 1}, io));
  norm2_ = residual->register_module("3", std::make_shared<RMSNormImpl>(out, false, io));
  conv2_ = residual->register_module(
      "6", std::make_shared<CausalConv3dImpl>(out, out, Int3{3, 3, 3}, Int3{1, 1, 1}, Int3{1, 1, 1}, io));
  if (in != out)
    shortcut_ = register_module(
        "shortcut", std::make_shared<CausalConv3dImpl>(in, out, Int3{1, 1, 1}, Int3{0, 0, 0}, Int3{1, 1, 1}, io));
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  // Each k3 conv caches its own (post-SiLU) input; the 1×1×1 shortcut never caches.
  auto r = conv1_->forward_norm_silu(x, norm1_->gamma);
  r = conv2_->forward_norm_silu(r, norm2_->gamma);
  return r.add_(shortcut_ ? shortcut_->forward(x) : x);
}

AttentionBlockImpl::AttentionBlockImpl(int64_t dim, const InitOptions& io) {
  norm_ = register_module("norm", std::make_shared<RMSNormImpl>(dim, true, io));
  to_qkv_ = register_module("to_qkv", std::make_shared<ConvImpl>(dim, dim * 3, std::vector<int64_t>{1, 1}, io));
  proj_ = register_module("proj", std::make_shared<ConvImpl>(dim, dim, std::vector<int64_t>{1, 1}, io));
  if (io.initialise) zero_proj();
}

void AttentionBlockImpl::zero_proj() {
  torch::NoGradGuard no_grad;
  proj_->weight.zero_();  // the reference zero-initialises proj.weight (its bias keeps the default)
}

torch::Tensor AttentionBlockImpl::forward(const torch::Tensor& x) {
  // γ is [C,1,1] for the reference's (b t) c h w layout; here frames stay in [B,C,T,H,W].
  auto normed = rms_norm(x, norm_->gamma.view({x.size(1), 1, 1, 1}));
  return attention_frames(x, normed, to_qkv_->weight, to_qkv_->bias, proj_->weight, proj_->bias);
}

ResampleImpl::ResampleImpl(int64_t dim, ResampleMode mode, const InitOptions& io, int64_t out) : mode_(mode) {
  auto resample = register_module("resample", std::make_shared<SeqImpl>());
  conv_ = resample->register_module(
      "1", std::make_shared<ConvImpl>(dim, out < 0 ? dim : out, std::vector<int64_t>{3, 3}, io));
  if (mode == ResampleMode::Upsample3d)
    time_conv_ = register_module(
        "time_conv", std::make_shared<CausalConv3dImpl>(dim, dim * 2, Int3{3, 1, 1}, Int3{1, 0, 0}, Int3{1, 1, 1}, io));
  if (mode == ResampleMode::Downsample3d)
    time_conv_ = register_module(
        "time_conv", std::make_shared<CausalConv3dImpl>(dim, dim, Int3{3, 1, 1}, Int3{0, 0, 0}, Int3{2, 1, 1}, io));
}

void ResampleImpl::reset() {
  seen_first_ = false;
  prev_ = torch::Tensor();
}

bool ResampleImpl::upsampling() const { return mode_ == ResampleMode::Upsample2d || mode_ == ResampleMode::Upsample3d; }

torch::Tensor ResampleImpl::spatial(const torch::Tensor& x) const {
  if (upsampling()) {
    if (phase_packed_.defined() && packed_path(x)) return upsample_subpixel(x);
    return conv2d_frames(upsample_nearest2x(x), conv_->weight, conv_->bias, 1, 1);
  }
  // ZeroPad2d((0, 1, 0, 1)): one column right, one row at the bottom, then a stride-2 valid conv.
  return conv2d_frames(at::constant_pad_nd(x, {0, 1, 0, 1}, 0), conv_->weight, conv_->bias, 2, 0, packed_);
}

// Nearest ×2 then a 3×3 conv (padding 1) equals, for output pixel (2i + a, 2j + b), a 2×2 conv
// of the zero-padded input at (i + a, j + b) with taps summed along each axis: row taps
// {0 | 1 + 2} for a = 0 and {0 + 1 | 2} for a = 1. The four phases run as one conv with 4C
// outputs: 16 instead of 36 multiply-adds per input pixel and no 4× upsampled copy.
torch::Tensor ResampleImpl::upsample_subpixel(const torch::Tensor& x) const {
  const int64_t b = x.size(0), c = phase_bias_.size(0) / 4, t = x.size(2), h = x.size(3), w = x.size(4);
  auto y = conv3d(at::constant_pad_nd(x, {1, 1, 1, 1}, 0), torch::Tensor(), phase_bias_, {1, 1, 1}, {0, 0, 0},
                  phase_packed_);  // [B, 4C, T, h + 1, w + 1]
  auto out = at::empty({b, c, t, h * 2, w * 2}, x.options());
  auto grid = out.view({b, c, t, h, 2, w, 2});
  for (int64_t pa = 0; pa < 2; ++pa)
    for (int64_t pb = 0; pb < 2; ++pb)
      grid.select(6, pb).select(4, pa).copy_(y.narrow(1, (2 * pa + pb) * c, c).narrow(3, pa, h).narrow(4, pb, w));
  return out;
}

torch::Tensor ResampleImpl::dense_weight() const {
  return packed_.defined() ? packed_.to_dense().squeeze(2) : conv_->weight;
}

void ResampleImpl::pack() {
  if (packed_.defined() || phase_packed_.defined()) return;
  torch::NoGradGuard no_grad;
  if (upsampling()) {
    // Phase kernels, each tap summed in fp64 and rounded once: K_ab = R_a · W · R_bᵀ with
    // R_0 = [[1,0,0],[0,1,1]], R_1 = [[1,1,0],[0,0,1]]; output channel block 2a + b. Built tap
    // by tap so the transient memory is one [C, C] slice, not a copy of the kernel.
    static const int kR[2][2][3] = {{{1, 0, 0}, {0, 1, 1}}, {{1, 1, 0}, {0, 0, 1}}};
    const auto& w = conv_->weight;
    const int64_t co = w.size(0), ci = w.size(1);
    auto kernel = torch::empty({4 * co, ci, 1, 2, 2}, w.options());
    for (int pa = 0; pa < 2; ++pa)
      for (int pb = 0; pb < 2; ++pb)
        for (int r = 0; r < 2; ++r)
          for (int q = 0; q < 2; ++q) {
            auto acc = torch::zeros({co, ci}, w.options().dtype(torch::kDouble));
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx)
                if (kR[pa][r][ky] && kR[pb][q][kx]) acc.add_(w.select(3, kx).select(2, ky));
            kernel.narrow(0, (2 * pa + pb) * co, co).select(4, q).select(3, r).select(2, 0).copy_(acc);
          }
    phase_packed_ = pack_conv3d_weight(kernel, {1, 1, 1}, {0, 0, 0});
    if (phase_packed_.defined()) phase_bias_ = conv_->bias.detach().repeat({4});
    return;  // resample.1 stays dense: it is the state-dict tensor and the fallback path
  }
  torch::Tensor dense = conv_->weight.detach().unsqueeze(2);
  conv_->weight.set_data(placeholder_like(conv_->weight));
  packed_ = pack_conv3d_weight(dense, {1, 2, 2}, {0, 0, 0});
  if (!packed_.defined()) conv_->weight.set_data(dense.squeeze(2));
}

void ResampleImpl::unpack() {
  torch::NoGradGuard no_grad;
  if (packed_.defined()) conv_->weight.set_data(packed_.to_dense().squeeze(2));
  packed_ = phase_packed_ = phase_bias_ = torch::Tensor();
}

torch::Tensor ResampleImpl::forward(const torch::Tensor& input) {
  torch::Tensor x = input;
  if (mode_ == ResampleMode::Upsample3d) {
    // Rule C: frame 0 of the stream passes; later frames go through a causal time conv whose
    // 2C outputs become two frames (first C channels the even one).
    torch::Tensor first, rest = x;
    if (!seen_first_) {
      seen_first_ = true;
      first = x.narrow(2, 0, 1);
      rest = x.narrow(2, 1, x.size(2) - 1);
    }
    if (rest.size(2) > 0) {
      auto y = time_conv_->forward(rest);
      const int64_t b = y.size(0), c = y.size(1) / 2, t = y.size(2), h = y.size(3), w = y.size(4);
      y = y.view({b, 2, c, t, h, w}).permute({0, 2, 3, 1, 4, 5}).reshape({b, c, 2 * t, h, w});
      x = first.defined() ? at::cat({first, y}, 2) : y;
    } else {
      x = first;
    }
  }
  x = spatial(x);
  if (mode_ == ResampleMode::Downsample3d) {
    // Rule B: frame 0 of the stream passes; then a stride-2 valid time conv over
    // (previous frame, chunk), so chunks after the first must hold an even number of frames.
    torch::Tensor first, rest = x;
    if (!prev_.defined()) {
      first = x.narrow(2, 0, 1);
      prev_ = first.clone(at::MemoryFormat::Contiguous);
      rest = x.narrow(2, 1, x.size(2) - 1);
    }
    if (rest.size(2) % 2) throw Error("VAE encoder: a chunk after the first must have an even frame count here");
    if (rest.size(2) > 0) {
      auto y = time_conv_->forward(at::cat({prev_, rest}, 2));
      prev_ = rest.narrow(2, rest.size(2) - 1, 1).clone(at::MemoryFormat::Contiguous);
      x = first.defined() ? at::cat({first, y}, 2) : y;
    } else {
      x = first;
    }
  }
  return x;
}

DownBlockImpl::DownBlockImpl(int64_t in, int64_t out, int64_t num_res_blocks, bool temporal, bool down,
                             const InitOptions& io)
    : out_(out), ft_(temporal ? 2 : 1), fs_(down ? 2 : 1) {
  auto seq = register_module("downsamples", std::make_shared<SeqImpl>());
  int64_t ci = in;
  for (int64_t i = 0; i < num_res_blocks; ++i, ci = out)
    blocks_.push_back(seq->register_module(std::to_string(i), std::make_shared<ResidualBlockImpl>(ci, out, io)));
  if (down)
    resample_ = seq->register_module(
        std::to_string(num_res_blocks),
        std::make_shared<ResampleImpl>(out, temporal ? ResampleMode::Downsample3d : ResampleMode::Downsample2d, io));
}

torch::Tensor DownBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = x;
  for (auto& b : blocks_) h = b->forward(h);
  if (resample_) h = resample_->forward(h);
  // The last stage has no resampler, but its identity shortcut still adds x.
  return h.add_(avg_down3d(x, out_, ft_, fs_));
}

UpBlockImpl::UpBlockImpl(int64_t in, int64_t out, int64_t num_blocks, bool temporal, bool up, const InitOptions& io)
    : out_(out), ft_(temporal ? 2 : 1), fs_(up ? 2 : 1), up_(up) {
  auto seq = register_module("upsamples", std::make_shared<SeqImpl>());
  int64_t ci = in;
  for (int64_t i = 0; i < num_blocks; ++i, ci = out)
    blocks_.push_back(seq->register_module(std::to_string(i), std::make_shared<ResidualBlockImpl>(ci, out, io)));
  if (up)
    resample_ = seq->register_module(
        std::to_string(num_blocks),
        std::make_shared<ResampleImpl>(out, temporal ? ResampleMode::Upsample3d : ResampleMode::Upsample2d, io));
}

torch::Tensor UpBlockImpl::forward(const torch::Tensor& x, bool first_chunk) {
  torch::Tensor h = x;
  for (auto& b : blocks_) h = b->forward(h);
  if (!up_) return h;  // the last decoder stage has no shortcut at all
  h = resample_->forward(h);
  return h.add_(dup_up3d(x, out_, ft_, fs_, first_chunk));
}

void FlatStagesImpl::add_block(int64_t in, int64_t out, const InitOptions& io) {
  blocks_.push_back(register_module(std::to_string(blocks_.size()), std::make_shared<ResidualBlockImpl>(in, out, io)));
  resamples_.push_back(nullptr);
}

void FlatStagesImpl::add_resample(int64_t dim, ResampleMode mode, const InitOptions& io, int64_t out) {
  resamples_.push_back(
      register_module(std::to_string(resamples_.size()), std::make_shared<ResampleImpl>(dim, mode, io, out)));
  blocks_.push_back(nullptr);
}

torch::Tensor FlatStagesImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = x;
  for (size_t i = 0; i < blocks_.size(); ++i) h = blocks_[i] ? blocks_[i]->forward(h) : resamples_[i]->forward(h);
  return h;
}

void reset_streaming(torch::nn::Module& root) {
  for (const auto& m : root.modules(/*include_self=*/false)) {
    if (auto c = std::dynamic_pointer_cast<CausalConv3dImpl>(m)) c->reset();
    if (auto r = std::dynamic_pointer_cast<ResampleImpl>(m)) r->reset();
  }
}

namespace {

void init_leaf(const std::shared_ptr<torch::nn::Module>& m, bool pack, bool winograd) {
  if (auto c = std::dynamic_pointer_cast<CausalConv3dImpl>(m)) {
    c->init();
    if (pack) c->pack(winograd);
  } else if (auto cv = std::dynamic_pointer_cast<ConvImpl>(m)) {
    cv->init();
  } else if (auto n = std::dynamic_pointer_cast<RMSNormImpl>(m)) {
    n->init();
  }
}

}  // namespace

bool is_encoder_module(const std::string& name) {
  return name == "conv1" || name.rfind("conv1.", 0) == 0 || name == "encoder" || name.rfind("encoder.", 0) == 0;
}

bool is_decoder_module(const std::string& name) {
  return name == "conv2" || name.rfind("conv2.", 0) == 0 || name == "decoder" || name.rfind("decoder.", 0) == 0;
}

bool in_half(const std::string& name, Half skip) {
  return (skip == Half::encoder && is_encoder_module(name)) || (skip == Half::decoder && is_decoder_module(name));
}

void initialise_parameters(torch::nn::Module& root, bool pack, Half skip, bool winograd) {
  // In module order, each conv packed right after its init: with uninitialised (untouched)
  // storage underneath, memory grows by one packed kernel at a time and the later layers are
  // not yet resident while the early ones pack.
  std::set<const torch::nn::Module*> done;
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    if (in_half(item.key(), skip)) continue;
    const auto& m = item.value();
    if (done.count(m.get())) continue;
    // Blocks whose init or packing needs their children finished: do the children first.
    const bool resample = static_cast<bool>(std::dynamic_pointer_cast<ResampleImpl>(m));
    auto attn = std::dynamic_pointer_cast<AttentionBlockImpl>(m);
    if (resample || attn) {
      for (const auto& child : m->modules(/*include_self=*/false)) {
        init_leaf(child, pack, winograd);
        done.insert(child.get());
      }
      if (attn) attn->zero_proj();
      if (resample && pack) std::dynamic_pointer_cast<ResampleImpl>(m)->pack();
      continue;
    }
    init_leaf(m, pack, winograd);
  }
}

void pack_weights(torch::nn::Module& root, Half skip, bool winograd) {
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    if (in_half(item.key(), skip)) continue;
    const auto& m = item.value();
    if (auto c = std::dynamic_pointer_cast<CausalConv3dImpl>(m)) c->pack(winograd);
    if (auto r = std::dynamic_pointer_cast<ResampleImpl>(m)) r->pack();
  }
#ifdef __GLIBC__
  malloc_trim(0);  // the freed dense kernels leave holes in the heap (~120 MB at released widths)
#endif
}

void unpack_weights(torch::nn::Module& root) {
  for (const auto& m : root.modules(/*include_self=*/false)) {
    if (auto c = std::dynamic_pointer_cast<CausalConv3dImpl>(m)) c->unpack();
    if (auto r = std::dynamic_pointer_cast<ResampleImpl>(m)) r->unpack();
  }
}

}  // namespace ws::models::vae
