// SPDX-License-Identifier: Apache-2.0
#include "models/umt5.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/fs.h"
#include "io/json_fields.h"
#include "io/weights.h"
#include "models/cpu_gemm.h"

namespace ws::models {
namespace {

using json = nlohmann::json;

std::string block_key(int64_t i, const char* rest) { return "blocks." + std::to_string(i) + "." + rest; }

// gelu, tanh approximation, op by op as the reference writes it.
torch::Tensor gelu_tanh(const torch::Tensor& x) {
  return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * torch::pow(x, 3.0))));
}

// Real rows of [B, L, D] (mask 1), packed in batch order.
torch::Tensor real_rows(const torch::Tensor& x, const torch::Tensor& mask) {
  return x.reshape({-1, x.size(-1)}).index({mask.reshape({-1}).to(torch::kBool).to(x.device())}).to(torch::kFloat);
}

}  // namespace

int64_t Umt5Config::parameter_count() const {
  const int64_t block =
      2 * dim + 3 * dim_attn * dim + dim * dim_attn + 3 * dim_ffn * dim + (shared_pos ? 0 : num_buckets * num_heads);
  return vocab * dim + num_layers * block + dim + (shared_pos ? num_buckets * num_heads : 0);
}

void Umt5Config::validate(const std::string& where) const {
  auto fail = [&](const std::string& m) { throw Error(where + ": UMT5 config: " + m); };
  if (vocab < 3 || dim < 1 || dim_attn < 1 || dim_ffn < 1 || num_heads < 1 || num_layers < 1)
    fail("sizes must be positive (vocab ≥ 3)");
  if (dim_attn % num_heads)
    fail("dim_attn " + std::to_string(dim_attn) + " is not a multiple of num_heads " + std::to_string(num_heads));
  if (num_buckets < 4 || num_buckets % 4)
    fail("num_buckets must be a multiple of 4 (bidirectional), got " + std::to_string(num_buckets));
  if (max_dist <= num_buckets / 4) fail("max_dist must exceed num_buckets / 4");
  if (!(eps > 0)) fail("eps must be positive");
}

Umt5Config Umt5Config::from_json(const json& j, const std::string& where) {
  Umt5Config c;
  if (!j.is_object()) throw Error(where + ": UMT5 config is not an object");
  const io::JsonFields f(j, where + ": UMT5 config");
  f.get("vocab", c.vocab);
  f.get("dim", c.dim);
  f.get("dim_attn", c.dim_attn);
  f.get("dim_ffn", c.dim_ffn);
  f.get("num_heads", c.num_heads);
  f.get("num_layers", c.num_layers);
  f.get("num_buckets", c.num_buckets);
  f.get("max_dist", c.max_dist);
  f.get("eps", c.eps);
  f.get("shared_pos", c.shared_pos);
  c.validate(where);
  return c;
}

json Umt5Config::to_json() const {
  return {{"vocab", vocab},
          {"dim", dim},
          {"dim_attn", dim_attn},
          {"dim_ffn", dim_ffn},
          {"num_heads", num_heads},
          {"num_layers", num_layers},
          {"num_buckets", num_buckets},
          {"max_dist", max_dist},
          {"eps", eps},
          {"shared_pos", shared_pos}};
}

Umt5Config Umt5Config::infer(const io::StateDict& sd, const std::string& where) {
  auto shape = [&](const std::string& k) {
    auto it = sd.find(k);
    if (it == sd.end()) throw Error(where + ": no " + k + " (not a UMT5 encoder state dict)");
    return it->second.sizes().vec();
  };
  Umt5Config c;
  const auto emb = shape("token_embedding.weight");
  if (emb.size() != 2) throw Error(where + ": token_embedding.weight must be 2-D");
  c.vocab = emb[0];
  c.dim = emb[1];
  c.dim_attn = shape("blocks.0.attn.q.weight")[0];
  c.dim_ffn = shape("blocks.0.ffn.fc1.weight")[0];
  c.num_layers = 0;
  while (sd.count(block_key(c.num_layers, "attn.q.weight"))) ++c.num_layers;
  c.shared_pos = sd.count("pos_embedding.embedding.weight") > 0;
  const auto pos = shape(c.shared_pos ? "pos_embedding.embedding.weight" : "blocks.0.pos_embedding.embedding.weight");
  if (pos.size() != 2) throw Error(where + ": the position table must be 2-D");
  c.num_buckets = pos[0];
  c.num_heads = pos[1];
  c.validate(where);
  return c;
}

