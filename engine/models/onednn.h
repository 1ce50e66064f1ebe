// SPDX-License-Identifier: Apache-2.0
// What the packed conv's two sources share (packed_conv.cpp, packed_conv_winograd.cpp): the layout
// record, the CPU engine and small helpers over oneDNN's API. Compiled only where CMake found
// oneDNN (WANSTUDIO_HAVE_DNNL); nothing outside models/ includes it.
#pragma once
#ifdef WANSTUDIO_HAVE_DNNL
#include <torch/torch.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <mutex>

#include "models/packed_conv.h"

namespace ws::models {

struct PackedLayout {
  int64_t id = 0;                  // index in the registry: autograd's saved data holds numbers, not pointers
  dnnl::memory::dims weight_dims;  // the parameter's shape
  // `taps`: a 3×3×3 kernel stored as its three temporal taps, [O, I, 3, 3] each in `blocked`
  // order one after the other, and run as three 2-D Winograd convs over the frames.
  bool taps = false;
  // `chunks` > 0: a 2-D kernel of chunks·P outputs stored as `chunks` kernels [P, I, 3, 3], each in
  // `blocked` order, run as that many 2-D Winograd convs (the resampler's 4608 outputs as 9 × 512:
  // Winograd's per-thread kernel sums grow with the outputs of one conv).
  int64_t chunks = 0;
  dnnl::memory::desc blocked;  // the order of the whole kernel, or of one tap
};

namespace onednn {

using md = dnnl::memory::desc;
using dims_t = dnnl::memory::dims;

dnnl::engine& cpu();
PackedLayoutPtr layout_by_id(int64_t id);
PackedLayoutPtr register_layout(std::shared_ptr<PackedLayout> layout);  // sets its id

inline dims_t dims_of(c10::IntArrayRef s) { return dims_t(s.begin(), s.end()); }
md plain(const dims_t& d);
md any(const dims_t& d);
// Frames in 16-channel blocks ([F, C/16, H, W, 16]): any run of frames is a pointer and a count.
md frames(int64_t count, int64_t C, int64_t H, int64_t W);

// Copies between two orders of the same dims; src and dst must not overlap.
void reorder(const md& from, const void* src, const md& to, void* dst, dnnl::stream& s);

// A flat fp32 tensor of at least `bytes`.
torch::Tensor floats(size_t bytes);

inline torch::Tensor fp32_contiguous(const torch::Tensor& t) { return t.to(torch::kFloat).contiguous(); }

// What every packed conv's autograd Function keeps for its backward.
struct SavedConv {
  torch::Tensor x, w;
  PackedLayoutPtr layout;
  static void save(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                   int64_t layout_id);
  static SavedConv load(torch::autograd::AutogradContext* ctx);
};

}  // namespace onednn

// packed_conv_winograd.cpp: the taps layout of a 3×3×3 weight or the chunks of a 3×3 one (null
// where Winograd does not cover it), the conv, and moving a weight between the plain order and
// its pieces.
PackedLayoutPtr choose_winograd_layout(const torch::Tensor& weight);
torch::Tensor winograd_conv(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                            int64_t layout_id);
// Winograd's scratchpad, one buffer shared by every Winograd conv (and the lock each holds while
// it runs, which guards the buffer).
std::mutex& winograd_mutex();
dnnl::memory winograd_scratchpad(const dnnl::memory::desc& d);
void pack_pieces_(const torch::Tensor& t, const PackedLayout& layout);
void unpack_pieces_(const torch::Tensor& t, const PackedLayout& layout);

// packed_conv_causal.cpp: the VAE's causal 3×3×3 conv on a taps layout, inference only.
torch::Tensor winograd_causal_conv(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                                   int64_t layout_id);

}  // namespace ws::models
#endif
