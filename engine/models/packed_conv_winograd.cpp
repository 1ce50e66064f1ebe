// SPDX-License-Identifier: Apache-2.0
// Training convs on oneDNN's F(4×4, 3×3) Winograd kernels, which are 2-D only and do about a
// quarter of the direct kernels' multiplications.
// - A 3×3×3 conv runs as three 2-D convs, one per temporal tap, each over just the frames it reaches:
//     y[t] = conv2d(x[t−1], W₀) + conv2d(x[t], W₁) + conv2d(x[t+1], W₂)   (frames outside are zero)
// - A wide 3×3 conv (the resampler's 4608 outputs) runs as chunks of at most 512 outputs, since
//   Winograd's scratch holds a sum of the transformed kernel per thread.
// Frames live in 16-channel blocks ([F, C/16, H, W, 16]), so any run of frames is a pointer and a
// count; a weight is stored piece by piece (tap or chunk), each in the forward's blocked order.
#include "models/onednn.h"

#ifdef WANSTUDIO_HAVE_DNNL
#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/error.h"

namespace ws::models {

using torch::Tensor;
using namespace onednn;

namespace {

using tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;
constexpr auto kWinograd = dnnl::algorithm::convolution_winograd;
constexpr auto kDirect = dnnl::algorithm::convolution_direct;
const dims_t kOnes{1, 1};

// One plain [C, T, H, W] sample seen as frames [T, C, H, W].
md sample_as_frames(int64_t C, int64_t T, int64_t H, int64_t W) {
  return md({T, C, H, W}, kF32, dims_t{H * W, T * H * W, W, 1});
}

// One plain [O, I, 3, 3, 3] kernel's tap k seen as [O, I, 3, 3] (its pointer offset is k·9).
md plain_tap(int64_t O, int64_t I) { return md({O, I, 3, 3}, kF32, dims_t{I * 27, 27, 3, 1}); }

// Output channels [j·P, (j+1)·P) of a plain [N, O, H, W] tensor (its pointer offset is j·P·H·W).
md plain_chunk(int64_t N, int64_t O, int64_t P, int64_t H, int64_t W) {
  return md({N, P, H, W}, kF32, dims_t{O * H * W, H * W, W, 1});
}

struct Sizes {
  int64_t N, C, K, T, H, W;
  int64_t in_frame() const { return C * H * W; }
  int64_t out_frame() const { return K * H * W; }
  int64_t tap() const { return K * C * 9; }
};

Sizes sizes_of(const Tensor& x, const PackedLayout& layout) {
  return {x.size(0), x.size(1), layout.weight_dims[0], x.size(2), x.size(3), x.size(4)};
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

dnnl::convolution_forward::primitive_desc forward_pd(const Sizes& z, int64_t count, bool bias, dnnl::algorithm alg) {
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, alg, frames(count, z.C, z.H, z.W),
                                    any({z.K, z.C, 3, 3}), bias ? plain({z.K}) : md(), frames(count, z.K, z.H, z.W),
                                    kOnes, kOnes, kOnes);
  return {d, user_scratchpad(), cpu()};
}

// The backward passes take the forward's descriptor (`hint`, of the same algorithm) as built once by
// their caller.
dnnl::convolution_backward_data::primitive_desc backward_data_pd(
    const Sizes& z, int64_t count, dnnl::algorithm alg, const dnnl::convolution_forward::primitive_desc& hint) {
  dnnl::convolution_backward_data::desc d(alg, frames(count, z.C, z.H, z.W), any({z.K, z.C, 3, 3}),
                                          frames(count, z.K, z.H, z.W), kOnes, kOnes, kOnes);
  return {d, user_scratchpad(), cpu(), hint};
}

dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(
    const Sizes& z, int64_t count, bool bias, dnnl::algorithm alg,
    const dnnl::convolution_forward::primitive_desc& hint) {
  dnnl::convolution_backward_weights::desc d(alg, frames(count, z.C, z.H, z.W), any({z.K, z.C, 3, 3}),
                                             bias ? plain({z.K}) : md(), frames(count, z.K, z.H, z.W), kOnes, kOnes,
                                             kOnes);
  return {d, user_scratchpad(), cpu(), hint};
}

// A call's forward descriptor and its algorithm: Winograd where its kernels take the shape, the
// direct kernels (same weights, same result up to rounding) where they do not. Built once per call:
// it is the forward's own descriptor and the backward passes' hint.
struct Forward {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::algorithm alg;
};

Forward forward_for(const Sizes& z, int64_t count, bool bias) {
  try {
    return {forward_pd(z, count, bias, kWinograd), kWinograd};
  } catch (const dnnl::error&) {
    return {forward_pd(z, count, bias, kDirect), kDirect};
  }
}

}  // namespace

std::mutex& winograd_mutex() {
  static std::mutex m;
  return m;
}

namespace {
// Mapped apart from the heap, so it leaves no hole there when it grows.
class Scratch {
 public:
  ~Scratch() { release(); }
  void* at_least(size_t bytes) {
    if (bytes > size_) {
      release();
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw Error("Winograd conv: cannot map " + std::to_string(bytes >> 20) + " MB of scratch");
      data_ = p, size_ = bytes;
    }
    return data_;
  }

