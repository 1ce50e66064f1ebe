// SPDX-License-Identifier: Apache-2.0
#include "models/packed_conv.h"

#include <mutex>
#include <vector>

#include "core/error.h"
#include "models/onednn.h"

namespace ws::models {

using torch::Tensor;

#ifdef WANSTUDIO_HAVE_DNNL

namespace onednn {

dnnl::engine& cpu() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

namespace {
std::vector<PackedLayoutPtr>& layouts() {
  static std::vector<PackedLayoutPtr> v;
  return v;
}
std::mutex& layouts_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

PackedLayoutPtr layout_by_id(int64_t id) {
  std::lock_guard<std::mutex> lock(layouts_mutex());
  return layouts().at(static_cast<size_t>(id));
}

PackedLayoutPtr register_layout(std::shared_ptr<PackedLayout> layout) {
  std::lock_guard<std::mutex> lock(layouts_mutex());
  layout->id = static_cast<int64_t>(layouts().size());
  layouts().push_back(layout);
  return layout;
}

md plain(const dims_t& d) {
  using tag = dnnl::memory::format_tag;
  const tag t = d.size() == 1 ? tag::a : d.size() == 4 ? tag::abcd : tag::abcde;
  return md(d, dnnl::memory::data_type::f32, t);
}
md any(const dims_t& d) { return md(d, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any); }

md frames(int64_t count, int64_t C, int64_t H, int64_t W) {
  return md({count, C, H, W}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::aBcd16b);
}

void reorder(const md& from, const void* src, const md& to, void* dst, dnnl::stream& s) {
  dnnl::memory a(from, cpu(), const_cast<void*>(src)), b(to, cpu(), dst);
  dnnl::reorder(a, b).execute(s, a, b);
}

Tensor floats(size_t bytes) {
  return torch::empty({static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float))}, torch::kFloat);
}

void SavedConv::save(torch::autograd::AutogradContext* ctx, const Tensor& x, const Tensor& w, int64_t layout_id) {
  ctx->save_for_backward({x, w});
  ctx->saved_data["layout"] = layout_id;  // a number: saved data holds no pointers
}

SavedConv SavedConv::load(torch::autograd::AutogradContext* ctx) {
  const auto saved = ctx->get_saved_variables();
  return {saved[0], saved[1], layout_by_id(ctx->saved_data["layout"].toInt())};
}

}  // namespace onednn

using namespace onednn;

namespace {

// The shapes of one stride-1, padding-1 conv.
struct Geometry {
  dims_t src, wei, bias, dst, strides, pad;
};

Geometry geometry(c10::IntArrayRef x, const dims_t& wei) {
  Geometry g;
  g.src = dims_of(x);
  g.wei = wei;
  g.bias = {wei[0]};
  g.dst = g.src;
  g.dst[1] = wei[0];
  const size_t spatial = wei.size() - 2;
  g.strides.assign(spatial, 1);
  g.pad.assign(spatial, 1);
  return g;
}

dnnl::convolution_forward::primitive_desc forward_pd(const Geometry& g) {
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, any(g.src),
                                    any(g.wei), plain(g.bias), any(g.dst), g.strides, g.pad, g.pad);
  return {d, cpu()};
}

// An operand over `t`'s storage, described by `have`; a reordered copy when the primitive
// wants `want`. `keep` holds the copy's storage until the stream is done.
dnnl::memory operand(const Tensor& t, const md& have, const md& want, dnnl::stream& s, std::vector<Tensor>& keep) {
  dnnl::memory m(have, cpu(), t.data_ptr());
  if (have == want) return m;
  Tensor buf = floats(want.get_size());
  keep.push_back(buf);
  dnnl::memory w(want, cpu(), buf.data_ptr());
  dnnl::reorder(m, w).execute(s, m, w);
  return w;
}

// A result the primitive writes in `produced`; `out` (already allocated, described by `wanted`)
// receives it, through a reorder when the two differ. Returns the memory to hand the primitive.
dnnl::memory result(const Tensor& out, const md& wanted, const md& produced, std::vector<Tensor>& keep) {
  if (wanted == produced) return dnnl::memory(wanted, cpu(), out.data_ptr());
  Tensor buf = floats(produced.get_size());
  keep.push_back(buf);
  return dnnl::memory(produced, cpu(), buf.data_ptr());
}
void finish(dnnl::memory produced, const Tensor& out, const md& wanted, dnnl::stream& s) {
  if (produced.get_desc() == wanted) return;
  dnnl::memory dst(wanted, cpu(), out.data_ptr());
  dnnl::reorder(produced, dst).execute(s, produced, dst);
}

