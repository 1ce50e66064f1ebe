// SPDX-License-Identifier: Apache-2.0
#include "models/cpu_attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "core/interrupt.h"
#include "models/cpu_parallel.h"
#include "models/cpu_rows.h"

#ifdef WANSTUDIO_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace ws::models {
namespace {

// A tile: 256 query rows × 512 keys, 512 KB of scores beside 128 KB of queries and 256 KB each of
// keys and values at d = 128: the best of 64–512 × 256–1024 measured on a Zen 5 (1 MB of L2 a
// core) at 1024 and 4096 tokens (docs/design/performance.md).
constexpr int64_t kRows = 256;
constexpr int64_t kCols = 512;

int initial_choice() {
  const char* env = std::getenv("WANSTUDIO_ATTENTION");
  const std::string v = env ? env : "";
  if (!v.empty() && v != "tiled" && v != "composed")
    throw Error("WANSTUDIO_ATTENTION must be tiled or composed, not '" + v + "'");
#ifdef WANSTUDIO_HAVE_DNNL
  return v == "composed" ? 0 : 1;
#else
  return 0;
#endif
}

std::atomic<int>& choice_now() {
  static std::atomic<int> c{initial_choice()};
  return c;
}

#ifdef WANSTUDIO_HAVE_DNNL
// One [n, L, d] operand as raw rows: unit stride within a row, rows `rs` apart, heads `hs` apart.
template <typename T>
struct Heads {
  T* p;
  int64_t hs, rs;
  T* row(int64_t h, int64_t r) const { return p + h * hs + r * rs; }
};

template <typename T>
Heads<T> heads_of(const at::Tensor& t) {
  // A length-1 axis may carry any stride; the GEMM wants rows at least a row apart.
  const int64_t rs = t.size(1) == 1 ? std::max(t.stride(1), t.size(2)) : t.stride(1);
  return {t.data_ptr<float>(), t.stride(0), rs};
}

// C = alpha·op(A)·op(B) + beta·C, row-major. Called inside a parallel region, where oneDNN runs
// the product on the calling thread alone.
void gemm1(char ta, char tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
           int64_t ldb, float beta, float* C, int64_t ldc) {
  if (dnnl::sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) != dnnl::status::success)
    throw Error("oneDNN sgemm failed in the attention");
}

// f(begin, end) over work items on all threads (each tile's products then run on their own
// thread), in rounds between which a stop may interrupt.
template <typename F>
void for_items(int64_t items, const F& f) {
  const int64_t round = std::max<int64_t>(1, at::get_num_threads()) * 8;
  for (int64_t b = 0; b < items; b += round) {
    interruption_point();
    cpu_parallel_for(std::min(items, b + round) - b, [&](int64_t lo, int64_t hi) { f(b + lo, b + hi); });
  }
}

at::Tensor unit_rows(const at::Tensor& t) { return t.stride(-1) == 1 ? t : t.contiguous(); }

// out [Lq, n, dv] (viewed [n, Lq, dv]) and, when lse is defined, the rows' log Σ exp [n, Lq].
void tiled_forward(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, float scale, const at::Tensor& out,
                   const at::Tensor& lse) {
  const int64_t n = q.size(0), Lq = q.size(1), Lk = k.size(1), d = q.size(2), dv = v.size(2);
  const auto Q = heads_of<const float>(q), K = heads_of<const float>(k), V = heads_of<const float>(v);
  const auto O = heads_of<float>(out.transpose(0, 1));
  float* L = lse.defined() ? lse.data_ptr<float>() : nullptr;
  const int64_t blocks = (Lq + kRows - 1) / kRows;
  for_items(n * blocks, [&](int64_t begin, int64_t end) {
    std::vector<float> s(kRows * kCols), m(kRows), l(kRows);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t h = item / blocks, r0 = item % blocks * kRows, rows = std::min(kRows, Lq - r0);
      float* o = O.row(h, r0);
      for (int64_t c0 = 0; c0 < Lk; c0 += kCols) {
        const int64_t cols = std::min(kCols, Lk - c0);
        const bool first = c0 == 0;
        gemm1('N', 'T', rows, cols, d, scale, Q.row(h, r0), Q.rs, K.row(h, c0), K.rs, 0.f, s.data(), kCols);
        for (int64_t i = 0; i < rows; ++i) {
          float* si = s.data() + i * kCols;
          const float top = first ? rows::max(si, cols) : std::max(m[i], rows::max(si, cols));
          const float sum = rows::exp_sum(si, cols, top);
          if (first) {
            l[i] = sum;
          } else {
            // The rows' earlier blocks were weighed against a smaller maximum: bring them to this one.
            const float c = std::exp(m[i] - top);
            l[i] = l[i] * c + sum;
            if (c != 1.f) rows::scale(o + i * O.rs, dv, c);
          }
          m[i] = top;
        }
        gemm1('N', 'N', rows, dv, cols, 1.f, s.data(), kCols, V.row(h, c0), V.rs, first ? 0.f : 1.f, o, O.rs);
      }
      for (int64_t i = 0; i < rows; ++i) {
        rows::scale(o + i * O.rs, dv, 1.f / l[i]);
        if (L) L[h * Lq + r0 + i] = m[i] + std::log(l[i]);
      }
    }
  });
}

