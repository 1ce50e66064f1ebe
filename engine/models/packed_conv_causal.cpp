// SPDX-License-Identifier: Apache-2.0
// The VAE's causal 3×3×3 conv on a Winograd taps layout, inference only (packed_conv.h,
// packed_conv_causal): with the cache prepended there is no temporal padding left, so
//     y[t] = conv2d(x[t], W₀) + conv2d(x[t+1], W₁) + conv2d(x[t+2], W₂),   t < T − 2,
// each tap one 2-D conv with the frames as its batch, the second and third added in place by a sum
// post-op. Frames go through in bands of rows (with a row of halo above and below) so that
// Winograd's scratch stays under a limit however large the frames.
#include "models/onednn.h"

#ifdef WANSTUDIO_HAVE_DNNL
#include <algorithm>
#include <unordered_map>

namespace ws::models {

using torch::Tensor;
using namespace onednn;

namespace {

constexpr auto kF32 = dnnl::memory::data_type::f32;
const dims_t kOnes{1, 1};

float* at(const Tensor& t, int64_t offset) { return t.data_ptr<float>() + offset; }

// One band of output rows: `rows` of them from `r0`, read from `in_rows` input rows from `in_r0`
// (a row above and below where the frame has one; zero padding where it does not).
struct Band {
  int64_t r0, rows, in_r0, in_rows, top, bottom;
};

Band band_at(int64_t r0, int64_t rows, int64_t H) {
  rows = std::min(rows, H - r0);
  const int64_t top = r0 == 0 ? 1 : 0, bottom = r0 + rows == H ? 1 : 0;
  return {r0, rows, r0 - 1 + top, rows + 2 - top - bottom, top, bottom};
}

struct Shape {
  int64_t C, K, W;
};

// One tap's 2-D conv over `count` frames of a band: Winograd's where asked for and available,
// otherwise the direct kernels on the layout's own weight order (nothing reordered per call).
dnnl::convolution_forward::primitive_desc band_conv(const Shape& z, const Band& b, int64_t count, bool bias,
                                                    bool accumulate, bool winograd, const md& weights) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.f);
    attr.set_post_ops(ops);
  }
  const auto pd = [&](dnnl::algorithm alg, const md& wei) {
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, alg, frames(count, z.C, b.in_rows, z.W), wei,
                                      bias ? plain({z.K}) : md(), frames(count, z.K, b.rows, z.W), kOnes,
                                      dims_t{b.top, 1}, dims_t{b.bottom, 1});
    return dnnl::convolution_forward::primitive_desc(d, attr, cpu());
  };
  if (winograd) try {
      return pd(dnnl::algorithm::convolution_winograd, any({z.K, z.C, 3, 3}));
    } catch (const dnnl::error&) {
    }
  try {
    return pd(dnnl::algorithm::convolution_direct, weights);
  } catch (const dnnl::error&) {
    return pd(dnnl::algorithm::convolution_direct, any({z.K, z.C, 3, 3}));
  }
}

}  // namespace

size_t& causal_conv_scratch_limit() {
  // The released VAEs' widest layers need about 170 MB at 32×32 × 4 frames (their transformed
  // 1024×1024 kernel alone is 151 MB).
  static size_t limit = size_t{192} << 20;
  return limit;
}

namespace {

// Whether a call runs on Winograd, and in bands of how many rows.
struct Plan {
  bool winograd;
  int64_t rows;
};

Plan plan_for(const Shape& z, int64_t T, int64_t H) {
  // Measured on AVX-512 (2 threads, 256-1024 channels): Winograd is 2.7-3.3x the direct kernels
  // from 32x32 x 4 frames up, 1.9x at 32x32 x 1 frame, 1.1x at 16x16 x 2, and behind them at
  // 16x16 x 1 (0.6x) and 8x8 (0.4x).
  if (H * z.W * T < 512) return {false, H};
  // Winograd's scratch (the transformed rows and kernel) grows with the rows of a call: one
  // 96-channel 480×832 frame would need 665 MB. Bands of a multiple of 4 rows (Winograd's tile)
  // keep it under the limit; where even 8 rows do not fit, the direct kernels take whole frames.
  const auto scratch = [&](int64_t r) {
    const Band inner = band_at(std::min(r, H - r), r, H);
    return band_conv(z, inner, T, true, true, true, md()).scratchpad_desc().get_size();
  };
  int64_t rows = H;
  while (rows > 8 && scratch(rows) > causal_conv_scratch_limit()) rows = std::max<int64_t>(8, (rows / 2 + 3) / 4 * 4);
  if (scratch(rows) > causal_conv_scratch_limit()) return {false, H};
  return {true, rows};
}

}  // namespace

