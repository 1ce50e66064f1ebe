// SPDX-License-Identifier: Apache-2.0
#include "models/fp8.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "core/log.h"
#include "models/cpu_gemm.h"

namespace ws::models {

namespace {

// The 127 non-negative finite e4m3fn values, code order (which is value order).
const std::vector<float>& e4m3_values() {
  static const std::vector<float> v = [] {
    std::vector<float> out;
    for (int code = 0; code < 127; ++code) {
      const int e = code >> 3, m = code & 7;
      out.push_back(e == 0 ? std::ldexp(static_cast<float>(m) / 8.0f, -6)
                           : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7));
    }
    return out;
  }();
  return v;
}

// Small constant tables, made once per device (a GPU decode must not upload them every call).
torch::Tensor cached(const std::string& name, const torch::Device& device, const std::vector<float>& values) {
  static std::mutex mu;
  static std::map<std::string, torch::Tensor> tables;
  std::lock_guard<std::mutex> lock(mu);
  auto& t = tables[name + "@" + device.str()];
  if (!t.defined()) t = torch::tensor(values).to(device);
  return t;
}

torch::Tensor table(const torch::Device& device) {
  static const std::vector<float> all = [] {
    const auto& v = e4m3_values();
    std::vector<float> out(256);
    for (int c = 0; c < 256; ++c) {
      const int mag = c & 0x7f;
      const float x = mag == 0x7f ? std::nanf("") : v[static_cast<size_t>(mag)];
      out[static_cast<size_t>(c)] = c & 0x80 ? -x : x;
    }
    return out;
  }();
  return cached("decode", device, all);
}

torch::Tensor midpoints(const torch::Device& device) {
  static const std::vector<float> mid = [] {
    const auto& v = e4m3_values();
    std::vector<float> out;
    // Midpoints between neighbours are exact in fp32 (≤ 5 significant bits).
    for (size_t i = 0; i + 1 < v.size(); ++i) out.push_back((v[i] + v[i + 1]) / 2.0f);
    return out;
  }();
  return cached("mid", device, mid);
}

}  // namespace

torch::Tensor fp8_e4m3_encode(const torch::Tensor& x_in) {
  auto x = x_in.to(torch::kFloat);
  auto mids = midpoints(x.device());
  auto a = x.abs().clamp_max(448.0f);
  // bucketize: the number of midpoints below |x|, i.e. round-half-down; then ties go to the even code.
  auto idx = torch::bucketize(a, mids, /*out_int32=*/false, /*right=*/false);
  auto at_mid = mids.index_select(0, idx.flatten().clamp_max(mids.size(0) - 1)).view(idx.sizes()) == a;
  idx = torch::where(at_mid & (idx.remainder(2) == 1), idx + 1, idx);
  auto code = idx + torch::where(x.signbit(), torch::full_like(idx, 128), torch::zeros_like(idx));
  code = torch::where(x.isnan(), torch::full_like(code, 0x7f), code);
  return code.to(torch::kUInt8);
}

torch::Tensor fp8_e4m3_decode(const torch::Tensor& codes, torch::ScalarType dtype) {
  auto t = table(codes.device());
  return t.index_select(0, codes.flatten().to(torch::kLong)).view(codes.sizes()).to(dtype);
}

torch::ScalarType fp8_storage_dtype() {
#if WANSTUDIO_HAVE_FLOAT8
  return torch::kFloat8_e4m3fn;
#else
  return torch::kUInt8;
#endif
}

torch::Tensor fp8_to(const torch::Tensor& stored, torch::ScalarType dtype) {
  if (stored.scalar_type() == torch::kUInt8) return fp8_e4m3_decode(stored, dtype);
  return stored.to(dtype);
}

Fp8Weight fp8_quantize(const torch::Tensor& w) {
  torch::NoGradGuard no_grad;
  Fp8Weight q;
  const double amax = w.detach().abs().max().item<double>();
  q.scale = amax > 0 && std::isfinite(amax) ? 448.0 / amax : 1.0;
  auto scaled = w.detach().to(torch::kFloat) * q.scale;
#if WANSTUDIO_HAVE_FLOAT8
  // LibTorch's cast rounds to nearest even like the codec but turns |x| > 448 into NaN: saturate first.
  q.codes = scaled.clamp(-448.0, 448.0).to(torch::kFloat8_e4m3fn);
#else
  q.codes = fp8_e4m3_encode(scaled);
#endif
  return q;
}

#if WANSTUDIO_HAVE_FLOAT8
namespace {
// -1 not yet tried, 0 refused (or switched off), 1 the GPU ran it.
std::atomic<int> scaled_matmul_state{-1};
}  // namespace
#endif