// The direct kernels on the whole 2-D or 3-D weight.
struct PackedConv : public torch::autograd::Function<PackedConv> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x_in, const Tensor& w, const Tensor& b_in,
                        int64_t layout_id) {
    const PackedLayoutPtr layout = layout_by_id(layout_id);
    const Tensor x = fp32_contiguous(x_in), b = fp32_contiguous(b_in);
    const Geometry g = geometry(x.sizes(), layout->weight_dims);
    const auto pd = forward_pd(g);
    dnnl::stream s(cpu());
    std::vector<Tensor> keep;
    dnnl::memory src = operand(x, plain(g.src), pd.src_desc(), s, keep);
    dnnl::memory wei = operand(w, layout->blocked, pd.weights_desc(), s, keep);
    dnnl::memory bias(plain(g.bias), cpu(), b.data_ptr());
    Tensor y = torch::empty(c10::IntArrayRef(g.dst), torch::kFloat);
    dnnl::memory dst = result(y, plain(g.dst), pd.dst_desc(), keep);
    dnnl::convolution_forward(pd).execute(
        s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, dst}});
    finish(dst, y, plain(g.dst), s);
    s.wait();
    SavedConv::save(ctx, x, w, layout_id);
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto [x, w, layout] = SavedConv::load(ctx);
    const Tensor gy = fp32_contiguous(grads[0]);
    const Geometry g = geometry(x.sizes(), layout->weight_dims);
    const auto hint = forward_pd(g);
    dnnl::stream s(cpu());
    std::vector<Tensor> keep;
    Tensor gx, gw, gb;
    // Both backward primitives read ∂y, usually in the same blocked order: reorder it once.
    md dy_desc;
    dnnl::memory dy_mem;
    auto diff_dst = [&](const md& want) {
      if (!dy_mem || !(dy_desc == want)) {
        dy_mem = operand(gy, plain(g.dst), want, s, keep);
        dy_desc = want;
      }
      return dy_mem;
    };
    if (ctx->needs_input_grad(0)) {
      dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, any(g.src), any(g.wei), any(g.dst),
                                              g.strides, g.pad, g.pad);
      dnnl::convolution_backward_data::primitive_desc pd(d, cpu(), hint);
      dnnl::memory dy = diff_dst(pd.diff_dst_desc());
      dnnl::memory wei = operand(w, layout->blocked, pd.weights_desc(), s, keep);
      gx = torch::empty(c10::IntArrayRef(g.src), torch::kFloat);
      dnnl::memory dx = result(gx, plain(g.src), pd.diff_src_desc(), keep);
      dnnl::convolution_backward_data(pd).execute(
          s, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, dx}});
      finish(dx, gx, plain(g.src), s);
    }
    if (ctx->needs_input_grad(1) || ctx->needs_input_grad(2)) {
      dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, any(g.src), any(g.wei),
                                                 plain(g.bias), any(g.dst), g.strides, g.pad, g.pad);
      dnnl::convolution_backward_weights::primitive_desc pd(d, cpu(), hint);
      dnnl::memory src = operand(x, plain(g.src), pd.src_desc(), s, keep);
      dnnl::memory dy = diff_dst(pd.diff_dst_desc());
      gw = torch::empty(c10::IntArrayRef(g.wei), torch::kFloat);
      gb = torch::empty(c10::IntArrayRef(g.bias), torch::kFloat);
      dnnl::memory dw = result(gw, layout->blocked, pd.diff_weights_desc(), keep);
      dnnl::memory db(plain(g.bias), cpu(), gb.data_ptr());
      dnnl::convolution_backward_weights(pd).execute(
          s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, dw}, {DNNL_ARG_DIFF_BIAS, db}});
      finish(dw, gw, layout->blocked, s);
    }
    s.wait();
    return {gx, gw, gb, Tensor()};
  }
};

void relayout(const Tensor& t, const md& from, const md& to) {
  if (!t.defined()) return;
  if (t.scalar_type() != torch::kFloat || !t.is_contiguous() || !t.device().is_cpu())
    throw Error("packed conv weights: expected a contiguous fp32 CPU tensor");
  torch::NoGradGuard no_grad;
  Tensor tmp = torch::empty_like(t);
  dnnl::stream s(cpu());
  reorder(from, t.data_ptr(), to, tmp.data_ptr(), s);
  s.wait();
  t.copy_(tmp);
}

}  // namespace

bool packed_conv_supported() { return true; }