 private:
  void release() {
    if (data_) munmap(data_, size_);
    data_ = nullptr, size_ = 0;
  }
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

// One buffer for every pass's scratchpad (Winograd's transformed tiles and per-thread kernel
// sums): allocating it per call would fault its pages in again each time. Guarded by
// winograd_mutex(), which every forward and backward holds throughout.
dnnl::memory winograd_scratchpad(const md& d) {
  static Scratch buf;
  return dnnl::memory(d, cpu(), buf.at_least(std::max<size_t>(d.get_size(), 1)));
}

namespace {

float* at(const Tensor& t, int64_t offset) { return t.data_ptr<float>() + offset; }

// One forward or backward call: its stream and the temporaries it must keep until the end.
struct Call {
  Call(const PackedLayout& l, const Sizes& sizes) : layout(l), z(sizes) {}
  const PackedLayout& layout;
  const Sizes z;
  dnnl::stream s{cpu()};
  std::vector<Tensor> keep;

  // Tap k of the packed weight `w`, in the order `want`.
  dnnl::memory weights(const Tensor& w, int k, const md& want) {
    float* p = at(w, k * z.tap());
    if (want == layout.blocked) return dnnl::memory(want, cpu(), p);
    Tensor t = floats(want.get_size());
    keep.push_back(t);
    reorder(layout.blocked, p, want, t.data_ptr(), s);
    return dnnl::memory(want, cpu(), t.data_ptr());
  }

  // [N, ch, T, H, W] plain → N·T frames.
  Tensor to_frames(const Tensor& x, int64_t ch) {
    Tensor f = floats(static_cast<size_t>(x.numel()) * sizeof(float));
    const int64_t sample = ch * z.T * z.H * z.W;
    for (int64_t n = 0; n < z.N; ++n)
      reorder(sample_as_frames(ch, z.T, z.H, z.W), at(x, n * sample), frames(z.T, ch, z.H, z.W), at(f, n * sample), s);
    return f;
  }
  Tensor from_frames(const Tensor& f, int64_t ch) {
    Tensor x = torch::empty({z.N, ch, z.T, z.H, z.W}, torch::kFloat);
    const int64_t sample = ch * z.T * z.H * z.W;
    for (int64_t n = 0; n < z.N; ++n)
      reorder(frames(z.T, ch, z.H, z.W), at(f, n * sample), sample_as_frames(ch, z.T, z.H, z.W), at(x, n * sample), s);
    return x;
  }

  void forward(const Tensor& w, int k, const float* src, int64_t count, const float* bias, float* dst) {
    const Forward f = forward_for(z, count, bias != nullptr);
    const auto& pd = f.pd;
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(pd.src_desc(), cpu(), const_cast<float*>(src))},
        {DNNL_ARG_WEIGHTS, weights(w, k, pd.weights_desc())},
        {DNNL_ARG_DST, dnnl::memory(pd.dst_desc(), cpu(), dst)},
        {DNNL_ARG_SCRATCHPAD, winograd_scratchpad(pd.scratchpad_desc())}};
    if (bias) args[DNNL_ARG_BIAS] = dnnl::memory(plain({z.K}), cpu(), const_cast<float*>(bias));
    dnnl::convolution_forward(pd).execute(s, args);
  }

