// SPDX-License-Identifier: Apache-2.0
// Training convolutions whose weights stay in oneDNN's blocked order between steps.
//
// LibTorch 1.13 hands every CPU convolution a plain [O, I, k…] weight, so oneDNN reorders each
// kernel into its blocked order for the forward, again for backward-data, and reorders the
// gradient back: at the released upsampler width that is 57 reorders of 28–81 MB, about 0.7 s
// of a 4.6 s step. A packed conv's weight storage holds the forward's blocked order itself and
// its gradient comes out in that order; AdamW, clipping, the gradient mean and the EMA are
// elementwise, so a step reorders a weight only once (backward-data wants its own order).
// Whoever reads a packed weight by position (checkpoints, resume, parity) unpacks it first
// (train::UpsamplerUpdater::plain_weights()). Where Winograd applies the weight is stored in
// pieces (taps or chunks), each in the Winograd forward's order.
#pragma once
#include <torch/torch.h>

#include <cstddef>
#include <memory>

namespace ws::models {

// The blocked order a packed weight's storage holds (a oneDNN memory descriptor, opaque here).
struct PackedLayout;
using PackedLayoutPtr = std::shared_ptr<const PackedLayout>;

// Whether this build has oneDNN's API (found by CMake beside LibTorch's).
bool packed_conv_supported();

// The order oneDNN's forward picks for this stride-1, padding-1, 3×3(×3) conv weight; null
// where packing cannot apply or would change nothing (no oneDNN, not fp32 on the CPU, a pick
// that pads the blocks or is the plain order itself).
// `winograd`: where the CPU has oneDNN's F(4×4, 3×3) Winograd kernels for all three training
// passes (AVX-512) and the channel counts are multiples of 16, run on them: a 3×3×3 kernel as its
// three temporal taps over the frames, a 3×3 one in chunks of ≤ 512 outputs
// (packed_conv_winograd.cpp). About a quarter of the direct kernels' multiplications; rounding a
// little larger, inside the tests' tolerances for the direct kernels.
PackedLayoutPtr choose_packed_layout(const torch::Tensor& weight, bool winograd = true);

// Whether convs with this layout run oneDNN's Winograd kernels.
bool layout_is_winograd(const PackedLayout& layout);

// The scratch the Winograd convs keep (one buffer, the largest pass's need: transformed tiles and
// per-thread kernel sums) for one in→out 3×3 piece over `frames` frames of h×w; 0 where Winograd
// does not apply. For memory estimates.
double winograd_taps_scratch_bytes(int64_t in, int64_t out, int64_t frames, int64_t h, int64_t w);

// A number naming the order (equal on two machines exactly when they pick the same order), below
// 2^52 so a double carries it exactly through a collective.
int64_t layout_fingerprint(const PackedLayout& layout);

// Rewrite t's storage (weight-shaped, fp32, contiguous) between plain and `layout`, in place.
void pack_(const torch::Tensor& t, const PackedLayout& layout);
void unpack_(const torch::Tensor& t, const PackedLayout& layout);

// conv(x, weight, bias; stride 1, padding 1, 2-D or 3-D) with `weight` stored in `layout`;
// differentiable in x (plain), weight (its gradient in `layout`) and bias.
torch::Tensor packed_conv(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                          const PackedLayoutPtr& layout);

// Inference only (no autograd), for a 3×3×3 weight in a Winograd taps layout: the causal conv
// the VAE runs, with no temporal padding (the input's first two frames are the previous chunk's)
// and spatial padding 1, y[t] = Σₖ conv2d(x[t+k], Wₖ) for t < T − 2. Each tap runs on Winograd
// where the frames are large enough to pay (H·W·frames ≥ 512) and on the direct kernels, from
// the same weights, below that.
torch::Tensor packed_conv_causal(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                 const PackedLayoutPtr& layout);
// The most scratch one packed_conv_causal call may give Winograd (bytes; tests lower it): larger
// frames go through in bands of rows, and where even a band of 8 rows needs more, on the direct kernels.
size_t& causal_conv_scratch_limit();
// The rows of the bands such a call runs in on Winograd (the frame's height when it fits whole),
// or 0 where it runs on the direct kernels: x's sizes, the weight's layout.
int64_t causal_conv_band_rows(c10::IntArrayRef x, const PackedLayout& layout);

}  // namespace ws::models
