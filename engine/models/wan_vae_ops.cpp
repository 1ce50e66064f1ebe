// SPDX-License-Identifier: Apache-2.0
#include "models/wan_vae_ops.h"

#include <c10/core/CPUAllocator.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ws::models::vae {
namespace {

// oneDNN has no autograd entry of its own in every LibTorch we build against, so only
// gradient-free dense fp32 CPU work takes the direct route; everything else lets
// at::convolution choose.
bool onednn_ready() {
  static const bool available = at::hasMKLDNN();
  return available && at::globalContext().userEnabledMkldnn();
}

bool direct_onednn(const torch::Tensor& x, const torch::Tensor& w) {
  if (!onednn_ready()) return false;
  if (!x.device().is_cpu() || x.scalar_type() != torch::kFloat || x.is_mkldnn() || x.is_sparse()) return false;
  if (w.defined() && (w.scalar_type() != torch::kFloat || w.is_mkldnn() || !w.device().is_cpu())) return false;
  return !(torch::GradMode::is_enabled() && (x.requires_grad() || (w.defined() && w.requires_grad())));
}

}  // namespace

bool packed_path(const torch::Tensor& x) { return direct_onednn(x, torch::Tensor()); }

bool grad_path(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& c) {
  if (!torch::GradMode::is_enabled()) return false;
  for (const auto* t : {&a, &b, &c})
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

torch::Tensor pack_conv3d_weight(torch::Tensor& w, Int3 stride, Int3 padding) {
  if (!onednn_ready() || !w.device().is_cpu() || w.scalar_type() != torch::kFloat) return {};
  torch::NoGradGuard no_grad;
  // Let go of the dense copy before the reorder: at most two copies of one kernel exist.
  torch::Tensor plain = w.contiguous().to_mkldnn();
  release_pages(w);
  w = torch::Tensor();
  try {
    return at::mkldnn_reorder_conv3d_weight(plain, padding, stride, {1, 1, 1}, 1);
  } catch (const c10::Error&) {
    w = plain.to_dense();  // a LibTorch without this path: keep the dense weight
    return {};
  }
}

torch::Tensor conv3d(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, Int3 stride, Int3 padding,
                     const torch::Tensor& packed) {
  if (packed.defined()) {
    if (packed_path(x)) return at::mkldnn_convolution(x.contiguous(), packed, b, padding, stride, {1, 1, 1}, 1);
    return conv3d(x, packed.to_dense(), b, stride, padding);  // e.g. a grad-mode call: rare, slow, right
  }
  if (direct_onednn(x, w))
    return at::mkldnn_convolution(x.contiguous(), w.contiguous(), b, padding, stride, {1, 1, 1}, 1);
  // A channels-last kernel (WanVaeOptions::channels_last on CUDA) gets its input in the same order,
  // so cuDNN runs NDHWC throughout instead of transposing per call.
  if (x.is_cuda() && w.dim() == 5 && !w.is_contiguous() && w.is_contiguous(at::MemoryFormat::ChannelsLast3d))
    return at::conv3d(x.contiguous(at::MemoryFormat::ChannelsLast3d), w, b, stride, padding);
  return at::conv3d(x, w, b, stride, padding);
}

torch::Tensor conv2d_frames(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, int64_t stride,
                            int64_t padding, const torch::Tensor& packed) {
  // A (1, kh, kw) 3-D kernel is a per-frame 2-D conv and needs no (b t) transposes.
  return conv3d(x, w.unsqueeze(2), b, {1, stride, stride}, {0, padding, padding}, packed);
}

torch::Tensor placeholder_like(const torch::Tensor& t) {
  return torch::zeros({1}, t.options().requires_grad(false)).expand(t.sizes());
}

void release_pages(const torch::Tensor& t) {
#ifdef MADV_PAGEOUT
  // Clean file-backed pages (a safetensors mapping) leave RSS; anonymous memory is left alone
  // without swap. Purely advisory: nothing changes in the data.
  // Only memory LibTorch did not allocate itself (a mapped file): freed heap memory needs no
  // hint, and paging out live heap memory would only send it to swap.
  if (!t.defined() || !t.device().is_cpu() || !t.has_storage()) return;
  if (t.storage().data_ptr().get_deleter() == c10::GetCPUAllocator()->raw_deleter()) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data_ptr());
  const uintptr_t end = begin + t.numel() * t.element_size();
  const uintptr_t a = (begin + page - 1) / page * page, e = end / page * page;
  if (e > a) madvise(reinterpret_cast<void*>(a), e - a, MADV_PAGEOUT);
#else
  (void)t;
#endif
}