  void backward_data(const Tensor& w, int k, const float* diff_dst, int64_t count, float* diff_src) {
    const Forward f = forward_for(z, count, false);
    const auto pd = backward_data_pd(z, count, f.alg, f.pd);
    dnnl::convolution_backward_data(pd).execute(
        s, {{DNNL_ARG_DIFF_DST, dnnl::memory(pd.diff_dst_desc(), cpu(), const_cast<float*>(diff_dst))},
            {DNNL_ARG_WEIGHTS, weights(w, k, pd.weights_desc())},
            {DNNL_ARG_DIFF_SRC, dnnl::memory(pd.diff_src_desc(), cpu(), diff_src)},
            {DNNL_ARG_SCRATCHPAD, winograd_scratchpad(pd.scratchpad_desc())}});
  }

  // Writes tap k's kernel gradient, in the layout's order, at `diff_w`.
  void backward_weights(const float* src, const float* diff_dst, int64_t count, float* diff_w, float* diff_bias) {
    const Forward f = forward_for(z, count, diff_bias != nullptr);
    const auto pd = backward_weights_pd(z, count, diff_bias != nullptr, f.alg, f.pd);
    const md produced = pd.diff_weights_desc();
    Tensor tmp;
    if (!(produced == layout.blocked)) tmp = floats(produced.get_size());
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, dnnl::memory(pd.src_desc(), cpu(), const_cast<float*>(src))},
        {DNNL_ARG_DIFF_DST, dnnl::memory(pd.diff_dst_desc(), cpu(), const_cast<float*>(diff_dst))},
        {DNNL_ARG_DIFF_WEIGHTS, dnnl::memory(produced, cpu(), tmp.defined() ? tmp.data_ptr() : diff_w)},
        {DNNL_ARG_SCRATCHPAD, winograd_scratchpad(pd.scratchpad_desc())}};
    if (diff_bias) args[DNNL_ARG_DIFF_BIAS] = dnnl::memory(plain({z.K}), cpu(), diff_bias);
    dnnl::convolution_backward_weights(pd).execute(s, args);
    if (tmp.defined()) reorder(produced, tmp.data_ptr(), layout.blocked, diff_w, s);
  }
};

// `into[offset …] += from[0 …)`, `length` floats.
void add(const Tensor& into, int64_t offset, const Tensor& from, int64_t length) {
  into.narrow(0, offset, length).add_(from.narrow(0, 0, length));
}