int64_t causal_conv_band_rows(c10::IntArrayRef x, const PackedLayout& layout) {
  const Plan p = plan_for({x[1], layout.weight_dims[0], x[4]}, x[2] - 2, x[3]);
  return p.winograd ? p.rows : 0;
}

Tensor winograd_causal_conv(const Tensor& x_in, const Tensor& w, const Tensor& b_in, int64_t layout_id) {
  const PackedLayoutPtr layout = layout_by_id(layout_id);
  const Tensor x = fp32_contiguous(x_in), b = fp32_contiguous(b_in);
  const int64_t N = x.size(0), Tin = x.size(2), T = Tin - 2, H = x.size(3), plane = H * x.size(4);
  const Shape z{x.size(1), layout->weight_dims[0], x.size(4)};
  std::lock_guard<std::mutex> lock(winograd_mutex());
  dnnl::stream s(cpu());
  const auto [winograd, rows] = plan_for(z, T, H);
  Tensor y = torch::empty({N, z.K, T, H, z.W}, torch::kFloat);
  std::vector<Tensor> keep;  // weights reordered for a kernel that wants another order
  for (int64_t r0 = 0; r0 < H; r0 += rows) {
    const Band band = band_at(r0, rows, H);
    const int64_t in_frame = z.C * band.in_rows * z.W, out_frame = z.K * band.rows * z.W;
    const Tensor xb = floats(static_cast<size_t>(Tin * in_frame) * sizeof(float));
    const Tensor yb = floats(static_cast<size_t>(T * out_frame) * sizeof(float));
    // The band's rows of every frame of one sample, plain [C, T, H, W] seen as frames [T, C, rows, W].
    const md x_rows({Tin, z.C, band.in_rows, z.W}, kF32, dims_t{plane, Tin * plane, z.W, 1});
    const md y_rows({T, z.K, band.rows, z.W}, kF32, dims_t{plane, T * plane, z.W, 1});
    const auto first = band_conv(z, band, T, true, false, winograd, layout->blocked);
    const auto rest = band_conv(z, band, T, false, true, winograd, layout->blocked);
    for (int64_t n = 0; n < N; ++n) {
      reorder(x_rows, at(x, n * z.C * Tin * plane + band.in_r0 * z.W), frames(Tin, z.C, band.in_rows, z.W),
              xb.data_ptr(), s);
      for (int k = 0; k < 3; ++k) {
        const auto& pd = k == 0 ? first : rest;
        float* tap = at(w, k * z.K * z.C * 9);
        if (!(pd.weights_desc() == layout->blocked)) {
          keep.push_back(floats(pd.weights_desc().get_size()));
          reorder(layout->blocked, tap, pd.weights_desc(), keep.back().data_ptr(), s);
          tap = keep.back().data_ptr<float>();
        }
        std::unordered_map<int, dnnl::memory> args{
            {DNNL_ARG_SRC, dnnl::memory(pd.src_desc(), cpu(), at(xb, k * in_frame))},
            {DNNL_ARG_WEIGHTS, dnnl::memory(pd.weights_desc(), cpu(), tap)},
            {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), cpu(), yb.data_ptr())},
            {DNNL_ARG_SCRATCHPAD, winograd_scratchpad(pd.scratchpad_desc())}};
        if (k == 0) args[DNNL_ARG_BIAS] = dnnl::memory(plain({z.K}), cpu(), b.data_ptr());
        dnnl::convolution_forward(pd).execute(s, args);
      }
      reorder(frames(T, z.K, band.rows, z.W), yb.data_ptr(), y_rows, at(y, n * z.K * T * plane + r0 * z.W), s);
    }
  }
  s.wait();
  return y;
}

}  // namespace ws::models
#endif
