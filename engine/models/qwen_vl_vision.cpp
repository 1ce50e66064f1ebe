// SPDX-License-Identifier: Apache-2.0
#include "models/qwen_vl_vision.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "models/cpu_gemm.h"

namespace ws::models {
namespace {

constexpr double kRopeTheta = 10000.0;  // the tower's axial rope (transformers' default_theta)
// Largest score tensor one batched attention step builds (elements): bounds memory on big frames.
constexpr int64_t kScoreBudget = int64_t{1} << 27;

std::string vision_block_key(int64_t i, const char* rest) { return "blocks." + std::to_string(i) + "." + rest; }

std::string grid_str(const std::array<int64_t, 3>& g) {
  return "[" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) + "]";
}

void check_config(const QwenVisionConfig& c, const std::string& where) {
  auto fail = [&](const std::string& m) { throw Error(where + ": Qwen2.5-VL vision config: " + m); };
  if (c.depth < 1 || c.hidden_size < 1 || c.intermediate_size < 1 || c.num_heads < 1 || c.in_chans < 1 ||
      c.out_hidden_size < 1 || c.patch_size < 1 || c.spatial_merge_size < 1 || c.temporal_patch_size < 1)
    fail("sizes must be positive");
  if (c.hidden_size % c.num_heads)
    fail("hidden_size " + std::to_string(c.hidden_size) + " is not a multiple of num_heads " +
         std::to_string(c.num_heads));
  // The 2-D rotary gives head_dim/4 frequencies to each of h and w, then repeats the half.
  if (c.head_dim() % 4) fail("head_dim " + std::to_string(c.head_dim()) + " is not a multiple of 4");
  if (c.window_units() < 1)
    fail("window_size " + std::to_string(c.window_size) + " spans no merged unit (patch " +
         std::to_string(c.patch_size) + " × merge " + std::to_string(c.spatial_merge_size) + ")");
  if (!(c.eps > 0)) fail("eps must be positive");
}

void check_grid(const QwenVisionConfig& c, const std::array<int64_t, 3>& g) {
  if (g[0] < 1 || g[1] < 1 || g[2] < 1) throw Error("Qwen2.5-VL vision: grid " + grid_str(g) + " must be positive");
  const int64_t m = c.spatial_merge_size;
  if (g[1] % m || g[2] % m)
    throw Error("Qwen2.5-VL vision: grid " + grid_str(g) + " h and w must be multiples of the merge size " +
                std::to_string(m));
}

// q * cos + rotate_half(q) * sin in fp32, back in q's dtype. q [N, H, dh]; cos, sin [N, 1, dh].
torch::Tensor rope(const torch::Tensor& q, const torch::Tensor& cos, const torch::Tensor& sin) {
  const torch::Tensor x = q.to(torch::kFloat);
  const int64_t half = x.size(-1) / 2;
  const torch::Tensor rot = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return (x * cos + rot * sin).to(q.scalar_type());
}

// Softmax attention within each segment [cu[i], cu[i+1]) of the rows; q, k, v [N, H, dh].
// Segments of one length are gathered into one bmm over (segment, head).
torch::Tensor segment_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                const std::vector<int64_t>& cu, double scale) {
  const int64_t N = q.size(0), H = q.size(1), dh = q.size(2);
  std::map<int64_t, std::vector<int64_t>> starts;  // length -> first rows
  for (size_t i = 0; i + 1 < cu.size(); ++i)
    if (cu[i + 1] > cu[i]) starts[cu[i + 1] - cu[i]].push_back(cu[i]);
  torch::Tensor out = torch::empty({N, H * dh}, q.options());
  const auto idx_opts = torch::TensorOptions().dtype(torch::kInt64).device(q.device());
  for (const auto& [L, first] : starts) {
    const int64_t per = std::max<int64_t>(1, kScoreBudget / (H * L * L));
    for (size_t s0 = 0; s0 < first.size(); s0 += static_cast<size_t>(per)) {
      const size_t s1 = std::min(first.size(), s0 + static_cast<size_t>(per));
      const auto n = static_cast<int64_t>(s1 - s0);
      const std::vector<int64_t> chunk(first.begin() + static_cast<std::ptrdiff_t>(s0),
                                       first.begin() + static_cast<std::ptrdiff_t>(s1));
      const torch::Tensor rows =
          (torch::tensor(chunk, torch::kInt64).to(q.device()).view({n, 1}) + torch::arange(L, idx_opts).view({1, L}))
              .view({-1});
      auto heads = [&](const torch::Tensor& t) {  // [n·L, H, dh] -> [n·H, L, dh]
        return t.index_select(0, rows).view({n, L, H, dh}).permute({0, 2, 1, 3}).reshape({n * H, L, dh});
      };
      const torch::Tensor qs = heads(q), ks = heads(k), vs = heads(v);
      // As the reference's eager path: scores in the compute dtype, softmax in fp32.
      const torch::Tensor s = torch::bmm(qs, ks.transpose(1, 2)) * scale;
      const torch::Tensor p = torch::softmax(s.to(torch::kFloat), -1).to(q.scalar_type());
      const torch::Tensor o = torch::bmm(p, vs).view({n, H, L, dh}).permute({0, 2, 1, 3}).reshape({n * L, H * dh});
      out.index_copy_(0, rows, o);
    }
  }
  return out;
}

}  // namespace