bool fp8_scaled_matmul_enabled() {
#if WANSTUDIO_HAVE_FLOAT8
  if (scaled_matmul_state.load() == -1) {
    const char* env = std::getenv("WANSTUDIO_FP8_MATMUL");
    if (env && std::strcmp(env, "0") == 0) scaled_matmul_state = 0;
  }
  return scaled_matmul_state.load() != 0;
#else
  return false;
#endif
}

namespace {

#if WANSTUDIO_HAVE_FLOAT8
// x [M, K] (bf16 or fp16) · (codes/scale)ᵀ on fp8 tensor cores: x quantised with its own per-tensor
// scale (absmax, computed on the device: no host sync), fp32 accumulation, output in x's dtype.
// Undefined when this GPU or shape cannot (K and N must be multiples of 16).
torch::Tensor scaled_matmul(const torch::Tensor& x2, const torch::Tensor& codes, double scale,
                            const torch::Tensor& bias) {
  if (!x2.is_cuda() || codes.scalar_type() != torch::kFloat8_e4m3fn || !fp8_scaled_matmul_enabled()) return {};
  if (x2.scalar_type() != torch::kBFloat16 && x2.scalar_type() != torch::kHalf) return {};
  if (x2.size(1) % 16 != 0 || codes.size(0) % 16 != 0) return {};
  try {
    auto amax = x2.abs().amax().to(torch::kFloat).clamp_min(1e-12);
    auto sx = 448.0 / amax;
    auto xq = (x2.to(torch::kFloat) * sx).clamp(-448.0, 448.0).to(torch::kFloat8_e4m3fn);
    auto inv_w = torch::full({}, 1.0 / scale, x2.options().dtype(torch::kFloat));
    std::optional<at::Tensor> b;
    if (bias.defined()) b = bias.to(x2.scalar_type());
    auto y = at::_scaled_mm(xq, codes.t(), sx.reciprocal(), inv_w, b, std::nullopt, x2.scalar_type());
    scaled_matmul_state = 1;
    return y;
  } catch (const c10::Error& e) {
    // This GPU (compute capability below 8.9) or build has no such kernel: dequantise from now on.
    if (scaled_matmul_state.exchange(0) != 0)
      ws::log::warn("fp8: no scaled fp8 matmul here ({}); dequantising to bf16 instead",
                    std::string(e.what_without_backtrace()).substr(0, 120));
    return {};
  }
}
#endif

}  // namespace

namespace {

struct Fp8LinearFn : public torch::autograd::Function<Fp8LinearFn> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias, const torch::Tensor& codes,
                               double scale) {
    ctx->save_for_backward({x, codes});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["has_bias"] = bias.defined();
    ctx->saved_data["weight_dtype"] = static_cast<int64_t>(weight.scalar_type());
    torch::NoGradGuard no_grad;
    (void)weight;  // only its gradient is produced
#if WANSTUDIO_HAVE_FLOAT8
    {
      auto y = scaled_matmul(x.reshape({-1, x.size(-1)}).contiguous(), codes, scale, bias);
      if (y.defined()) {
        auto s = x.sizes().vec();
        s.back() = codes.size(0);
        return y.view(s);
      }
    }
#endif
    auto wq = fp8_to(codes, x.scalar_type()) / scale;
    return gemm_linear(x, wq, bias.defined() ? bias.to(x.scalar_type()) : torch::Tensor());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &codes = saved[1];
    const double scale = ctx->saved_data["scale"].toDouble();
    auto g = grad_out[0];
    auto wq = fp8_to(codes, g.scalar_type()) / scale;
    auto g2 = g.reshape({-1, g.size(-1)}), x2 = x.reshape({-1, x.size(-1)});
    auto dx = gemm(g2, wq).view(x.sizes());
    // Gradients in the master weight's dtype (fp32 under bf16 compute).
    const auto wd = static_cast<torch::ScalarType>(ctx->saved_data["weight_dtype"].toInt());
    // A frozen weight (a LoRA base) needs neither.
    auto dw = ctx->needs_input_grad(1) ? gemm(g2.t(), x2.to(g.scalar_type())).to(wd) : torch::Tensor();
    auto db = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2) ? g2.sum(0).to(wd) : torch::Tensor();
    return {dx, dw, db, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor fp8_linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias,
                         const Fp8Weight& q) {
  return Fp8LinearFn::apply(x, weight, bias, q.codes, q.scale);
}

}  // namespace ws::models