struct TapsConv : public torch::autograd::Function<TapsConv> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x_in, const Tensor& w, const Tensor& b_in,
                        int64_t layout_id) {
    const PackedLayoutPtr layout = layout_by_id(layout_id);
    const Tensor x = fp32_contiguous(x_in), b = fp32_contiguous(b_in);
    std::lock_guard<std::mutex> lock(winograd_mutex());
    Call c(*layout, sizes_of(x, *layout));
    const Sizes& z = c.z;
    const Tensor xf = c.to_frames(x, z.C);
    const Tensor yf = floats(static_cast<size_t>(z.N * z.T * z.out_frame()) * sizeof(float));
    c.forward(w, 1, xf.data_ptr<float>(), z.N * z.T, b.data_ptr<float>(), yf.data_ptr<float>());
    if (z.T > 1) {
      const int64_t run = (z.T - 1) * z.out_frame();
      const Tensor tmp = floats(static_cast<size_t>(run) * sizeof(float));
      for (int64_t n = 0; n < z.N; ++n) {
        const int64_t x0 = n * z.T * z.in_frame(), y0 = n * z.T * z.out_frame();
        c.forward(w, 0, at(xf, x0), z.T - 1, nullptr, tmp.data_ptr<float>());  // y[t] += W₀ x[t−1]
        add(yf, y0 + z.out_frame(), tmp, run);
        c.forward(w, 2, at(xf, x0 + z.in_frame()), z.T - 1, nullptr, tmp.data_ptr<float>());  // y[t] += W₂ x[t+1]
        add(yf, y0, tmp, run);
      }
    }
    Tensor y = c.from_frames(yf, z.K);
    c.s.wait();
    SavedConv::save(ctx, x, w, layout_id);
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto [x, w, layout] = SavedConv::load(ctx);
    const Tensor gy = fp32_contiguous(grads[0]);
    std::lock_guard<std::mutex> lock(winograd_mutex());
    Call c(*layout, sizes_of(x, *layout));
    const Sizes& z = c.z;
    const Tensor dyf = c.to_frames(gy, z.K);
    Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) {
      const Tensor dxf = floats(static_cast<size_t>(x.numel()) * sizeof(float));
      c.backward_data(w, 1, dyf.data_ptr<float>(), z.N * z.T, dxf.data_ptr<float>());
      if (z.T > 1) {
        const int64_t run = (z.T - 1) * z.in_frame();
        const Tensor tmp = floats(static_cast<size_t>(run) * sizeof(float));
        for (int64_t n = 0; n < z.N; ++n) {
          const int64_t x0 = n * z.T * z.in_frame(), y0 = n * z.T * z.out_frame();
          c.backward_data(w, 0, at(dyf, y0 + z.out_frame()), z.T - 1, tmp.data_ptr<float>());  // ∂x[s] += W₀ᵀ ∂y[s+1]
          add(dxf, x0, tmp, run);
          c.backward_data(w, 2, at(dyf, y0), z.T - 1, tmp.data_ptr<float>());  // ∂x[s] += W₂ᵀ ∂y[s−1]
          add(dxf, x0 + z.in_frame(), tmp, run);
        }
      }
      gx = c.from_frames(dxf, z.C);
    }
    if (ctx->needs_input_grad(1) || ctx->needs_input_grad(2)) {
      const Tensor xf = c.to_frames(x, z.C);
      gw = torch::empty(c10::IntArrayRef(layout->weight_dims), torch::kFloat);
      gb = torch::empty({z.K}, torch::kFloat);
      c.backward_weights(xf.data_ptr<float>(), dyf.data_ptr<float>(), z.N * z.T, at(gw, z.tap()), gb.data_ptr<float>());
      if (z.T == 1) {
        // One frame: the outer taps reach only the zero padding.
        gw.view({-1}).narrow(0, 0, z.tap()).zero_();
        gw.view({-1}).narrow(0, 2 * z.tap(), z.tap()).zero_();
      } else {
        const Tensor tmp = z.N > 1 ? floats(static_cast<size_t>(z.tap()) * sizeof(float)) : Tensor();
        const Tensor flat = gw.view({-1});
        for (int k : {0, 2}) {
          for (int64_t n = 0; n < z.N; ++n) {
            // Tap 0 pairs x[0 … T−2] with ∂y[1 … T−1]; tap 2 pairs x[1 … T−1] with ∂y[0 … T−2].
            const float* src = at(xf, n * z.T * z.in_frame() + (k == 2 ? z.in_frame() : 0));
            const float* dy = at(dyf, n * z.T * z.out_frame() + (k == 0 ? z.out_frame() : 0));
            float* dst = n == 0 ? at(gw, k * z.tap()) : tmp.data_ptr<float>();
            c.backward_weights(src, dy, z.T - 1, dst, nullptr);
            if (n > 0) add(flat, k * z.tap(), tmp, z.tap());
          }
        }
      }
    }
    c.s.wait();
    return {gx, gw, gb, Tensor()};
  }
};