struct TiledAttention : public torch::autograd::Function<TiledAttention> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, double scale) {
    auto out = at::empty({q.size(1), q.size(0), v.size(2)}, q.options());
    auto lse = at::empty({q.size(0), q.size(1)}, q.options());
    tiled_forward(q, k, v, static_cast<float>(scale), out, lse);
    ctx->save_for_backward({q, k, v, out, lse});
    ctx->saved_data["scale"] = scale;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &lse = saved[4];
    const auto out = saved[3].transpose(0, 1);
    const auto go = unit_rows(grad_out[0].transpose(0, 1));
    const float scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const int64_t n = q.size(0), Lq = q.size(1), Lk = k.size(1), d = q.size(2), dv = v.size(2);
    // Gradients laid out as the DiT's operands are ([L, n, d] storage), so their way back to
    // tokens is a view too.
    auto dq = at::empty({Lq, n, d}, q.options()).transpose(0, 1);
    // Every block of query rows adds to the whole of its head's dk and dv, so threads split
    // heads. With fewer heads than threads a head's rows are split too, each part adding into a
    // copy of dk and dv of its own, summed at the end.
    const int64_t threads = std::max<int64_t>(1, at::get_num_threads());
    const int64_t parts = std::min((threads + n - 1) / n, (Lq + kRows - 1) / kRows);
    auto dk_parts = at::zeros({parts, Lk, n, d}, q.options()), dv_parts = at::zeros({parts, Lk, n, dv}, q.options());
    const auto Q = heads_of<const float>(q), K = heads_of<const float>(k), V = heads_of<const float>(v);
    const auto Oo = heads_of<const float>(out), G = heads_of<const float>(go);
    const auto DQ = heads_of<float>(dq);
    const float* L = lse.data_ptr<float>();
    const int64_t blocks = (Lq + kRows - 1) / kRows, per_part = (blocks + parts - 1) / parts;
    for_items(n * parts, [&](int64_t begin, int64_t end) {
      std::vector<float> p(kRows * kCols), ds(kRows * kCols), row(kRows);
      for (int64_t item = begin; item < end; ++item) {
        const int64_t h = item / parts, part = item % parts;
        const auto DK = heads_of<float>(dk_parts[part].transpose(0, 1));
        const auto DV = heads_of<float>(dv_parts[part].transpose(0, 1));
        for (int64_t b = part * per_part; b < std::min(blocks, (part + 1) * per_part); ++b) {
          const int64_t r0 = b * kRows, rows = std::min(kRows, Lq - r0);
          // Σ_j dp_ij·p_ij = dO_i·O_i: the softmax backward's row term without a score-sized product.
          for (int64_t i = 0; i < rows; ++i) row[i] = rows::dot(G.row(h, r0 + i), Oo.row(h, r0 + i), dv);
          for (int64_t c0 = 0; c0 < Lk; c0 += kCols) {
            const int64_t cols = std::min(kCols, Lk - c0);
            gemm1('N', 'T', rows, cols, d, scale, Q.row(h, r0), Q.rs, K.row(h, c0), K.rs, 0.f, p.data(), kCols);
            for (int64_t i = 0; i < rows; ++i) rows::exp_sum(p.data() + i * kCols, cols, L[h * Lq + r0 + i]);
            gemm1('T', 'N', cols, dv, rows, 1.f, p.data(), kCols, G.row(h, r0), G.rs, 1.f, DV.row(h, c0), DV.rs);
            gemm1('N', 'T', rows, cols, dv, 1.f, G.row(h, r0), G.rs, V.row(h, c0), V.rs, 0.f, ds.data(), kCols);
            for (int64_t i = 0; i < rows; ++i)
              rows::softmax_grad(ds.data() + i * kCols, p.data() + i * kCols, cols, row[i]);
            gemm1('N', 'N', rows, d, cols, scale, ds.data(), kCols, K.row(h, c0), K.rs, c0 == 0 ? 0.f : 1.f,
                  DQ.row(h, r0), DQ.rs);
            gemm1('T', 'N', cols, d, rows, scale, ds.data(), kCols, Q.row(h, r0), Q.rs, 1.f, DK.row(h, c0), DK.rs);
          }
        }
      }
    });
    auto dk = parts == 1 ? dk_parts[0] : dk_parts.sum(0);
    auto dvv = parts == 1 ? dv_parts[0] : dv_parts.sum(0);
    return {dq, dk.transpose(0, 1), dvv.transpose(0, 1), at::Tensor()};
  }
};
#endif

}  // namespace

std::string cpu_attention_choice() { return choice_now().load() ? "tiled" : "composed"; }

void set_cpu_attention(bool tiled) {
#ifndef WANSTUDIO_HAVE_DNNL
  tiled = false;
#endif
  choice_now().store(tiled ? 1 : 0);
}

bool cpu_attention_applies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#ifdef WANSTUDIO_HAVE_DNNL
  const auto fp32_cpu = [](const at::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.dim() == 3;
  };
  return choice_now().load() && fp32_cpu(q) && fp32_cpu(k) && fp32_cpu(v) && q.size(1) > 0 && k.size(1) > 0 &&
         q.size(2) > 0 && v.size(2) > 0;
#else
  (void)q, (void)k, (void)v;
  return false;
#endif
}

at::Tensor cpu_attention(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in, double scale) {
#ifdef WANSTUDIO_HAVE_DNNL
  if (q_in.size(0) != k_in.size(0) || k_in.size(0) != v_in.size(0) || q_in.size(2) != k_in.size(2) ||
      k_in.size(1) != v_in.size(1))
    throw Error("attention: q, k and v do not match in heads, width or keys");
  const auto q = unit_rows(q_in), k = unit_rows(k_in), v = unit_rows(v_in);
  const bool grad = at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
  if (grad) return TiledAttention::apply(q, k, v, scale).transpose(0, 1);
  auto out = at::empty({q.size(1), q.size(0), v.size(2)}, q.options());
  tiled_forward(q, k, v, static_cast<float>(scale), out, at::Tensor());
  return out.transpose(0, 1);
#else
  (void)q_in, (void)k_in, (void)v_in, (void)scale;
  throw Error("attention: this build has no tiled CPU attention");
#endif
}

}  // namespace ws::models
