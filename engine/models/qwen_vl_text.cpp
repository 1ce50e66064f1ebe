// SPDX-License-Identifier: Apache-2.0
#include "models/qwen_vl_text.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "models/cpu_gemm.h"

namespace ws::models {
namespace {

namespace F = torch::nn::functional;

std::string layer_key(int64_t i, const char* rest) { return "layers." + std::to_string(i) + "." + rest; }

// The last half negated and moved before the first: the rotary pairs are (j, j + d/2).
torch::Tensor rotate_half(const torch::Tensor& x) {
  const int64_t h = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, h, h), x.narrow(-1, 0, h)}, -1);
}

// Bytes of float32 attention scores one chunk of query rows may take.
constexpr int64_t kScoreBytes = int64_t{256} << 20;

}  // namespace

void QwenKvCache::clear() {
  k.clear();
  v.clear();
  length = 0;
}

QwenDecoder::QwenDecoder(QwenTextConfig config, io::StateDict weights, const std::string& source)
    : config_(std::move(config)), weights_(std::move(weights)) {
  const QwenTextConfig& c = config_;
  if (c.hidden_size < 1 || c.num_attention_heads < 1 || c.num_key_value_heads < 1 ||
      c.hidden_size % c.num_attention_heads || c.num_attention_heads % c.num_key_value_heads || c.head_dim() % 2)
    throw Error(source + ": the Qwen2.5-VL text sizes do not fit together (validate the config first)");
  const int64_t H = c.hidden_size, kv = c.num_key_value_heads * c.head_dim(), I = c.intermediate_size;
  std::map<std::string, std::vector<int64_t>> want{
      {"embed_tokens.weight", {c.vocab_size, H}},
      {"norm.weight", {H}},
  };
  if (!c.tie_word_embeddings) want["lm_head.weight"] = {c.vocab_size, H};
  // Each layer holds 12 tensors: a config claiming more layers than the file could hold is refused
  // before its expectations are built (a hostile num_hidden_layers would exhaust memory here).
  if (c.num_hidden_layers > static_cast<int64_t>(weights_.tensors().size()) / 12)
    throw Error(source + ": the config has " + std::to_string(c.num_hidden_layers) + " text layers, the weights " +
                std::to_string(weights_.tensors().size()) + " tensors in all");
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    want[layer_key(i, "self_attn.q_proj.weight")] = {H, H};
    want[layer_key(i, "self_attn.q_proj.bias")] = {H};
    for (const char* p : {"self_attn.k_proj", "self_attn.v_proj"}) {
      want[layer_key(i, p) + ".weight"] = {kv, H};
      want[layer_key(i, p) + ".bias"] = {kv};
    }
    want[layer_key(i, "self_attn.o_proj.weight")] = {H, H};
    want[layer_key(i, "mlp.gate_proj.weight")] = {I, H};
    want[layer_key(i, "mlp.up_proj.weight")] = {I, H};
    want[layer_key(i, "mlp.down_proj.weight")] = {H, I};
    want[layer_key(i, "input_layernorm.weight")] = {H};
    want[layer_key(i, "post_attention_layernorm.weight")] = {H};
  }
  weights_.check(want, source, "Qwen2.5-VL text weight", [](const std::string& k) {
    return k == "lm_head.weight" ? "the config ties lm_head to embed_tokens" : "not a Qwen2 decoder";
  });
  // transformers: 1 / theta^(arange(0, d, 2) / d), in float32 on the CPU.
  const int64_t d = c.head_dim();
  inv_freq_ = torch::reciprocal(torch::pow(c.rope_theta, torch::arange(0, d, 2, torch::kFloat) / d));
}

void QwenDecoder::set_compute_dtype(torch::ScalarType dtype) {
  if (dtype != torch::kFloat && dtype != torch::kBFloat16)
    throw Error("the Qwen2.5-VL decoder computes in fp32 or bf16");
  dtype_ = dtype;
  weights_.drop_buffers();
}

void QwenDecoder::to(const torch::Device& device) { weights_.to(device); }

torch::Device QwenDecoder::device() const { return w("norm.weight").device(); }

const torch::Tensor& QwenDecoder::w(const std::string& key) const { return weights_.at(key); }

torch::Tensor QwenDecoder::cw(const std::string& key) const { return weights_.cast(key, dtype_); }

