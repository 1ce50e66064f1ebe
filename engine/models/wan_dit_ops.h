// SPDX-License-Identifier: Apache-2.0
// Building blocks of the Wan DiT (docs/design/wan-dit.md §3–4): the float64 sinusoid and RoPE, the
// RMSNorm over the full width and memory-bounded attention.
#pragma once
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>

namespace ws::models {

// [N] timesteps (any float dtype) -> [N, freq_dim] fp32: [cos(t·ω), sin(t·ω)], computed in double.
torch::Tensor wan_sinusoidal_embedding(const torch::Tensor& t, int64_t freq_dim);

// Per-token RoPE angles [F·H·W, head_dim/2] (double) for a token grid, positions from 0,
// split n_t = c − 2⌊c/3⌋, n_h = n_w = ⌊c/3⌋ (c = head_dim/2), θ = 10000.
torch::Tensor wan_rope_angles(int64_t head_dim, int64_t F, int64_t H, int64_t W);

// The rotation table of `angles` [L, d/2]: cos and sin in double, [2, L, 1, d/2, 2]. Made once per
// forward and shared by every block.
torch::Tensor wan_rope_table(const torch::Tensor& angles);

// x [L, n, d] rotated pairwise (interleaved pairs, real = even) by a wan_rope_table, in double,
// returned in x's dtype.
torch::Tensor wan_rope_apply(const torch::Tensor& x, const torch::Tensor& table);

// `x · rsqrt(mean(x²) + eps) · w` over the last axis, statistics in fp32.
torch::Tensor wan_rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps);

// linear(gelu_tanh(h), w, b) that keeps only h (not the GELU's output) for backward.
torch::Tensor wan_gelu_linear(const torch::Tensor& h, const torch::Tensor& w, const torch::Tensor& b);

// LibTorch 2.1 added scaled_dot_product_attention with an explicit scale; the CPU build (1.13) has not.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define WANSTUDIO_HAVE_SDPA 1
#else
#define WANSTUDIO_HAVE_SDPA 0
#endif

// Whether wan_attention hands CUDA tensors to LibTorch's fused attention (LibTorch ≥ 2.1, and
// WANSTUDIO_SDPA is not 0).
bool fused_attention_available();

// softmax(q kᵀ · scale) v per head for q [n, Lq, d], k/v [n, Lk, d] -> [n, Lq, d]. Scores are
// made in blocks of heads × query rows of at most `max_scores` elements (on the CPU at most 2^20,
// so a block stays in the caches); with grad the probabilities are recomputed block by block in
// backward instead of being stored. CUDA tensors go to LibTorch's scaled-dot-product attention
// where fused_attention_available().
torch::Tensor wan_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, double scale,
                            int64_t max_scores = int64_t{1} << 25);

}  // namespace ws::models