PackedLayoutPtr choose_packed_layout(const Tensor& weight, bool winograd) {
  if (!weight.device().is_cpu() || weight.scalar_type() != torch::kFloat) return nullptr;
  if ((weight.dim() != 4 && weight.dim() != 5) || weight.size(2) != 3 || weight.size(3) != 3) return nullptr;
  if (weight.dim() == 5 && weight.size(4) != 3) return nullptr;
  if (winograd)
    if (auto pieces = choose_winograd_layout(weight)) return pieces;
  const dims_t wei = dims_of(weight.sizes());
  // A nominal input: the direct kernels choose their weight order by channels and ISA, and
  // each call checks the order it gets (a different pick costs one reorder, never accuracy).
  dims_t x{1, wei[1], 16, 16};
  if (wei.size() == 5) x.insert(x.begin() + 2, 8);
  md picked;
  try {
    picked = forward_pd(geometry(c10::IntArrayRef(x), wei)).weights_desc();
  } catch (const dnnl::error&) {
    return nullptr;
  }
  if (picked == plain(wei) || picked.get_size() != static_cast<size_t>(weight.numel()) * sizeof(float)) return nullptr;
  auto layout = std::make_shared<PackedLayout>();
  layout->weight_dims = wei;
  layout->blocked = picked;
  return register_layout(std::move(layout));
}

bool layout_is_winograd(const PackedLayout& layout) { return layout.taps || layout.chunks > 0; }

int64_t layout_fingerprint(const PackedLayout& layout) {
  // FNV-1a over the blocking that defines the order: strides and the inner blocks.
  const dnnl_memory_desc_t& d = layout.blocked.data;
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](int64_t v) {
    h ^= static_cast<uint64_t>(v);
    h *= 1099511628211ull;
  };
  mix(layout.taps);
  mix(layout.chunks);
  mix(d.ndims);
  for (int i = 0; i < d.ndims; ++i) mix(d.dims[i]), mix(d.padded_dims[i]), mix(d.format_desc.blocking.strides[i]);
  const auto& b = d.format_desc.blocking;
  mix(b.inner_nblks);
  for (int i = 0; i < b.inner_nblks; ++i) mix(b.inner_blks[i]), mix(b.inner_idxs[i]);
  return static_cast<int64_t>(h & ((uint64_t{1} << 52) - 1));
}

void pack_(const Tensor& t, const PackedLayout& layout) {
  if (layout_is_winograd(layout)) return pack_pieces_(t, layout);
  relayout(t, plain(layout.weight_dims), layout.blocked);
}
void unpack_(const Tensor& t, const PackedLayout& layout) {
  if (layout_is_winograd(layout)) return unpack_pieces_(t, layout);
  relayout(t, layout.blocked, plain(layout.weight_dims));
}

Tensor packed_conv(const Tensor& x, const Tensor& weight, const Tensor& bias, const PackedLayoutPtr& layout) {
  if (x.dim() != static_cast<int64_t>(layout->weight_dims.size()) || x.size(1) != layout->weight_dims[1])
    throw Error("packed conv: the input does not fit the weight");
  if (layout_is_winograd(*layout)) return winograd_conv(x, weight, bias, layout->id);
  return PackedConv::apply(x, weight, bias, layout->id);
}

Tensor packed_conv_causal(const Tensor& x, const Tensor& weight, const Tensor& bias, const PackedLayoutPtr& layout) {
  if (!layout->taps || x.dim() != 5 || x.size(1) != layout->weight_dims[1] || x.size(2) < 3 || !bias.defined())
    throw Error("packed causal conv: the input does not fit the weight");
  return winograd_causal_conv(x, weight, bias, layout->id);
}

#else  // no oneDNN API in this build: nothing is ever packed

struct PackedLayout {};
bool packed_conv_supported() { return false; }
int64_t layout_fingerprint(const PackedLayout&) { return 0; }
bool layout_is_winograd(const PackedLayout&) { return false; }
double winograd_taps_scratch_bytes(int64_t, int64_t, int64_t, int64_t, int64_t) { return 0; }
PackedLayoutPtr choose_packed_layout(const Tensor&, bool) { return nullptr; }
void pack_(const Tensor&, const PackedLayout&) { throw Error("packed conv weights need oneDNN"); }
void unpack_(const Tensor&, const PackedLayout&) { throw Error("packed conv weights need oneDNN"); }
Tensor packed_conv(const Tensor&, const Tensor&, const Tensor&, const PackedLayoutPtr&) {
  throw Error("packed conv weights need oneDNN");
}
Tensor packed_conv_causal(const Tensor&, const Tensor&, const Tensor&, const PackedLayoutPtr&) {
  throw Error("packed conv weights need oneDNN");
}
size_t& causal_conv_scratch_limit() {
  static size_t limit = 0;
  return limit;
}
int64_t causal_conv_band_rows(c10::IntArrayRef, const PackedLayout&) { return 0; }

#endif

}  // namespace ws::models
