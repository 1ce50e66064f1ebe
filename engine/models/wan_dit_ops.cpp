// SPDX-License-Identifier: Apache-2.0
#include "models/wan_dit_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/interrupt.h"
#include "models/cpu_attention.h"
#include "models/cpu_gemm.h"

namespace ws::models {

torch::Tensor wan_sinusoidal_embedding(const torch::Tensor& t, int64_t freq_dim) {
  const int64_t half = freq_dim / 2;
  auto pos = t.detach().to(torch::kDouble).flatten();
  // ω_j = 10000^(−j/half), as torch.pow(10000, -arange(half)/half) in float64.
  auto omega = torch::pow(10000.0, -torch::arange(half, torch::kDouble).div(static_cast<double>(half)));
  auto s = torch::outer(pos, omega);
  return torch::cat({torch::cos(s), torch::sin(s)}, 1).to(torch::kFloat);
}

namespace {
// rope_params(1024, dim): angle[pos, j] = pos / θ^(2j/dim), in double.
torch::Tensor rope_axis(int64_t len, int64_t axis_dim) {
  auto inv =
      1.0 / torch::pow(10000.0, torch::arange(0, axis_dim, 2, torch::kDouble).div(static_cast<double>(axis_dim)));
  return torch::outer(torch::arange(len, torch::kDouble), inv);
}
}  // namespace

torch::Tensor wan_rope_angles(int64_t head_dim, int64_t F, int64_t H, int64_t W) {
  const int64_t d = head_dim;
  // The reference's table widths: d − 4⌊d/6⌋ for time, 2⌊d/6⌋ for h and w.
  auto at = rope_axis(F, d - 4 * (d / 6)), ah = rope_axis(H, 2 * (d / 6)), aw = rope_axis(W, 2 * (d / 6));
  auto t = at.view({F, 1, 1, -1}).expand({F, H, W, at.size(1)});
  auto h = ah.view({1, H, 1, -1}).expand({F, H, W, ah.size(1)});
  auto w = aw.view({1, 1, W, -1}).expand({F, H, W, aw.size(1)});
  return torch::cat({t, h, w}, -1).reshape({F * H * W, -1});
}

torch::Tensor wan_rope_table(const torch::Tensor& angles) {
  // [L, 1, c, 2] each: (cos, cos) and (−sin, sin), so a pair (a, b) turns into
  // (a·cos − b·sin, b·cos + a·sin) with two products and one sum.
  const int64_t L = angles.size(0), c = angles.size(1);
  auto cs = torch::cos(angles), sn = torch::sin(angles);
  return torch::stack({torch::stack({cs, cs}, -1), torch::stack({-sn, sn}, -1)}, 0).view({2, L, 1, c, 2});
}

torch::Tensor wan_rope_apply(const torch::Tensor& x, const torch::Tensor& table) {
  const int64_t L = x.size(0), n = x.size(1), c = x.size(2) / 2;
  auto xd = x.to(torch::kDouble).reshape({L, n, c, 2});
  auto rotated = xd * table[0] + xd.flip(-1) * table[1];
  return rotated.reshape({L, n, 2 * c}).to(x.scalar_type());
}

torch::Tensor wan_rms_norm(const torch::Tensor& x, const torch::Tensor& w, double eps) {
  auto xf = x.to(torch::kFloat);
  auto y = xf * torch::rsqrt(xf.pow(2).mean(-1, true) + eps);
  return y.to(x.scalar_type()) * w;
}

namespace {

// Blocks of heads × query rows whose scores stay within `max_scores` elements: whole heads when
// one head's scores fit (each key and value is then read for its head only once), else rows of
// one head. On the CPU at most kCpuScoreBlock: a block of scores then stays in the caches through
// the scale, the softmax and, in backward, the products that use it.
constexpr int64_t kCpuScoreBlock = int64_t{1} << 20;

struct ScoreBlock {
  int64_t h0, h1, r0, r1;
};

template <typename F>
void for_each_block(int64_t n, int64_t Lq, int64_t Lk, int64_t max_scores, F&& f) {
  const int64_t per_head = Lq * std::max<int64_t>(1, Lk);
  if (per_head <= max_scores) {
    const int64_t heads = std::max<int64_t>(1, max_scores / per_head);
    for (int64_t h = 0; h < n; h += heads) f(ScoreBlock{h, std::min(n, h + heads), 0, Lq});
    return;
  }
  const int64_t rows = std::max<int64_t>(1, max_scores / std::max<int64_t>(1, Lk));
  for (int64_t h = 0; h < n; ++h)
    for (int64_t r = 0; r < Lq; r += rows) f(ScoreBlock{h, h + 1, r, std::min(Lq, r + rows)});
}

int64_t score_budget(const torch::Tensor& q, int64_t max_scores) {
  return q.is_cuda() ? max_scores : std::min(max_scores, kCpuScoreBlock);
}

// softmax(q kᵀ · scale) for one block of queries: the scale is the GEMM's alpha (no pass of its
// own over the scores) and the softmax is taken in place (one score-sized buffer, half the cache).
torch::Tensor chunk_probabilities(const torch::Tensor& qc, const torch::Tensor& kt, double scale) {
  auto s = gemm(qc, kt, static_cast<float>(scale));
  at::_softmax_out(s, s, -1, false);
  return s;
}

// Attention with per-chunk recomputation in backward (the probabilities are never stored).
struct ChunkedAttention : public torch::autograd::Function<ChunkedAttention> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, double scale, int64_t max_scores) {
    torch::Tensor out;
    {
      torch::NoGradGuard no_grad;
      out = wan_attention(q, k, v, scale, max_scores);
    }
    ctx->save_for_backward({q, k, v, out});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["max_scores"] = max_scores;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3];
    const double scale = ctx->saved_data["scale"].toDouble();
    const int64_t max_scores = ctx->saved_data["max_scores"].toInt();
    auto go = grad_out[0];
    auto dq = torch::empty_like(q), dk = torch::zeros_like(k), dv = torch::zeros_like(v);
    // Σ_j dp_ij·p_ij = dO_i·O_i: the softmax backward's row term from the output, not from another
    // score-sized product (as flash attention's backward does).
    auto row = (go * out).sum(-1, true);
    // Every row block adds to the whole of dk and dv: with long keys (16k tokens: 64 rows a block)
    // that re-reading outweighs the cache, so backward takes at least 256 rows a block.
    const int64_t budget = score_budget(q, max_scores), Lk = k.size(1);
    const int64_t bwd_budget = max_scores > kCpuScoreBlock ? std::max(budget, 256 * Lk) : budget;
    for_each_block(q.size(0), q.size(1), Lk, bwd_budget, [&](const ScoreBlock& b) {
      auto qc = q.slice(0, b.h0, b.h1).slice(1, b.r0, b.r1), goc = go.slice(0, b.h0, b.h1).slice(1, b.r0, b.r1);
      auto kc = k.slice(0, b.h0, b.h1), vc = v.slice(0, b.h0, b.h1);
      auto p = chunk_probabilities(qc, kc.transpose(1, 2), scale);
      auto dvc = dv.slice(0, b.h0, b.h1), dkc = dk.slice(0, b.h0, b.h1);
      gemm_into(dvc, p.transpose(1, 2), goc, 1.f);
      // ds = (dp − row) · p, in dp's buffer.
      auto ds = gemm(goc, vc.transpose(1, 2));
      ds.sub_(row.slice(0, b.h0, b.h1).slice(1, b.r0, b.r1)).mul_(p);
      p = torch::Tensor();
      auto dqc = dq.slice(0, b.h0, b.h1).slice(1, b.r0, b.r1);
      gemm_into(dqc, ds, kc);
      gemm_into(dkc, ds.transpose(1, 2), qc, 1.f);
    });
    dq.mul_(scale);
    dk.mul_(scale);
    return {dq, dk, dv, torch::Tensor(), torch::Tensor()};
  }
};