// A 3×3 conv [N, I, H, W] → [N, chunks·P, H, W] as `chunks` convs of P outputs.
struct ChunksConv : public torch::autograd::Function<ChunksConv> {
  static Sizes sizes(const Tensor& x, const PackedLayout& layout) {
    return {x.size(0), x.size(1), layout.weight_dims[0] / layout.chunks, 1, x.size(2), x.size(3)};
  }

  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x_in, const Tensor& w, const Tensor& b_in,
                        int64_t layout_id) {
    const PackedLayoutPtr layout = layout_by_id(layout_id);
    const Tensor x = fp32_contiguous(x_in), b = fp32_contiguous(b_in);
    std::lock_guard<std::mutex> lock(winograd_mutex());
    Call c(*layout, sizes(x, *layout));
    const Sizes& z = c.z;
    const int64_t O = layout->weight_dims[0];
    const Tensor xf = floats(static_cast<size_t>(x.numel()) * sizeof(float));
    reorder(plain({z.N, z.C, z.H, z.W}), x.data_ptr(), frames(z.N, z.C, z.H, z.W), xf.data_ptr(), c.s);
    const Tensor part = floats(static_cast<size_t>(z.N * z.out_frame()) * sizeof(float));
    Tensor y = torch::empty({z.N, O, z.H, z.W}, torch::kFloat);
    for (int64_t j = 0; j < layout->chunks; ++j) {
      c.forward(w, static_cast<int>(j), xf.data_ptr<float>(), z.N, at(b, j * z.K), part.data_ptr<float>());
      reorder(frames(z.N, z.K, z.H, z.W), part.data_ptr(), plain_chunk(z.N, O, z.K, z.H, z.W),
              at(y, j * z.K * z.H * z.W), c.s);
    }
    c.s.wait();
    SavedConv::save(ctx, x, w, layout_id);
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto [x, w, layout] = SavedConv::load(ctx);
    const Tensor gy = fp32_contiguous(grads[0]);
    std::lock_guard<std::mutex> lock(winograd_mutex());
    Call c(*layout, sizes(x, *layout));
    const Sizes& z = c.z;
    const int64_t O = layout->weight_dims[0], in = z.N * z.in_frame();
    const bool want_x = ctx->needs_input_grad(0), want_w = ctx->needs_input_grad(1) || ctx->needs_input_grad(2);
    Tensor xf, dxf, part, gx, gw, gb;
    if (want_x)
      dxf = floats(static_cast<size_t>(in) * sizeof(float)), part = floats(static_cast<size_t>(in) * sizeof(float));
    if (want_w) {
      xf = floats(static_cast<size_t>(in) * sizeof(float));
      reorder(plain({z.N, z.C, z.H, z.W}), x.data_ptr(), frames(z.N, z.C, z.H, z.W), xf.data_ptr(), c.s);
      gw = torch::empty(c10::IntArrayRef(layout->weight_dims), torch::kFloat);
      gb = torch::empty({O}, torch::kFloat);
    }
    const Tensor dyf = floats(static_cast<size_t>(z.N * z.out_frame()) * sizeof(float));
    for (int64_t j = 0; j < layout->chunks; ++j) {
      reorder(plain_chunk(z.N, O, z.K, z.H, z.W), at(gy, j * z.K * z.H * z.W), frames(z.N, z.K, z.H, z.W),
              dyf.data_ptr(), c.s);
      if (want_x) {
        c.backward_data(w, static_cast<int>(j), dyf.data_ptr<float>(), z.N, (j == 0 ? dxf : part).data_ptr<float>());
        if (j > 0) add(dxf, 0, part, in);
      }
      if (want_w)
        c.backward_weights(xf.data_ptr<float>(), dyf.data_ptr<float>(), z.N, at(gw, j * z.tap()), at(gb, j * z.K));
    }
    if (want_x) {
      gx = torch::empty_like(x);
      reorder(frames(z.N, z.C, z.H, z.W), dxf.data_ptr(), plain({z.N, z.C, z.H, z.W}), gx.data_ptr(), c.s);
    }
    c.s.wait();
    return {gx, gw, gb, Tensor()};
  }
};

void check_weight(const Tensor& t) {
  if (t.scalar_type() != torch::kFloat || !t.is_contiguous() || !t.device().is_cpu())
    throw Error("packed conv weights: expected a contiguous fp32 CPU tensor");
}