torch::Tensor QwenDecoder::norm(const torch::Tensor& x, const std::string& key) const {
  // Qwen2's RMS norm: statistics in fp32, cast back, then the weight in the compute dtype.
  const torch::Tensor f = x.to(torch::kFloat);
  const torch::Tensor r = f * torch::rsqrt(f.pow(2).mean(-1, true) + config_.rms_norm_eps);
  return w(key).to(dtype_) * r.to(dtype_);
}

torch::Tensor QwenDecoder::embed(const torch::Tensor& ids) const {
  if (ids.dim() != 1) throw Error("Qwen2.5-VL decoder: ids must be a 1-D tensor");
  const torch::Tensor t = ids.to(device(), torch::kInt64);
  if (t.numel() && (t.min().item<int64_t>() < 0 || t.max().item<int64_t>() >= config_.vocab_size))
    throw Error("Qwen2.5-VL decoder: token id outside the vocabulary of " + std::to_string(config_.vocab_size));
  return torch::embedding(w("embed_tokens.weight"), t).to(dtype_);  // rows gathered, then cast
}

std::pair<torch::Tensor, torch::Tensor> QwenDecoder::rope(const torch::Tensor& positions) const {
  const torch::Device dev = device();
  // [3, L, d/2]: each stream's angles; chunk j of mrope_section comes from stream j % 3.
  const torch::Tensor freqs = positions.to(dev).to(torch::kFloat).unsqueeze(-1) * inv_freq_.to(dev);
  auto splice = [&](const torch::Tensor& f) {
    std::vector<torch::Tensor> parts;
    int64_t off = 0;
    for (size_t j = 0; j < config_.mrope_section.size(); ++j) {
      const int64_t m = config_.mrope_section[j];
      parts.push_back(f[static_cast<int64_t>(j % 3)].narrow(-1, off, m));
      off += m;
    }
    const torch::Tensor half = torch::cat(parts, -1);
    return torch::cat({half, half}, -1);  // the rotary pairs are (j, j + d/2)
  };
  return {splice(freqs.cos()), splice(freqs.sin())};
}

torch::Tensor QwenDecoder::attention(int64_t i, const torch::Tensor& x, const torch::Tensor& cos,
                                     const torch::Tensor& sin, QwenKvCache& cache) const {
  const QwenTextConfig& c = config_;
  const int64_t L = x.size(0), d = c.head_dim(), Hq = c.num_attention_heads, Hkv = c.num_key_value_heads;
  const int64_t rep = Hq / Hkv, past = cache.length, Lk = past + L;
  auto proj = [&](const char* p, int64_t heads) {
    const std::string k = layer_key(i, p);
    return gemm_linear(x, cw(k + ".weight"), w(k + ".bias").to(dtype_)).view({L, heads, d}).transpose(0, 1);
  };
  auto rotate = [&](const torch::Tensor& t) { return t * cos + rotate_half(t) * sin; };  // [heads, L, d]
  const torch::Tensor q = rotate(proj("self_attn.q_proj", Hq));
  const torch::Tensor k = rotate(proj("self_attn.k_proj", Hkv));
  const torch::Tensor v = proj("self_attn.v_proj", Hkv);

  // Append to the cache, growing its room by half so that a token costs no copy of the past.
  auto append = [&](torch::Tensor& buf, const torch::Tensor& t) {
    if (!buf.defined() || buf.size(1) < Lk) {
      const int64_t cap = std::max(Lk + 256, buf.defined() ? buf.size(1) * 3 / 2 : int64_t{0});
      torch::Tensor grown = torch::empty({Hkv, cap, d}, t.options());
      if (past) grown.narrow(1, 0, past).copy_(buf.narrow(1, 0, past));
      buf = grown;
    }
    buf.narrow(1, past, L).copy_(t);
    return buf.narrow(1, 0, Lk);
  };
  const torch::Tensor K = append(cache.k[static_cast<size_t>(i)], k);
  const torch::Tensor V = append(cache.v[static_cast<size_t>(i)], v);

  // Grouped queries: the rep query heads of one kv head share its keys (transformers' repeat_kv
  // maps query head h to kv head h / rep). Chunks of query rows bound the score memory.
  const torch::Tensor qg = q.reshape({Hkv, rep, L, d});
  const torch::Tensor Kt = K.transpose(1, 2);
  const double scaling = 1.0 / std::sqrt(static_cast<double>(d));
  const int64_t rows = std::max<int64_t>(1, kScoreBytes / 4 / (Hq * Lk));
  const auto opts = torch::TensorOptions().dtype(torch::kInt64).device(x.device());
  const torch::Tensor key_pos = torch::arange(Lk, opts);
  std::vector<torch::Tensor> outs;
  for (int64_t r0 = 0; r0 < L; r0 += rows) {
    const int64_t n = std::min(rows, L - r0);
    const torch::Tensor qc = qg.narrow(2, r0, n).reshape({Hkv, rep * n, d});
    torch::Tensor s = torch::bmm(qc, Kt).mul_(scaling).view({Hkv, rep, n, Lk});
    // Causal over cache + chunk: the query at position past + r sees keys 0..past + r.
    const torch::Tensor masked = key_pos.view({1, Lk}) > (torch::arange(r0, r0 + n, opts) + past).view({n, 1});
    s = s.masked_fill(masked, -std::numeric_limits<double>::infinity());
    const torch::Tensor p = torch::softmax(s.to(torch::kFloat), -1).to(dtype_).view({Hkv, rep * n, Lk});
    outs.push_back(torch::bmm(p, V).view({Hkv, rep, n, d}));
  }
  const torch::Tensor o = (outs.size() == 1 ? outs[0] : torch::cat(outs, 2)).reshape({Hq, L, d});
  return gemm_linear(o.transpose(0, 1).reshape({L, Hq * d}), cw(layer_key(i, "self_attn.o_proj.weight")), {});
}