torch::Tensor pointwise_conv(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  const int64_t co = w.size(0), ci = w.size(1), batch = x.size(0);
  auto sizes = x.sizes().vec();
  auto y = at::matmul(w.reshape({co, ci}), x.reshape({batch, ci, -1}));
  y.add_(b.view({1, co, 1}));
  sizes[1] = co;
  return y.view(sizes);
}

torch::Tensor channel_norm(const torch::Tensor& x) {
  // Autograd: sqrt_ saves its result, which clamp_min_ would then overwrite. Clamping the
  // square at eps² gives the same norm and a zero (not NaN) gradient for an all-zero vector.
  if (grad_path(x)) return x.square().sum(1, /*keepdim=*/true).clamp_min(1e-24).sqrt();
  const int64_t c = x.size(1);
  torch::Tensor sq;
  if (x.numel() / std::max<int64_t>(c, 1) >= 4096) {
    // Large frames: accumulate channel by channel, in the order linalg_vector_norm uses, but
    // without its slow strided reduction (20-40x here) and without a full-size temporary.
    sq = x.narrow(1, 0, 1).square();
    for (int64_t i = 1; i < c; ++i) {
      auto xi = x.narrow(1, i, 1);
      sq.addcmul_(xi, xi);
    }
  } else {
    sq = x.square().sum(1, /*keepdim=*/true);
  }
  // F.normalize's eps bounds the norm, not the mean square.
  return sq.sqrt_().clamp_min_(1e-12);
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& gamma) {
  // Low-precision inputs (bf16 on CUDA) normalise in fp32, like autocast's fp32 reductions.
  const bool low = x.scalar_type() != torch::kFloat && x.scalar_type() != torch::kDouble;
  const torch::Tensor xf = low ? x.to(torch::kFloat) : x;
  const double scale = std::sqrt(static_cast<double>(x.size(1)));
  auto y = xf / channel_norm(xf);
  if (grad_path(y, gamma)) y = y * (gamma.to(y.scalar_type()) * scale);
  else y.mul_(gamma.to(y.scalar_type()) * scale);
  return low ? y.to(x.scalar_type()) : y;
}

void rms_norm_silu_into(const torch::Tensor& x, const torch::Tensor& gamma, torch::Tensor& out) {
  const double scale = std::sqrt(static_cast<double>(x.size(1)));
  // out= kernels have no derivatives; copy_ into a view is recorded by autograd.
  if (grad_path(x, gamma) || (x.scalar_type() != torch::kFloat && x.scalar_type() != torch::kDouble)) {
    out.copy_(rms_norm_silu(x, gamma));
    return;
  }
  at::div_out(out, x, channel_norm(x));
  out.mul_(gamma.to(x.scalar_type()) * scale);
  at::silu_(out);
}

torch::Tensor rms_norm_silu(const torch::Tensor& x, const torch::Tensor& gamma) {
  auto y = rms_norm(x, gamma);
  return grad_path(y) ? at::silu(y) : at::silu_(y);
}

torch::Tensor patchify(const torch::Tensor& x) {
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3) / 2, w = x.size(4) / 2;
  // [b, c, t, h, dh, w, dw] -> [b, c, dw, dh, t, h, w]: the column offset is the more significant.
  return x.reshape({b, c, t, h, 2, w, 2}).permute({0, 1, 6, 4, 2, 3, 5}).reshape({b, c * 4, t, h, w});
}