std::pair<torch::Tensor, std::vector<int64_t>> qwen_window_index(const QwenVisionConfig& c,
                                                                 const std::array<int64_t, 3>& grid) {
  check_grid(c, grid);
  const int64_t win = c.window_units();
  if (win < 1) throw Error("Qwen2.5-VL vision: window_size " + std::to_string(c.window_size) + " spans no merged unit");
  const int64_t t = grid[0], lh = grid[1] / c.spatial_merge_size, lw = grid[2] / c.spatial_merge_size;
  // The reference pads by a whole window when a side divides evenly: that window is empty and
  // its zero length disappears in unique_consecutive, which skipping empty windows reproduces.
  const int64_t nwh = lh / win + 1, nww = lw / win + 1;
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(t * lh * lw));
  std::vector<int64_t> cu{0};
  for (int64_t f = 0; f < t; ++f)
    for (int64_t a = 0; a < nwh; ++a)
      for (int64_t b = 0; b < nww; ++b) {
        int64_t count = 0;
        for (int64_t r = a * win; r < std::min(lh, (a + 1) * win); ++r)
          for (int64_t q = b * win; q < std::min(lw, (b + 1) * win); ++q, ++count)
            index.push_back((f * lh + r) * lw + q);
        if (count) cu.push_back(cu.back() + count * c.merge_unit());
      }
  return {torch::tensor(index, torch::kInt64), cu};
}

torch::Tensor qwen_vision_position_ids(const QwenVisionConfig& c, const std::array<int64_t, 3>& grid) {
  check_grid(c, grid);
  const int64_t m = c.spatial_merge_size, t = grid[0], h = grid[1], w = grid[2];
  const std::vector<int64_t> blocks{h / m, m, w / m, m};
  // Block-major like the processor's patches: each merged unit's m×m patches are consecutive.
  const torch::Tensor hp = torch::arange(h, torch::kInt64).view({h / m, m, 1, 1}).expand(blocks);
  const torch::Tensor wp = torch::arange(w, torch::kInt64).view({1, 1, w / m, m}).expand(blocks);
  auto flat = [](const torch::Tensor& x) { return x.permute({0, 2, 1, 3}).reshape({-1}); };
  return torch::stack({flat(hp), flat(wp)}, -1).repeat({t, 1});
}