torch::Tensor QwenDecoder::forward(const torch::Tensor& embeds, const torch::Tensor& positions, QwenKvCache& cache,
                                   bool last_only) const {
  torch::NoGradGuard no_grad;
  const QwenTextConfig& c = config_;
  if (embeds.dim() != 2 || embeds.size(1) != c.hidden_size || embeds.size(0) < 1)
    throw Error("Qwen2.5-VL decoder: embeds must be [L, " + std::to_string(c.hidden_size) + "] with L ≥ 1");
  const int64_t L = embeds.size(0);
  if (positions.dim() != 2 || positions.size(0) != 3 || positions.size(1) != L)
    throw Error("Qwen2.5-VL decoder: positions must be [3, " + std::to_string(L) + "]");
  const auto layers = static_cast<size_t>(c.num_hidden_layers);
  if (cache.k.empty() && cache.v.empty()) {
    if (cache.length) throw Error("Qwen2.5-VL decoder: the KV cache has a length but no tensors");
    cache.k.resize(layers);
    cache.v.resize(layers);
  } else if (cache.k.size() != layers || cache.v.size() != layers) {
    throw Error("Qwen2.5-VL decoder: the KV cache belongs to another model (" + std::to_string(cache.k.size()) +
                " layers)");
  } else if (cache.length && (cache.k[0].scalar_type() != dtype_ || cache.k[0].device() != device())) {
    throw Error("Qwen2.5-VL decoder: the KV cache was filled in another dtype or on another device");
  }

  torch::Tensor x = embeds.to(device(), dtype_);
  auto [cos32, sin32] = rope(positions);
  const torch::Tensor cos = cos32.to(dtype_), sin = sin32.to(dtype_);  // as transformers hands them over
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    x = x + attention(i, norm(x, layer_key(i, "input_layernorm.weight")), cos, sin, cache);
    const torch::Tensor h = norm(x, layer_key(i, "post_attention_layernorm.weight"));
    // One weight at a time (gate and up share a conversion buffer).
    const torch::Tensor g = torch::silu(gemm_linear(h, cw(layer_key(i, "mlp.gate_proj.weight")), {}));
    const torch::Tensor m = g * gemm_linear(h, cw(layer_key(i, "mlp.up_proj.weight")), {});
    x = x + gemm_linear(m, cw(layer_key(i, "mlp.down_proj.weight")), {});
  }
  cache.length += L;
  if (last_only) x = x.narrow(0, L - 1, 1);
  x = norm(x, "norm.weight");
  const char* head = c.tie_word_embeddings ? "embed_tokens.weight" : "lm_head.weight";
  return gemm_linear(x, cw(head), {}).to(torch::kFloat);
}

}  // namespace ws::models
