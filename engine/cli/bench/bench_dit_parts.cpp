// SPDX-License-Identifier: Apache-2.0
// `bench dit-train --breakdown`: where a DiT training step's time goes. Each part of one block is
// timed alone, forward and backward, on the step's shapes and the model's own modules; the
// optimizer and the clipping over the whole model. packaging/bench_reference_dit.py --breakdown
// times the same parts with the reference's functions, so the two tables line up row for row.
#include "cli/bench/bench_dit_parts.h"

#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "cli/bench/bench.h"
#include "models/cpu_gemm.h"
#include "models/wan_dit_ops.h"

namespace ws::cli {
namespace {

// Median ms of `reps` runs of fn after one untimed run.
double part_ms(int64_t reps, const std::function<void()>& fn) {
  fn();
  std::vector<double> ms;
  for (int64_t i = 0; i < reps; ++i) {
    const double t0 = bench_now_ms();
    fn();
    ms.push_back(bench_now_ms() - t0);
  }
  return bench_median(ms);
}

// Forward then backward of f on leaves that ask for gradients; the gradients are dropped after.
void fwd_bwd(const std::function<torch::Tensor()>& f, const std::vector<torch::Tensor>& leaves) {
  auto y = f();
  y.backward(torch::ones_like(y));
  for (auto t : leaves) t.mutable_grad() = torch::Tensor();
}

torch::Tensor leaf(std::vector<int64_t> shape) { return torch::randn(shape).requires_grad_(true); }

}  // namespace

nlohmann::json dit_step_parts(models::WanModel& model, train::ExpertStep& step, int64_t tokens, int64_t text,
                              int64_t reps) {
  const auto& cfg = model->config();
  const int64_t L = tokens, T = text, D = cfg.dim, n = cfg.num_heads, d = D / n;
  auto* block = model->blocks[0]->as<models::WanBlockImpl>();
  std::vector<torch::Tensor> block_params;
  for (const auto& p : block->parameters()) block_params.push_back(p);
  auto drop_block_grads = [&] {
    for (auto& p : block_params) p.mutable_grad() = torch::Tensor();
  };
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  nlohmann::json per_block;

  // Attention alone: self over L×L, cross over L×T (no stored probabilities either side).
  {
    auto q = leaf({n, L, d}), k = leaf({n, L, d}), v = leaf({n, L, d});
    auto kc = leaf({n, T, d}), vc = leaf({n, T, d});
    per_block["attention"] = part_ms(reps, [&] {
      fwd_bwd([&] { return models::wan_attention(q, k, v, scale); }, {q, k, v});
      fwd_bwd([&] { return models::wan_attention(q, kc, vc, scale); }, {q, kc, vc});
    });
  }
  // The block's ten Linears with its own weights: q, k, v, o of self-attention on L rows; q, o on L
  // and k, v on the T context rows of cross-attention; the FFN's two.
  {
    auto x = leaf({L, D}), c = leaf({T, D}), hidden = leaf({L, cfg.ffn_dim});
    auto& sa = *block->self_attn;
    auto& ca = *block->cross_attn;
    // Through the engine's Linear (models/cpu_gemm.h), as the block runs them.
    auto lin = [](torch::nn::Linear& m, const torch::Tensor& in) {
      return models::gemm_linear(in, m->weight, m->bias);
    };
    per_block["linears"] = part_ms(reps, [&] {
      fwd_bwd(
          [&] {
            auto y = lin(sa.q, x) + lin(sa.k, x) + lin(sa.v, x) + lin(sa.o, x) + lin(ca.q, x) + lin(ca.o, x) +
                     lin(block->ffn->l2, hidden);
            return y.sum() + (lin(ca.k, c) + lin(ca.v, c)).sum() + lin(block->ffn->l0, x).sum();
          },
          {x, c, hidden});
      drop_block_grads();
    });
  }
  // Norms, modulation, gating, GELU: the block's elementwise work but RoPE.
  {
    auto x = leaf({L, D}), m = leaf({1, 6, D}), h = leaf({L, cfg.ffn_dim}), qk = leaf({L, D});
    auto w = torch::ones({D}).requires_grad_(true);
    per_block["norms_modulation"] = part_ms(reps, [&] {
      fwd_bwd(
          [&] {
            auto mod = block->modulation + m;
            auto c = [&](int64_t i) { return mod.select(1, i); };
            auto a = torch::layer_norm(x, {D}, {}, {}, cfg.eps) * (1 + c(1)) + c(0);
            auto r = x + a * c(2);
            auto f = torch::layer_norm(r, {D}, {}, {}, cfg.eps) * (1 + c(4)) + c(3);
            auto g = r + f * c(5);
            auto n3 = block->norm3 ? block->norm3(g) : g;
            auto norms = models::wan_rms_norm(qk, w, cfg.eps) + models::wan_rms_norm(qk, w, cfg.eps) +
                         models::wan_rms_norm(n3, w, cfg.eps);
            return g.sum() + norms.sum() + torch::gelu(h, "tanh").sum();
          },
          {x, m, h, qk, w});
      drop_block_grads();
    });
  }
  // RoPE on the self-attention's queries and keys.
  {
    const auto grid = bench_token_grid(tokens);
    auto table = models::wan_rope_table(models::wan_rope_angles(d, grid[0], grid[1] / 2, grid[2] / 2));
    auto q = leaf({L, n, d}), k = leaf({L, n, d});
    per_block["rope"] = part_ms(reps, [&] {
      fwd_bwd([&] { return models::wan_rope_apply(q, table) + models::wan_rope_apply(k, table); }, {q, k});
    });
  }

  // The trainer's own update and clipping over every parameter of the model, gradients present:
  // finish_gradients measures the norm and the largest |g| and scales (a clipped step), update()
  // is AdamW.
  auto fill_grads = [&] {
    for (auto& p : step.optimizer_tensors()) p.mutable_grad() = torch::randn_like(p) * 1e-3;
  };
  nlohmann::json whole;
  fill_grads();
  whole["clip"] = part_ms(reps, [&] { step.finish_gradients(); });
  whole["adamw"] = part_ms(reps, [&] { step.update(); });
  step.release_gradients();
  return {{"per_block_ms", per_block}, {"whole_model_ms", whole}, {"reps", reps}};
}

}  // namespace ws::cli