// The weight order Winograd's forward picks for [K, C, 3, 3] pieces, checking that all three
// passes take them; empty where they do not.
md winograd_order(int64_t C, int64_t K) {
  const Sizes z{1, C, K, 8, 16, 16};
  try {
    const auto fwd = forward_pd(z, z.T, true, kWinograd);
    backward_data_pd(z, z.T, kWinograd, fwd);
    backward_weights_pd(z, z.T, true, kWinograd, fwd);
    const md picked = fwd.weights_desc();
    if (picked.get_size() != static_cast<size_t>(K * C * 9) * sizeof(float)) return md();
    return picked;
  } catch (const dnnl::error&) {
    return md();
  }
}

}  // namespace

PackedLayoutPtr choose_winograd_layout(const Tensor& weight) {
  const bool taps = weight.dim() == 5;
  if ((weight.dim() != 4 && !taps) || weight.size(2) != 3 || weight.size(3) != 3 || (taps && weight.size(4) != 3))
    return nullptr;
  const int64_t O = weight.size(0), C = weight.size(1);
  if (O % 16 != 0 || C % 16 != 0) return nullptr;  // whole channel blocks: a frame run is a pointer
  int64_t piece = O;
  if (!taps)
    for (piece = std::min<int64_t>(O, 512); O % piece != 0;) piece -= 16;
  const md picked = winograd_order(C, piece);
  if (picked.get_size() == 0) return nullptr;
  auto layout = std::make_shared<PackedLayout>();
  layout->weight_dims = dims_of(weight.sizes());
  layout->taps = taps;
  layout->chunks = taps ? 0 : O / piece;
  layout->blocked = picked;
  return register_layout(std::move(layout));
}

double winograd_taps_scratch_bytes(int64_t in, int64_t out, int64_t frames_, int64_t h, int64_t w) {
  if (in % 16 != 0 || out % 16 != 0) return 0;
  const Sizes z{1, in, out, frames_, h, w};
  try {
    const auto fwd = forward_pd(z, frames_, true, kWinograd);
    const size_t most = std::max({fwd.scratchpad_desc().get_size(),
                                  backward_data_pd(z, frames_, kWinograd, fwd).scratchpad_desc().get_size(),
                                  backward_weights_pd(z, frames_, true, kWinograd, fwd).scratchpad_desc().get_size()});
    return static_cast<double>(most);
  } catch (const dnnl::error&) {
    return 0;
  }
}

Tensor winograd_conv(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t layout_id) {
  const PackedLayoutPtr layout = layout_by_id(layout_id);
  return layout->taps ? TapsConv::apply(x, weight, bias, layout_id) : ChunksConv::apply(x, weight, bias, layout_id);
}

void pack_pieces_(const Tensor& t, const PackedLayout& layout) {
  check_weight(t);
  torch::NoGradGuard no_grad;
  const Tensor src = t.clone();
  dnnl::stream s(cpu());
  const int64_t O = layout.weight_dims[0], C = layout.weight_dims[1];
  if (layout.taps) {
    for (int64_t k = 0; k < 3; ++k) reorder(plain_tap(O, C), at(src, k * 9), layout.blocked, at(t, k * O * C * 9), s);
  } else {
    const int64_t P = O / layout.chunks, piece = P * C * 9;  // a chunk of the plain kernel is contiguous
    for (int64_t j = 0; j < layout.chunks; ++j)
      reorder(plain({P, C, 3, 3}), at(src, j * piece), layout.blocked, at(t, j * piece), s);
  }
  s.wait();
}

void unpack_pieces_(const Tensor& t, const PackedLayout& layout) {
  check_weight(t);
  torch::NoGradGuard no_grad;
  const Tensor src = t.clone();
  dnnl::stream s(cpu());
  const int64_t O = layout.weight_dims[0], C = layout.weight_dims[1];
  if (layout.taps) {
    for (int64_t k = 0; k < 3; ++k) reorder(layout.blocked, at(src, k * O * C * 9), plain_tap(O, C), at(t, k * 9), s);
  } else {
    const int64_t P = O / layout.chunks, piece = P * C * 9;
    for (int64_t j = 0; j < layout.chunks; ++j)
      reorder(layout.blocked, at(src, j * piece), plain({P, C, 3, 3}), at(t, j * piece), s);
  }
  s.wait();
}

}  // namespace ws::models
#endif