QwenVisionTower::QwenVisionTower(QwenVisionConfig config, io::StateDict weights, const std::string& source)
    : config_(std::move(config)), weights_(std::move(weights)) {
  check_config(config_, source);
  const QwenVisionConfig& c = config_;
  const int64_t d = c.hidden_size, f = c.intermediate_size, mh = d * c.merge_unit();
  std::map<std::string, std::vector<int64_t>> want{
      {"patch_embed.proj.weight", {d, c.in_chans, c.temporal_patch_size, c.patch_size, c.patch_size}},
      {"merger.ln_q.weight", {d}},
      {"merger.mlp.0.weight", {mh, mh}},
      {"merger.mlp.0.bias", {mh}},
      {"merger.mlp.2.weight", {c.out_hidden_size, mh}},
      {"merger.mlp.2.bias", {c.out_hidden_size}}};
  // Each block holds 12 tensors: a depth the file cannot hold is refused before its expectations
  // are built (a hostile depth would exhaust memory here).
  if (c.depth > static_cast<int64_t>(weights_.tensors().size()) / 12)
    throw Error(source + ": the config has " + std::to_string(c.depth) + " vision blocks, the weights " +
                std::to_string(weights_.tensors().size()) + " tensors in all");
  for (int64_t i = 0; i < c.depth; ++i) {
    want[vision_block_key(i, "norm1.weight")] = {d};
    want[vision_block_key(i, "norm2.weight")] = {d};
    want[vision_block_key(i, "attn.qkv.weight")] = {3 * d, d};
    want[vision_block_key(i, "attn.qkv.bias")] = {3 * d};
    want[vision_block_key(i, "attn.proj.weight")] = {d, d};
    want[vision_block_key(i, "attn.proj.bias")] = {d};
    for (const char* p : {"mlp.gate_proj", "mlp.up_proj"}) {
      want[vision_block_key(i, p) + ".weight"] = {f, d};
      want[vision_block_key(i, p) + ".bias"] = {f};
    }
    want[vision_block_key(i, "mlp.down_proj.weight")] = {d, f};
    want[vision_block_key(i, "mlp.down_proj.bias")] = {d};
  }
  weights_.check(want, source, "Qwen2.5-VL vision weight", [](const std::string& k) {
    return k.rfind("visual.", 0) == 0 ? "strip the \"visual.\" prefix" : "not a Qwen2.5-VL vision tower";
  });
}

void QwenVisionTower::set_compute_dtype(torch::ScalarType dtype) {
  if (dtype != torch::kFloat && dtype != torch::kBFloat16) throw Error("Qwen2.5-VL vision computes in fp32 or bf16");
  dtype_ = dtype;
  weights_.drop_buffers();
}

void QwenVisionTower::to(const torch::Device& device) { weights_.to(device); }

const torch::Tensor& QwenVisionTower::w(const std::string& key) const { return weights_.at(key); }

torch::Tensor QwenVisionTower::cw(const std::string& key) const { return weights_.cast(key, dtype_); }

torch::Tensor QwenVisionTower::linear(const torch::Tensor& x, const std::string& prefix) const {
  return gemm_linear(x, cw(prefix + ".weight"), w(prefix + ".bias").to(dtype_));  // a bias is small: no buffer
}

torch::Tensor QwenVisionTower::norm(const torch::Tensor& x, const std::string& key) const {
  // RMS norm: statistics in fp32, normalised value cast back before the weight.
  const torch::Tensor xf = x.to(torch::kFloat);
  const torch::Tensor r = xf * torch::rsqrt(xf.pow(2).mean(-1, true) + config_.eps);
  return w(key).to(dtype_) * r.to(dtype_);
}