int64_t umt5_relative_bucket(int64_t r, int64_t num_buckets, int64_t max_dist) {
  const int64_t half = num_buckets / 2, exact = half / 2;
  const int64_t base = r > 0 ? half : 0;
  const int64_t a = r < 0 ? -r : r;
  if (a < exact) return base + a;
  // exact + floor(log(a / exact) / log(max_dist / exact) · (half − exact)), in long double with a
  // margin so that the integer results at a = 16, 32, 64 are not lost to rounding (§3.3).
  const long double v = std::log(static_cast<long double>(a) / exact) /
                        std::log(static_cast<long double>(max_dist) / exact) * static_cast<long double>(half - exact);
  const int64_t large = exact + static_cast<int64_t>(std::floor(v + 1e-9L));
  return base + std::min(half - 1, large);
}

io::StateDict umt5_official_names(io::StateDict sd) {
  const bool transformers = sd.count("shared.weight") || sd.count("encoder.embed_tokens.weight") ||
                            sd.count("encoder.final_layer_norm.weight");
  if (!transformers) return sd;
  io::StateDict out;
  for (auto& [k, v] : sd) {
    std::string n = k;
    auto rep = [&](const std::string& from, const std::string& to) {
      const auto p = n.find(from);
      if (p != std::string::npos) n.replace(p, from.size(), to);
    };
    if (n == "shared.weight" || n == "encoder.embed_tokens.weight") {
      out["token_embedding.weight"] = v;
      continue;
    }
    rep("encoder.final_layer_norm", "norm");
    rep("encoder.block.", "blocks.");
    rep(".layer.0.layer_norm", ".norm1");
    rep(".layer.0.SelfAttention.relative_attention_bias", ".pos_embedding.embedding");
    rep(".layer.0.SelfAttention.", ".attn.");
    rep(".layer.1.layer_norm", ".norm2");
    rep(".layer.1.DenseReluDense.wi_0", ".ffn.gate.0");
    rep(".layer.1.DenseReluDense.wi_1", ".ffn.fc1");
    rep(".layer.1.DenseReluDense.wo", ".ffn.fc2");
    out[n] = v;
  }
  return out;
}

Umt5Encoder::Umt5Encoder(Umt5Config config, io::StateDict weights, const std::string& source)
    : config_(config), weights_(umt5_official_names(std::move(weights))) {
  config_.validate(source);
  const Umt5Config& c = config_;
  std::map<std::string, std::vector<int64_t>> want{{"token_embedding.weight", {c.vocab, c.dim}},
                                                   {"norm.weight", {c.dim}}};
  if (c.shared_pos) want["pos_embedding.embedding.weight"] = {c.num_buckets, c.num_heads};
  for (int64_t i = 0; i < c.num_layers; ++i) {
    want[block_key(i, "norm1.weight")] = {c.dim};
    want[block_key(i, "norm2.weight")] = {c.dim};
    for (const char* p : {"attn.q.weight", "attn.k.weight", "attn.v.weight"})
      want[block_key(i, p)] = {c.dim_attn, c.dim};
    want[block_key(i, "attn.o.weight")] = {c.dim, c.dim_attn};
    if (!c.shared_pos) want[block_key(i, "pos_embedding.embedding.weight")] = {c.num_buckets, c.num_heads};
    want[block_key(i, "ffn.gate.0.weight")] = {c.dim_ffn, c.dim};
    want[block_key(i, "ffn.fc1.weight")] = {c.dim_ffn, c.dim};
    want[block_key(i, "ffn.fc2.weight")] = {c.dim, c.dim_ffn};
  }
  weights_.check(want, source, "UMT5 weight",
                 [](const std::string&) { return "not a UMT5 encoder, or another layout"; });
}

