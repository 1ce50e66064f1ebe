// SPDX-License-Identifier: Apache-2.0
// The Qwen2 decoder of Qwen2.5-VL (docs/design/captioning.md §8), as transformers 5.25's
// Qwen2_5_VLTextModel + lm_head compute it: pre-norm blocks of grouped-query attention (q/k/v
// with biases, o without) under multimodal RoPE, and a SiLU-gated MLP; final RMS norm; lm_head.
// Frozen: the weights are held as loaded (bf16 stays bf16) and cast a matrix at a time to the
// compute dtype. A KV cache carries the keys and values of the tokens already seen.
//
//   QwenDecoder dec(cfg.text, weights, path);
//   QwenKvCache cache;
//   torch::Tensor logits = dec.forward(dec.embed(ids), rope.positions, cache, /*last_only=*/true);
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/state_dict.h"
#include "models/frozen_weights.h"
#include "models/qwen_vl_config.h"

namespace ws::models {

// Per layer, [kv_heads, capacity, head_dim] in the compute dtype; the first `length` rows along
// dim 1 are the tokens seen so far (the rest is room to grow without a copy per token).
struct QwenKvCache {
  std::vector<torch::Tensor> k, v;
  int64_t length = 0;
  void clear();
};

class QwenDecoder {
 public:
  // Weights by the released names with "model." stripped: embed_tokens.weight,
  // layers.{i}.self_attn.{q,k,v}_proj.{weight,bias}, layers.{i}.self_attn.o_proj.weight,
  // layers.{i}.mlp.{gate,up,down}_proj.weight, layers.{i}.{input,post_attention}_layernorm.weight,
  // norm.weight; plus lm_head.weight (absent when tie_word_embeddings: embed_tokens serves).
  // Strict: a missing, unexpected or mis-shaped key throws ws::Error naming it and `source`.
  QwenDecoder(QwenTextConfig config, io::StateDict weights, const std::string& source = "Qwen2.5-VL text weights");

  const QwenTextConfig& config() const { return config_; }
  // fp32 (default) or bf16; the RMS statistics, the softmax and the RoPE angles stay fp32.
  void set_compute_dtype(torch::ScalarType dtype);
  torch::ScalarType compute_dtype() const { return dtype_; }
  // Moves the weights (e.g. to CUDA); they keep their dtype.
  void to(const torch::Device& device);
  torch::Device device() const;

  // int64 [L] -> [L, hidden] in the compute dtype, on the weights' device.
  torch::Tensor embed(const torch::Tensor& ids) const;
  // embeds [L, hidden], positions int64 [3, L] (M-RoPE t, h, w) -> float32 logits [L, vocab], or
  // [1, vocab] for the last row with `last_only`. Attends causally over cache + chunk and appends
  // the chunk's keys and values to `cache`.
  torch::Tensor forward(const torch::Tensor& embeds, const torch::Tensor& positions, QwenKvCache& cache,
                        bool last_only) const;

  // cos, sin [L, head_dim] in float32 for positions [3, L]: the three streams' angles spliced by
  // mrope_section and doubled, as transformers' Qwen2_5_VLRotaryEmbedding lays them out.
  std::pair<torch::Tensor, torch::Tensor> rope(const torch::Tensor& positions) const;

 private:
  const torch::Tensor& w(const std::string& key) const;
  // In the compute dtype; a converted weight lives in a buffer reused by the next one of its shape.
  torch::Tensor cw(const std::string& key) const;
  torch::Tensor norm(const torch::Tensor& x, const std::string& key) const;
  torch::Tensor attention(int64_t layer, const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                          QwenKvCache& cache) const;

  QwenTextConfig config_;
  FrozenWeights weights_;
  torch::Tensor inv_freq_;  // [head_dim / 2] float32, on the CPU
  torch::ScalarType dtype_ = torch::kFloat;
};

}  // namespace ws::models