torch::Tensor QwenVisionTower::forward(const torch::Tensor& patches, const std::array<int64_t, 3>& grid,
                                       QwenVisionTrace* trace) const {
  torch::NoGradGuard no_grad;
  const QwenVisionConfig& c = config_;
  check_grid(c, grid);
  const int64_t N = grid[0] * grid[1] * grid[2], U = c.merge_unit(), d = c.hidden_size;
  const int64_t H = c.num_heads, dh = c.head_dim();
  if (patches.dim() != 2 || patches.size(0) != N || patches.size(1) != c.patch_values())
    throw Error("Qwen2.5-VL vision: patches must be [" + std::to_string(N) + ", " + std::to_string(c.patch_values()) +
                "] for grid " + grid_str(grid) + ", got " + io::shape_str(patches.sizes().vec()));
  if (!patches.is_floating_point()) throw Error("Qwen2.5-VL vision: patches must be floating point");
  const torch::Device dev = w("merger.ln_q.weight").device();
  auto keep = [&](const std::string& name, const torch::Tensor& t) {
    if (trace) trace->tensors[name] = t.detach().to(torch::kCPU);
  };

  auto [window_index, cu_window] = qwen_window_index(c, grid);
  std::vector<int64_t> cu_full;  // full attention: each temporal slice is its own sequence
  for (int64_t f = 0; f <= grid[0]; ++f) cu_full.push_back(f * grid[1] * grid[2]);
  const torch::Tensor win = window_index.to(dev);
  // Rows are permuted a merged unit (U consecutive patches) at a time.
  auto to_window_order = [&](const torch::Tensor& x) {
    return x.reshape({N / U, U, x.size(-1)}).index_select(0, win).reshape({N, x.size(-1)});
  };
  if (trace) {
    keep("window_index", window_index);
    keep("cu_window_seqlens", torch::tensor(cu_window, torch::kInt64));
    keep("cu_seqlens", torch::tensor(cu_full, torch::kInt64));
  }

  // Conv3d with stride = kernel over one patch each: a matmul with the flattened kernel.
  torch::Tensor x = torch::matmul(patches.to(dev, dtype_), cw("patch_embed.proj.weight").reshape({d, -1}).t());
  keep("patch_embed", x);
  x = to_window_order(x);

  // 2-D rotary: head_dim/4 frequencies for h, then for w; the half repeated (emb = cat(r, r)).
  const auto fopts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  const int64_t sd = dh / 2;
  const torch::Tensor inv_freq = torch::reciprocal(torch::pow(kRopeTheta, torch::arange(0, sd, 2, fopts) / sd));
  const torch::Tensor pos = qwen_vision_position_ids(c, grid).to(dev).to(torch::kFloat);  // [N, 2]
  const torch::Tensor hw = (pos.unsqueeze(-1) * inv_freq).reshape({N, sd});               // [N, dh/2]
  const torch::Tensor emb = to_window_order(torch::cat({hw, hw}, -1));                    // [N, dh]
  const torch::Tensor cos = emb.cos().unsqueeze(1), sin = emb.sin().unsqueeze(1);         // [N, 1, dh]
  const double scale = 1.0 / std::sqrt(static_cast<double>(dh));

  for (int64_t i = 0; i < c.depth; ++i) {
    const bool full =
        std::find(c.fullatt_block_indexes.begin(), c.fullatt_block_indexes.end(), i) != c.fullatt_block_indexes.end();
    const torch::Tensor y = norm(x, vision_block_key(i, "norm1.weight"));
    const torch::Tensor qkv = linear(y, vision_block_key(i, "attn.qkv")).view({N, 3, H, dh});
    const torch::Tensor q = rope(qkv.select(1, 0), cos, sin);
    const torch::Tensor k = rope(qkv.select(1, 1), cos, sin);
    const torch::Tensor o = segment_attention(q, k, qkv.select(1, 2), full ? cu_full : cu_window, scale);
    x = x + linear(o, vision_block_key(i, "attn.proj"));
    const torch::Tensor y2 = norm(x, vision_block_key(i, "norm2.weight"));
    // SwiGLU; one weight at a time (gate and up share cw's buffer).
    const torch::Tensor gate = torch::silu(linear(y2, vision_block_key(i, "mlp.gate_proj")));
    const torch::Tensor h = gate * linear(y2, vision_block_key(i, "mlp.up_proj"));
    x = x + linear(h, vision_block_key(i, "mlp.down_proj"));
    keep("block" + std::to_string(i) + "_out", x);
  }

  // Merger: each merged unit's U patches (consecutive in window order too) become one token.
  torch::Tensor m = norm(x, "merger.ln_q.weight").reshape({N / U, U * d});
  m = torch::gelu(linear(m, "merger.mlp.0"));  // exact (erf) GELU
  m = linear(m, "merger.mlp.2");
  keep("merged", m);
  return m.index_select(0, torch::argsort(win)).to(torch::kFloat);
}

}  // namespace ws::models
