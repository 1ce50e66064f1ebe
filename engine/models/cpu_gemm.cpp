// SPDX-License-Identifier: Apache-2.0
#include "models/cpu_gemm.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.h"

#ifdef WANSTUDIO_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace ws::models {
namespace {

// Vector width classes: 0 SSE, 1 AVX, 2 AVX2, 3 AVX-512.
const char* kLevelName[] = {"sse3", "avx", "avx2", "avx512"};

// OpenBLAS's dynamic-arch core names by the widest instructions their kernels use.
int openblas_core_level(const std::string& core) {
  for (const char* c : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (core == c) return 3;
  for (const char* c : {"Haswell", "Zen"})
    if (core == c) return 2;
  for (const char* c : {"Sandybridge", "Bulldozer", "Piledriver", "Steamroller", "Excavator"})
    if (core == c) return 1;
  return 0;  // Prescott, Core2, Nehalem, … and any name this table does not know
}

#ifdef WANSTUDIO_HAVE_DNNL
int cpu_level() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [&](dnnl_cpu_isa_t bits) { return (isa & bits) == static_cast<unsigned>(bits); };
  if (has(dnnl_cpu_isa_avx512_core)) return 3;
  if (has(dnnl_cpu_isa_avx2)) return 2;
  if (has(dnnl_cpu_isa_avx)) return 1;
  return 0;
}
#endif

struct Choice {
  GemmBackend backend = GemmBackend::LibTorch;
  std::string description;
};

Choice choose() {
  Choice c;
  const char* env = std::getenv("WANSTUDIO_GEMM");
  const std::string forced = env ? env : "";
  if (!forced.empty() && forced != "onednn" && forced != "libtorch")
    throw Error("WANSTUDIO_GEMM must be onednn or libtorch, not '" + forced + "'");
#ifndef WANSTUDIO_HAVE_DNNL
  c.description = forced == "onednn" ? "libtorch (this build has no oneDNN API)" : "libtorch";
  return c;
#else
  if (!forced.empty()) {
    c.backend = forced == "onednn" ? GemmBackend::OneDnn : GemmBackend::LibTorch;
    c.description = forced + " (WANSTUDIO_GEMM)";
    return c;
  }
  // Whose sgemm LibTorch calls. MKL (inside PyPI's LibTorch) is kept. Debian's LibTorch calls
  // libblas.so.3, which the alternatives system may point at OpenBLAS or at the unoptimised
  // reference BLAS.
  if (dlsym(RTLD_DEFAULT, "mkl_get_max_threads")) {
    c.description = "libtorch (MKL)";
    return c;
  }
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  if (!sgemm) {
    c.description = "libtorch (no BLAS symbol found)";
    return c;
  }
  Dl_info info{};
  std::string blas_file = dladdr(sgemm, &info) && info.dli_fname ? info.dli_fname : "";
  // libblas.so.3 is a link through /etc/alternatives: name the library it ends at.
  if (!blas_file.empty()) {
    std::error_code ec;
    const auto real = std::filesystem::canonical(blas_file, ec);
    if (!ec) blas_file = real.string();
  }
  auto corename = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (blas_file.find("openblas") == std::string::npos || !corename) {
    c.backend = GemmBackend::OneDnn;
    c.description = "onednn (LibTorch's BLAS is not OpenBLAS: " + (blas_file.empty() ? "unknown" : blas_file) + ")";
    return c;
  }
  // OpenBLAS names the core it chose.
  const std::string core = corename() ? corename() : "unknown";
  const int blas = openblas_core_level(core), cpu = cpu_level();
  c.backend = cpu > blas ? GemmBackend::OneDnn : GemmBackend::LibTorch;
  c.description = std::string(c.backend == GemmBackend::OneDnn ? "onednn" : "libtorch") + " (OpenBLAS core " + core +
                  ": " + kLevelName[blas] + "; CPU " + kLevelName[cpu] + ")";
  return c;
#endif
}

Choice& choice() {
  static Choice c = choose();
  return c;
}

std::atomic<int>& backend_now() {
  static std::atomic<int> b{static_cast<int>(choice().backend)};
  return b;
}

bool use_onednn(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
#ifdef WANSTUDIO_HAVE_DNNL
  if (backend_now().load(std::memory_order_relaxed) != static_cast<int>(GemmBackend::OneDnn)) return false;
  for (const auto* t : {&out, &a, &b})
    if (!t->device().is_cpu() || t->scalar_type() != at::kFloat || t->is_sparse()) return false;
  return true;
#else
  (void)out, (void)a, (void)b;
  return false;
#endif
}

std::atomic<int64_t> g_onednn_calls{0};

#ifdef WANSTUDIO_HAVE_DNNL
// How one [rows, cols] operand is read: 'N' with rows `ld` apart, or 'T' (its transpose stored
// row-major) with columns `ld` apart. Neither unit stride: no layout (the caller copies).
struct Operand {
  char trans = 0;
  int64_t ld = 0;
};

Operand layout(const at::Tensor& m) {
  const int64_t rows = m.size(-2), cols = m.size(-1);
  const int64_t rs = m.stride(-2), cs = m.stride(-1);
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) return {'N', rows == 1 ? std::max<int64_t>(cols, 1) : rs};
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= rows)) return {'T', cols == 1 ? std::max<int64_t>(rows, 1) : cs};
  return {};
}