Umt5Encoder Umt5Encoder::load(const std::string& path, const std::optional<Umt5Config>& config) {
  std::string file = path;
  if (fs::is_dir(path)) {
    // A transformers text-encoder folder.
    for (const char* n : {"model.safetensors.index.json", "model.safetensors"})
      if (fs::exists(fs::join(path, n))) file = fs::join(path, n);
    if (file == path) throw Error(path + ": no model.safetensors in this folder");
  }
  io::StateDict sd = umt5_official_names(io::load_weights(file));
  Umt5Config c;
  if (config) {
    c = *config;
  } else {
    const auto meta = io::weights_metadata(file);
    auto it = meta.find("config");
    c = it != meta.end() ? Umt5Config::from_json(json::parse(it->second, nullptr, false), file)
                         : Umt5Config::infer(sd, file);
  }
  return Umt5Encoder(c, std::move(sd), file);
}

void Umt5Encoder::set_compute_dtype(torch::ScalarType dtype) {
  if (dtype == torch::kHalf) throw Error("UMT5 does not run in fp16 (its activations overflow it): use fp32 or bf16");
  if (dtype != torch::kFloat && dtype != torch::kBFloat16) throw Error("UMT5 computes in fp32 or bf16");
  dtype_ = dtype;
  weights_.drop_buffers();
}

void Umt5Encoder::to(const torch::Device& device) { weights_.to(device); }

const torch::Tensor& Umt5Encoder::w(const std::string& key) const { return weights_.at(key); }

torch::Tensor Umt5Encoder::cw(const std::string& key) const { return weights_.cast(key, dtype_); }

torch::Tensor Umt5Encoder::norm(const torch::Tensor& x, const std::string& key) const {
  // T5's RMS norm: statistics in fp32, no mean subtraction, no bias.
  torch::Tensor r = x * torch::rsqrt(x.to(torch::kFloat).pow(2).mean(-1, true) + config_.eps);
  return w(key).to(dtype_) * r.to(dtype_);  // a vector: no buffer
}

torch::Tensor Umt5Encoder::bucket_table(int64_t L) const {
  std::vector<int64_t> t(static_cast<size_t>(2 * L - 1));
  for (int64_t r = -(L - 1); r <= L - 1; ++r)
    t[static_cast<size_t>(r + L - 1)] = umt5_relative_bucket(r, config_.num_buckets, config_.max_dist);
  return torch::tensor(t, torch::kInt64);
}

torch::Tensor Umt5Encoder::pair_buckets(int64_t L, const torch::Device& device) const {
  const torch::Tensor table = bucket_table(L).to(device);
  auto ar = torch::arange(L, torch::TensorOptions().dtype(torch::kInt64).device(device));
  return table.index_select(0, (ar.unsqueeze(0) - ar.unsqueeze(1) + (L - 1)).reshape({-1}));  // [L·L], k − q
}

torch::Tensor Umt5Encoder::position_bias(int64_t layer, int64_t L, const torch::Tensor& idx) const {
  const std::string key =
      config_.shared_pos ? "pos_embedding.embedding.weight" : block_key(layer, "pos_embedding.embedding.weight");
  const torch::Tensor& P = w(key);
  return P.index_select(0, idx.to(P.device())).view({L, L, config_.num_heads}).permute({2, 0, 1}).to(dtype_);
}

torch::Tensor Umt5Encoder::position_bias(int64_t layer, int64_t L) const {
  return position_bias(layer, L, pair_buckets(L, w("norm.weight").device()));
}

