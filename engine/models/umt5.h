// SPDX-License-Identifier: Apache-2.0
// The UMT5 text encoder of Wan 2.x (docs/design/umt5.md §2–§4): token embedding, per-layer
// bucketed relative-position bias, pre-norm blocks (attention without 1/√d scaling, gated
// tanh-GELU FFN), final RMS norm. Frozen: the weights are held as loaded (bf16 stays bf16, no
// second fp32 copy) and cast a matrix at a time to the compute dtype.
//
//   auto enc = Umt5Encoder::load("models_t5_umt5-xxl-enc-bf16.pth");   // config from the shapes
//   torch::Tensor e = enc.encode(ids);                                   // [L, dim], unpadded
#pragma once
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "io/state_dict.h"
#include "models/frozen_weights.h"

namespace ws::models {

struct Umt5Config {
  int64_t vocab = 256384, dim = 4096, dim_attn = 4096, dim_ffn = 10240;
  int64_t num_heads = 64, num_layers = 24, num_buckets = 32, max_dist = 128;
  double eps = 1e-6;
  bool shared_pos = false;  // one position table for all layers (T5 v1.1); Wan: a table per layer

  int64_t head_dim() const { return dim_attn / num_heads; }
  int64_t parameter_count() const;
  // Checks sizes that fit together; throws ws::Error naming `where`.
  void validate(const std::string& where) const;
  // The Wan/fixture keys (vocab, dim, dim_attn, dim_ffn, num_heads, num_layers, num_buckets,
  // shared_pos, eps, max_dist); missing keys keep the defaults above.
  static Umt5Config from_json(const nlohmann::json& j, const std::string& where);
  nlohmann::json to_json() const;
  // The config a state dict implies (every size is in some tensor's shape).
  static Umt5Config infer(const io::StateDict& sd, const std::string& where);
};

// The bucket of relative distance r = key − query (bidirectional, §3.3), exact in integers.
int64_t umt5_relative_bucket(int64_t r, int64_t num_buckets, int64_t max_dist);

// Intermediates for parity (real rows only, packed in batch order).
struct Umt5Trace {
  std::map<std::string, torch::Tensor> tensors;
};

class Umt5Encoder {
 public:
  // `weights` by the official key names (the transformers layout is renamed on load). Strict:
  // a missing, unexpected or mis-shaped key is a ws::Error naming `source`.
  Umt5Encoder(Umt5Config config, io::StateDict weights, const std::string& source = "UMT5 weights");
  // .pth (the released bf16 checkpoint), .safetensors or a transformers folder's weights.
  // The config comes from the shapes unless given.
  static Umt5Encoder load(const std::string& path, const std::optional<Umt5Config>& config = std::nullopt);

  const Umt5Config& config() const { return config_; }
  // fp32 (default) or bf16 (Wan's dtype; the norm statistics and the softmax stay fp32). fp16
  // is refused: T5 activations overflow it.
  void set_compute_dtype(torch::ScalarType dtype);
  torch::ScalarType compute_dtype() const { return dtype_; }
  // Moves the weights (e.g. to CUDA); they keep their dtype.
  void to(const torch::Device& device);

  // ids, mask [B, L] int64 (right padded) -> [B, L, dim] in the compute dtype. Padded query rows
  // are computed too (attending to the real keys); keys are masked.
  torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask, Umt5Trace* trace = nullptr) const;
  // One caption's real ids (EOS last) -> [L, dim], at its own length (the same numbers as padded).
  torch::Tensor encode(const std::vector<int64_t>& ids) const;
  // Bias of layer `layer` for L positions: [heads, L, L].
  torch::Tensor position_bias(int64_t layer, int64_t L) const;

 private:
  const torch::Tensor& w(const std::string& key) const;
  // In the compute dtype; a converted weight lives in a buffer reused by the next one of its shape.
  torch::Tensor cw(const std::string& key) const;
  torch::Tensor norm(const torch::Tensor& x, const std::string& key) const;
  torch::Tensor bucket_table(int64_t L) const;  // [2L − 1] for r = −(L−1)..L−1
  // The bucket of every (query, key) pair, [L·L]: the same for every layer of a forward.
  torch::Tensor pair_buckets(int64_t L, const torch::Device& device) const;
  torch::Tensor position_bias(int64_t layer, int64_t L, const torch::Tensor& pair_buckets) const;

  Umt5Config config_;
  FrozenWeights weights_;
  torch::ScalarType dtype_ = torch::kFloat;
};

// transformers' UMT5EncoderModel names -> Wan's (shared / encoder.block.i.layer.0.SelfAttention.q ...).
io::StateDict umt5_official_names(io::StateDict sd);

}  // namespace ws::models