void onednn_gemm(const at::Tensor& out, at::Tensor a, at::Tensor b, float beta, float alpha) {
  Operand la = layout(a), lb = layout(b);
  if (!la.trans) a = a.contiguous(), la = layout(a);
  if (!lb.trans) b = b.contiguous(), lb = layout(b);
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  const int64_t ldc = M == 1 ? std::max<int64_t>(N, 1) : out.stride(-2);
  const int64_t batches = a.dim() == 3 ? a.size(0) : 1;
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = out.data_ptr<float>();
  g_onednn_calls.fetch_add(1, std::memory_order_relaxed);
  for (int64_t i = 0; i < batches; ++i) {
    // dnnl_sgemm is row-major: C[M, N] = op(A)[M, K] · op(B)[K, N].
    const auto st = dnnl::sgemm(la.trans, lb.trans, M, N, K, alpha, pa + (a.dim() == 3 ? i * a.stride(0) : 0), la.ld,
                                pb + (b.dim() == 3 ? i * b.stride(0) : 0), lb.ld, beta,
                                pc + (out.dim() == 3 ? i * out.stride(0) : 0), ldc);
    if (st != dnnl::status::success) throw Error("oneDNN sgemm failed (status " + std::to_string(int(st)) + ")");
  }
}
#endif

void check_shapes(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  const bool two = a.dim() == 2 && b.dim() == 2 && out.dim() == 2;
  const bool three =
      a.dim() == 3 && b.dim() == 3 && out.dim() == 3 && a.size(0) == b.size(0) && a.size(0) == out.size(0);
  if ((!two && !three) || a.size(-1) != b.size(-2) || out.size(-2) != a.size(-2) || out.size(-1) != b.size(-1))
    throw Error("gemm: shapes do not multiply");
}

}  // namespace

GemmBackend cpu_gemm_backend() { return static_cast<GemmBackend>(backend_now().load()); }

std::string cpu_gemm_description() {
  if (cpu_gemm_backend() != choice().backend)
    return std::string(cpu_gemm_backend() == GemmBackend::OneDnn ? "onednn" : "libtorch") + " (set by the program)";
  return choice().description;
}

void set_cpu_gemm_backend(GemmBackend backend) {
#ifndef WANSTUDIO_HAVE_DNNL
  backend = GemmBackend::LibTorch;
#endif
  backend_now().store(static_cast<int>(backend));
}

int64_t cpu_gemm_onednn_calls() { return g_onednn_calls.load(); }

void gemm_into(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b, float beta, float alpha) {
  check_shapes(out, a, b);
#ifdef WANSTUDIO_HAVE_DNNL
  const bool empty = a.size(-2) == 0 || b.size(-1) == 0 || a.size(-1) == 0 || (a.dim() == 3 && a.size(0) == 0);
  if (!empty && out.stride(-1) == 1 && use_onednn(out, a, b)) return onednn_gemm(out, a, b, beta, alpha);
#endif
  auto& o = const_cast<at::Tensor&>(out);
  if (beta == 0.f) {
    // Not addmm_ with beta 0: LibTorch 1.13's bf16 CPU product still reads out then (0 · NaN).
    if (out.dim() == 2) at::mm_out(o, a, b);
    else at::bmm_out(o, a, b);
    if (alpha != 1.f) o.mul_(alpha);
  } else {
    if (out.dim() == 2) o.addmm_(a, b, beta, alpha);
    else o.baddbmm_(a, b, beta, alpha);
  }
}

at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, float alpha) {
  if (!use_onednn(a, a, b) && alpha == 1.f) return a.dim() == 2 ? at::mm(a, b) : at::bmm(a, b);
  auto sizes = a.sizes().vec();
  sizes.back() = b.size(-1);
  auto out = at::empty(sizes, a.options());
  gemm_into(out, a, b, 0.f, alpha);
  return out;
}

namespace {

// x·wᵀ + b over x's last dim, shaped as x with w's rows last.
at::Tensor linear_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  auto y = gemm(x.reshape({-1, x.size(-1)}), w.t());
  if (b.defined()) y.add_(b);
  auto sizes = x.sizes().vec();
  sizes.back() = w.size(0);
  return y.view(sizes);
}

struct GemmLinear : public torch::autograd::Function<GemmLinear> {
  // `b` empty: no bias (LibTorch 1.13's Function::apply takes no undefined tensor).
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& b) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["bias"] = b.numel() > 0;
    return linear_forward(x, w, b.numel() > 0 ? b : at::Tensor());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &w = saved[1];
    const auto dy = grad_out[0].reshape({-1, grad_out[0].size(-1)});
    at::Tensor dx, dw, db;
    if (ctx->needs_input_grad(0)) dx = gemm(dy, w).view(x.sizes());
    if (ctx->needs_input_grad(1)) dw = gemm(dy.t(), x.reshape({-1, x.size(-1)}));
    if (ctx->needs_input_grad(2) && ctx->saved_data["bias"].toBool()) db = dy.sum(0);
    return {dx, dw, db};
  }
};

}  // namespace

at::Tensor gemm_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  if (!use_onednn(x, x, w) || (b.defined() && !use_onednn(b, b, b))) return at::linear(x, w, b);
  const bool grad =
      at::GradMode::is_enabled() && (x.requires_grad() || w.requires_grad() || (b.defined() && b.requires_grad()));
  if (grad) return GemmLinear::apply(x, w, b.defined() ? b : at::empty({0}, w.options()));
  return linear_forward(x, w, b);
}

}  // namespace ws::models