torch::Tensor Umt5Encoder::forward(const torch::Tensor& ids_in, const torch::Tensor& mask_in, Umt5Trace* trace) const {
  torch::NoGradGuard no_grad;
  const Umt5Config& c = config_;
  if (ids_in.dim() != 2 || mask_in.sizes() != ids_in.sizes())
    throw Error("UMT5: ids and mask must be [B, L] of one shape");
  const torch::Device dev = w("norm.weight").device();
  const torch::Tensor ids = ids_in.to(dev, torch::kInt64), mask = mask_in.to(dev, torch::kInt64);
  if (ids.numel() && (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= c.vocab))
    throw Error("UMT5: token id outside the vocabulary of " + std::to_string(c.vocab));
  const int64_t B = ids.size(0), L = ids.size(1), H = c.num_heads, dh = c.head_dim();
  auto keep = [&](const std::string& name, const torch::Tensor& t) {
    if (trace) trace->tensors[name] = t.detach().to(torch::kCPU);
  };

  torch::Tensor x = torch::embedding(w("token_embedding.weight"), ids).to(dtype_);  // rows gathered, then cast
  if (trace) {
    keep("inter.token_embedding", real_rows(x, mask));
    keep("inter.rel_bucket", bucket_table(L));
  }
  // The reference adds finfo.min to masked keys' bias: exactly zero weight after the softmax.
  const torch::Tensor key_masked = (mask == 0).view({B, 1, 1, L});
  const double lowest = dtype_ == torch::kBFloat16 ? -3.3895313892515355e38 : std::numeric_limits<float>::lowest();
  const torch::Tensor buckets = pair_buckets(L, dev);  // once per forward, not per layer
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const torch::Tensor bias = position_bias(i, L, buckets);  // [H, L, L]
    if (trace) {
      const std::string pk =
          c.shared_pos ? "pos_embedding.embedding.weight" : block_key(i, "pos_embedding.embedding.weight");
      keep("inter.pos_bias." + std::to_string(i), w(pk).index_select(0, bucket_table(L).to(dev)).t().to(torch::kFloat));
      if (i == 0) keep("inter.pos_bias_full.0", bias.unsqueeze(0).to(torch::kFloat));
    }
    const torch::Tensor y = norm(x, block_key(i, "norm1.weight"));
    auto proj = [&](const char* k) { return gemm_linear(y, cw(block_key(i, k)), {}).view({B, L, H, dh}); };
    const torch::Tensor q = proj("attn.q.weight");
    const torch::Tensor k = proj("attn.k.weight");
    const torch::Tensor v = proj("attn.v.weight");
    const torch::Tensor attn_bias = bias.unsqueeze(0).expand({B, H, L, L}).masked_fill(key_masked, lowest);
    torch::Tensor s = torch::einsum("binc,bjnc->bnij", {q, k}) + attn_bias;  // no 1/√d: T5 folds it into q
    s = torch::softmax(s.to(torch::kFloat), -1).to(dtype_);
    torch::Tensor o = torch::einsum("bnij,bjnc->binc", {s, v}).reshape({B, L, c.dim_attn});
    const torch::Tensor a = gemm_linear(o, cw(block_key(i, "attn.o.weight")), {});
    x = x + a;
    const torch::Tensor y2 = norm(x, block_key(i, "norm2.weight"));
    // One weight at a time (cw may hand out the same buffer).
    const torch::Tensor lin = gemm_linear(y2, cw(block_key(i, "ffn.fc1.weight")), {});
    const torch::Tensor h = lin * gelu_tanh(gemm_linear(y2, cw(block_key(i, "ffn.gate.0.weight")), {}));
    const torch::Tensor f = gemm_linear(h, cw(block_key(i, "ffn.fc2.weight")), {});
    x = x + f;
    if (trace) {
      if (i == 0) {
        keep("inter.block_0.norm1", real_rows(y, mask));
        keep("inter.block_0.attn", real_rows(a, mask));
        keep("inter.block_0.ffn", real_rows(f, mask));
      }
      keep("inter.block_" + std::to_string(i), real_rows(x, mask));
    }
  }
  return norm(x, "norm.weight");
}

torch::Tensor Umt5Encoder::encode(const std::vector<int64_t>& ids) const {
  if (ids.empty()) throw Error("UMT5: no ids (a caption always has its EOS)");
  const auto n = static_cast<int64_t>(ids.size());
  torch::Tensor t = torch::tensor(ids, torch::kInt64).view({1, n});
  return forward(t, torch::ones({1, n}, torch::kInt64))[0];
}

}  // namespace ws::models