// linear(gelu(h)) keeping only h for backward: the GELU's output, as wide as h, is made again
// there (one elementwise pass) instead of being stored for the product's weight gradient. The
// products are gemm_linear's own backward (dW = dyᵀ·g), so the gradients are the same bits.
struct GeluLinear : public torch::autograd::Function<GeluLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& w,
                               const torch::Tensor& b) {
    ctx->save_for_backward({h, w});
    return gemm_linear(torch::gelu(h, "tanh"), w, b);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    const auto &h = saved[0], &w = saved[1];
    const auto dy = grad_out[0].reshape({-1, grad_out[0].size(-1)});
    const auto h2 = h.reshape({-1, h.size(-1)});
    torch::Tensor dh, dw, db;
    if (ctx->needs_input_grad(0)) dh = at::gelu_backward(gemm(dy, w), h2, "tanh").view(h.sizes());
    if (ctx->needs_input_grad(1)) dw = gemm(dy.t(), torch::gelu(h2, "tanh"));
    if (ctx->needs_input_grad(2)) db = dy.sum(0);
    return {dh, dw, db};
  }
};

}  // namespace

torch::Tensor wan_gelu_linear(const torch::Tensor& h, const torch::Tensor& w, const torch::Tensor& b) {
  return GeluLinear::apply(h, w, b);
}

bool fused_attention_available() {
#if WANSTUDIO_HAVE_SDPA
  // WANSTUDIO_SDPA=0 keeps the engine's own attention on a GPU too (to compare the two).
  static const bool on = [] {
    const char* e = std::getenv("WANSTUDIO_SDPA");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return on;
#else
  return false;
#endif
}

torch::Tensor wan_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, double scale,
                            int64_t max_scores) {
#if WANSTUDIO_HAVE_SDPA
  // On a GPU, LibTorch's fused kernels (flash or memory-efficient) keep only the row statistics for
  // backward, which is what the chunked recomputation below does by hand. They want [B, n, L, d].
  if (q.is_cuda() && fused_attention_available())
    return at::scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), {}, 0.0, false, scale)
        .squeeze(0);
#endif
  if (cpu_attention_applies(q, k, v)) return cpu_attention(q, k, v, scale);
  const bool grad = torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  if (grad) return ChunkedAttention::apply(q, k, v, scale, max_scores);
  const int64_t n = q.size(0), Lq = q.size(1), budget = score_budget(q, max_scores);
  if (n * Lq * k.size(1) <= budget) return gemm(chunk_probabilities(q, k.transpose(1, 2), scale), v);
  auto out = torch::empty({n, Lq, v.size(2)}, q.options());
  for_each_block(n, Lq, k.size(1), budget, [&](const ScoreBlock& b) {
    interruption_point();  // one block of a huge attention can take long; a stop need not wait
    auto kc = k.slice(0, b.h0, b.h1), vc = v.slice(0, b.h0, b.h1);
    auto oc = out.slice(0, b.h0, b.h1).slice(1, b.r0, b.r1);
    gemm_into(oc, chunk_probabilities(q.slice(0, b.h0, b.h1).slice(1, b.r0, b.r1), kc.transpose(1, 2), scale), vc);
  });
  return out;
}

}  // namespace ws::models