torch::Tensor unpatchify(const torch::Tensor& x) {
  const int64_t b = x.size(0), c = x.size(1) / 4, t = x.size(2), h = x.size(3), w = x.size(4);
  // [b, c, dw, dh, t, h, w] -> [b, c, t, h, dh, w, dw]
  return x.reshape({b, c, 2, 2, t, h, w}).permute({0, 1, 4, 5, 3, 6, 2}).reshape({b, c, t, h * 2, w * 2});
}

torch::Tensor avg_down3d(const torch::Tensor& x, int64_t out_channels, int64_t ft, int64_t fs) {
  if (ft == 1 && fs == 1 && x.size(1) == out_channels) return x;
  const int64_t pad_t = (ft - x.size(2) % ft) % ft;
  torch::Tensor p = pad_t ? at::constant_pad_nd(x, {0, 0, 0, 0, pad_t, 0}, 0) : x;
  const int64_t b = p.size(0), c = p.size(1), t = p.size(2) / ft, h = p.size(3) / fs, w = p.size(4) / fs;
  const int64_t group = c * ft * fs * fs / out_channels;
  auto v = p.reshape({b, c, t, ft, h, fs, w, fs}).permute({0, 1, 3, 5, 7, 2, 4, 6});
  return v.reshape({b, out_channels, group, t, h, w}).mean(2);
}

torch::Tensor dup_up3d(const torch::Tensor& x, int64_t out_channels, int64_t ft, int64_t fs, bool first_chunk) {
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
  const int64_t repeats = out_channels * ft * fs * fs / c;
  // repeat_interleave on dim 1 as a broadcast: channel k of the result is input channel k / r.
  auto r = x.unsqueeze(2).expand({b, c, repeats, t, h, w});
  auto v = r.reshape({b, out_channels, ft, fs, fs, t, h, w}).permute({0, 1, 5, 2, 6, 3, 7, 4});
  auto y = v.reshape({b, out_channels, t * ft, h * fs, w * fs});
  if (first_chunk && ft > 1) y = y.narrow(2, ft - 1, y.size(2) - (ft - 1)).contiguous();
  return y;
}

torch::Tensor upsample_nearest2x(const torch::Tensor& x) {
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
  return x.reshape({b, c, t, h, 1, w, 1}).expand({b, c, t, h, 2, w, 2}).reshape({b, c, t, h * 2, w * 2});
}

torch::Tensor attention_frames(const torch::Tensor& x, const torch::Tensor& normed, const torch::Tensor& w_qkv,
                               const torch::Tensor& b_qkv, const torch::Tensor& w_proj, const torch::Tensor& b_proj) {
  const int64_t b = x.size(0), c = x.size(1), t = x.size(2), h = x.size(3), w = x.size(4);
  const double inv_scale = std::sqrt(static_cast<double>(c));
  auto wq = w_qkv.reshape({3 * c, c}), wp = w_proj.reshape({c, c});
  auto bq = b_qkv.view({3 * c, 1}), bp = b_proj.view({c, 1});
  auto out = at::empty_like(x, at::MemoryFormat::Contiguous);
  // One frame at a time: the [HW, HW] score matrix is the only large temporary.
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < t; ++j) {
      auto n = normed.select(0, i).select(1, j).reshape({c, h * w});
      auto qkv = at::addmm(bq, wq, n);  // [3C, HW]
      auto q = qkv.narrow(0, 0, c).t(), k = qkv.narrow(0, c, c), v = qkv.narrow(0, 2 * c, c).t();
      auto s = at::matmul(q, k);  // [HW, HW]
      s.div_(inv_scale);
      // Softmax in fp32 even for bf16 activations, as autocast does (fp64 stays fp64: tests
      // compare gradients with finite differences).
      const bool full = s.scalar_type() == torch::kFloat || s.scalar_type() == torch::kDouble;
      s = full ? at::softmax(s, -1) : at::softmax(s, -1, torch::kFloat).to(v.scalar_type());
      auto a = at::matmul(s, v);  // [HW, C]
      auto o = at::addmm(bp, wp, a.t());
      o.add_(x.select(0, i).select(1, j).reshape({c, h * w}));
      out.select(0, i).select(1, j).copy_(o.view({c, h, w}));
    }
  }
  return out;
}

}  // namespace ws::models::vae
