// SPDX-License-Identifier: Apache-2.0
// Stateless pieces of the Wan2.2 VAE (docs/design/wan22-vae.md §4): convolutions on the fastest
// CPU path, RMS_norm, patchify, the parameter-free AvgDown3D / DupUp3D shortcuts and the
// per-frame attention. Tensors are [B, C, T, H, W] unless stated otherwise.
#pragma once
#include <torch/torch.h>

#include <array>

namespace ws::models::vae {

using Int3 = std::array<int64_t, 3>;

// 3-D convolution (dilation 1, groups 1) with symmetric zero `padding`. Dense fp32 CPU
// inference goes straight to oneDNN: LibTorch's heuristic sends batch-1 convs with
// N·C·D·H ≤ 20480 to a vol2col+GEMM path that is 5-15× slower here. `packed` (from
// pack_conv3d_weight, same stride/padding) replaces `w` when given.
torch::Tensor conv3d(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, Int3 stride, Int3 padding,
                     const torch::Tensor& packed = torch::Tensor());
// Per-frame 2-D convolution of [B, C, T, H, W] with a [Co, Ci, kh, kw] kernel; `packed` is the
// kernel as [Co, Ci, 1, kh, kw] packed for stride (1, s, s) and padding (0, p, p).
torch::Tensor conv2d_frames(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, int64_t stride,
                            int64_t padding, const torch::Tensor& packed = torch::Tensor());
// A conv weight reordered once into oneDNN's blocked layout, so calls skip the per-call
// reorder (over 100 ms per 1024-channel kernel here, more than the conv at 8×8). On success
// `w` is released (pass the only reference to keep peak memory low); undefined, with `w`
// intact, when oneDNN cannot take it.
torch::Tensor pack_conv3d_weight(torch::Tensor& w, Int3 stride, Int3 padding);
// Whether a call with input x can use a packed weight (dense fp32 CPU, no autograd).
bool packed_path(const torch::Tensor& x);
// Whether autograd records ops on these tensors (grad mode on and one of them requires grad).
// Training (train-vae) and pixel losses then take out-of-place variants: the in-place fast
// paths overwrite values autograd saved, and out= kernels have no derivatives.
bool grad_path(const torch::Tensor& a, const torch::Tensor& b = torch::Tensor(),
               const torch::Tensor& c = torch::Tensor());
// A tensor of t's shape and dtype that holds no memory (stands in for a packed weight).
torch::Tensor placeholder_like(const torch::Tensor& t);
// Advises the kernel that t's pages are not needed soon (a mapped file's pages leave RSS).
void release_pages(const torch::Tensor& t);
// 1×1(×1) convolution as a GEMM over channels: w [Co, Ci, 1, ...], x [B, Ci, ...].
torch::Tensor pointwise_conv(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b);

// x / max(‖x‖₂ over dim 1, 1e-12) · sqrt(C) · γ (F.normalize, not the usual RMSNorm).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& gamma);
// rms_norm followed by SiLU, in place on the result.
torch::Tensor rms_norm_silu(const torch::Tensor& x, const torch::Tensor& gamma);
// The same written into `out` (e.g. a slice of a conv's padded input buffer): saves a copy.
void rms_norm_silu_into(const torch::Tensor& x, const torch::Tensor& gamma, torch::Tensor& out);
// max(‖x‖₂ over dim 1, 1e-12), keepdim.
torch::Tensor channel_norm(const torch::Tensor& x);

// [B, C, T, 2H', 2W'] -> [B, 4C, T, H', W'], channel 4c + 2·dw + dh (docs/design/wan22-vae.md §4.10).
torch::Tensor patchify(const torch::Tensor& x);
torch::Tensor unpatchify(const torch::Tensor& x);

// docs/design/wan22-vae.md §4.7: front-pad T to a multiple of ft, fold (ft, fs, fs) into channels, mean of groups.
torch::Tensor avg_down3d(const torch::Tensor& x, int64_t out_channels, int64_t ft, int64_t fs);
// docs/design/wan22-vae.md §4.8: repeat channels, unfold into (ft, fs, fs); the first chunk drops ft − 1 frames.
torch::Tensor dup_up3d(const torch::Tensor& x, int64_t out_channels, int64_t ft, int64_t fs, bool first_chunk);

// Nearest-neighbour ×2 in H and W (nearest-exact at an exact factor of 2).
torch::Tensor upsample_nearest2x(const torch::Tensor& x);

// docs/design/wan22-vae.md §4.5 without the norm: per frame, single head, softmax(q kᵀ/sqrt(C)) v, then proj, plus x.
// `normed` is rms_norm(x) with the block's 3-dim γ.
torch::Tensor attention_frames(const torch::Tensor& x, const torch::Tensor& normed, const torch::Tensor& w_qkv,
                               const torch::Tensor& b_qkv, const torch::Tensor& w_proj, const torch::Tensor& b_proj);

}  // namespace ws::models::vae
