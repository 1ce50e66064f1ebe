// SPDX-License-Identifier: Apache-2.0
// WanModel, the Wan 2.x diffusion transformer (docs/design/wan-dit.md), for one sample at a time.
// Parameter names are the official state-dict keys (`blocks.0.self_attn.q.weight`,
// `head.head.weight`, ...); Sequential indices of the reference are reproduced
// (`text_embedding.0/.2`, `time_projection.1`, `ffn.0/.2`).
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/state_dict.h"
#include "models/block_swap.h"
#include "models/fp8.h"
#include "models/wan_lora.h"
#include "models/wan_dit_config.h"

namespace ws::models {

using DitInter = std::map<std::string, torch::Tensor>;

// Linear → act → Linear registered as "0" and "2" (index 1 is the parameter-free activation).
class WanMlpImpl : public torch::nn::Module {
 public:
  WanMlpImpl(int64_t in, int64_t hidden, int64_t out);
  torch::Tensor forward(const torch::Tensor& x, bool gelu);  // gelu: GELU(tanh), else SiLU
  torch::nn::Linear l0{nullptr}, l2{nullptr};
  Fp8Weight fp8[2];     // fp8 copies of l0, l2 (blocks' ffn only); undefined: the weights themselves
  LoraAdapter lora[2];  // adapters on l0, l2 (blocks' ffn only; WanLora::attach)
  torch::ScalarType compute = torch::kFloat;  // matmul dtype (blocks' ffn only)
};
TORCH_MODULE(WanMlp);

// Self- or cross-attention: q, k, v, o and (qk_norm) norm_q/norm_k weights over the full width.
class WanAttentionImpl : public torch::nn::Module {
 public:
  WanAttentionImpl(int64_t dim, int64_t num_heads, bool qk_norm, double eps);
  // x [Lq, D], kv [Lk, D]; `angles` (a wan_rope_table) applies RoPE to q and k (self-attention only).
  // `keys` from keys_values(kv) may stand in for kv (cross-attention over a context seen before).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& kv, const torch::Tensor& angles,
                        const std::pair<torch::Tensor, torch::Tensor>& keys = {});
  // k and v of kv [Lk, D] as attention reads them: normed, [n, Lk, d] in the compute dtype (no RoPE).
  std::pair<torch::Tensor, torch::Tensor> keys_values(const torch::Tensor& kv);
  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};
  torch::Tensor norm_q, norm_k;               // `norm_q.weight` / `norm_k.weight`; undefined without qk_norm
  Fp8Weight fp8[4];                           // fp8 copies of q, k, v, o; undefined: the weights themselves
  LoraAdapter lora[4];                        // adapters on q, k, v, o (WanLora::attach)
  torch::ScalarType compute = torch::kFloat;  // matmul and attention dtype

 private:
  int64_t heads_;
  double eps_;
};
TORCH_MODULE(WanAttention);

class WanBlockImpl : public torch::nn::Module {
 public:
  explicit WanBlockImpl(const WanConfig& cfg);
  // x [L, D] residual stream, e0 [1 or L, 6, D], context [text_len, D], angles a wan_rope_table.
  // `text` (cross_attn->keys_values of the context) replaces the context's projections when given.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& e0, const torch::Tensor& context,
                        const torch::Tensor& angles, const std::pair<torch::Tensor, torch::Tensor>& text = {});
  // The same, each of its three parts (self-attention, cross-attention, FFN) a checkpoint of its
  // own: recomputed inside the block's recompute, so one part's activations live at a time.
  torch::Tensor forward_parts(const torch::Tensor& x, const torch::Tensor& e0, const torch::Tensor& context,
                              const torch::Tensor& angles);
  // What the block trains: its parameters that need grad and its attached LoRA adapters'.
  std::vector<torch::Tensor> trainables();
  WanAttention self_attn{nullptr}, cross_attn{nullptr};
  torch::nn::LayerNorm norm3{nullptr};  // affine; null when cross_attn_norm is off (identity)
  WanMlp ffn{nullptr};
  torch::Tensor modulation;  // [1, 6, D]

 private:
  // m = modulation + e0: the AdaLN chunks both the self-attention and the FFN parts use.
  torch::Tensor self_part(const torch::Tensor& x, const torch::Tensor& m, const torch::Tensor& angles);
  torch::Tensor cross_part(const torch::Tensor& x, const torch::Tensor& context,
                           const std::pair<torch::Tensor, torch::Tensor>& text);
  torch::Tensor ffn_part(const torch::Tensor& x, const torch::Tensor& m);
  int64_t dim_;
  double eps_;
};
TORCH_MODULE(WanBlock);

class WanHeadImpl : public torch::nn::Module {
 public:
  WanHeadImpl(int64_t dim, int64_t out_features, double eps);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& e);  // x, e [L, D]
  torch::nn::Linear head{nullptr};
  torch::Tensor modulation;  // [1, 2, D]

 private:
  double eps_;
};
TORCH_MODULE(WanHead);

// The text side of a forward for one context, computed once: the text embedding of the padded
// context and every block's cross-attention keys and values. A sampler reuses it at every step of
// one prompt (the reference recomputes it per step); it holds 2·text_len·dim values a block.
struct WanTextCache {
  torch::Tensor text;                                           // [text_len, D]
  std::vector<std::pair<torch::Tensor, torch::Tensor>> blocks;  // k, v per block
  bool defined() const { return text.defined(); }
};

// Text embeddings computed so far by every WanModel in the process (the sampler's text cache is
// tested by it).
int64_t wan_text_embeddings();

class WanModelImpl : public torch::nn::Module {
 public:
  explicit WanModelImpl(const WanConfig& cfg);

  // x [C_in, F, H, W] (no batch axis); t [1], [L'] or [1, L'] on the 0–1000 scale (per token when
  // it has more than one entry; only the first F·H/2·W/2 entries matter); context [L_txt, text_dim]
  // unpadded (≤ text_len rows); seq_len ≥ the token count (0 = the token count); y (i2v only)
  // [C_y, F, H, W] concatenated to x. Returns [out_dim, F, H, W]. Padding tokens are not
  // computed: they are masked keys and dropped queries in the reference, so real tokens do not
  // see them. `inter` receives the fixtures' intermediates (real tokens only).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& t, const torch::Tensor& context,
                        int64_t seq_len = 0, const torch::Tensor& y = {}, DitInter* inter = nullptr);

  // The same with the text side taken from encode_text(context) (inference only: no gradient).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& t, const WanTextCache& text, int64_t seq_len = 0,
                        const torch::Tensor& y = {});
  WanTextCache encode_text(const torch::Tensor& context);

  const WanConfig& config() const { return cfg_; }
  // Recompute each block in backward instead of keeping its activations.
  void set_gradient_checkpointing(bool on) { checkpointing_ = on; }
  bool gradient_checkpointing() const { return checkpointing_; }
  // With checkpointing: each block's input waits in host memory until its recompute, and each
  // block's three parts are checkpoints of their own (docs/design/block-swap.md).
  void set_checkpoint_offload(bool on) { checkpoint_offload_ = on; }
  void set_checkpoint_parts(bool on) { checkpoint_parts_ = on; }
  // The reference's init_weights (docs/design/wan-dit.md §2 "Fresh initialisation"); the constructor calls it.
  void init_weights();
  // fp8 e4m3 storage (docs/design/dual-expert-training.md §10): every block Linear (attention q/k/v/o, ffn)
  // reads an fp8 copy of its weight with a per-tensor scale; embeddings, modulation, norms and
  // the head stay in full precision. The copies are not in the state dict; refresh_fp8() makes
  // them again from the (master) weights, after each update.
  void set_fp8(bool on);
  void refresh_fp8();
  // A frozen base under LoRA (docs/design/lora.md): the block Linears keep only their fp8 copies;
  // their weights become empty placeholders, and refresh_fp8() only moves the copies to the
  // model's device. Irreversible; the state dict no longer holds those weights.
  void keep_only_fp8();
  bool fp8_only() const { return fp8_only_; }
  bool fp8() const { return fp8_; }
  // Bytes held by the fp8 copies.
  int64_t fp8_bytes() const;
  // Mixed precision (docs/design/wan-dit.md §8): the blocks' Linear matmuls and attention in `dtype` (bf16)
  // from the fp32 master weights, while the embeddings, AdaLN arithmetic, norms, residual stream
  // and head stay fp32. The parameters (and their gradients) keep their own dtype.
  void set_compute_dtype(torch::ScalarType dtype);
  torch::ScalarType compute_dtype() const { return compute_; }
  torch::Device device() const { return patch_embedding->weight.device(); }
  // Block swap (docs/design/block-swap.md): the last n blocks wait in host memory and are copied
  // onto the model's device just before they run; training then needs gradient checkpointing.
  // 0 turns it off and brings every block to the model's device.
  void set_blocks_to_swap(int64_t n);
  int64_t blocks_to_swap() const { return swap_ ? swap_->count() : 0; }
  // Copies, bytes and the device's wait so far (zeros when off).
  BlockSwapStats block_swap_stats();
  // Module::to for everything but the swapped blocks, which stay in host memory.
  void move_to(const torch::Device& device);
  // Every swapped block back in host memory, gradients included (after a backward).
  void release_swapped() {
    if (swap_) swap_->release_all();
  }

  torch::nn::Conv3d patch_embedding{nullptr};
  WanMlp text_embedding{nullptr}, time_embedding{nullptr};
  std::shared_ptr<torch::nn::Module> time_projection;  // holds "1" (index 0 is the SiLU)
  torch::nn::Linear time_projection_1{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  WanHead head{nullptr};

 private:
  torch::Tensor run_block(int64_t i, const torch::Tensor& x, const torch::Tensor& e0, const torch::Tensor& context,
                          const torch::Tensor& angles, const std::pair<torch::Tensor, torch::Tensor>& text);
  torch::Tensor embed_text(const torch::Tensor& context);
  torch::Tensor forward_tokens(const torch::Tensor& x_in, const torch::Tensor& t, const torch::Tensor& text,
                               const WanTextCache* cache, int64_t seq_len, const torch::Tensor& y, DitInter* inter);
  WanConfig cfg_;
  bool checkpointing_ = false;
  bool checkpoint_offload_ = false, checkpoint_parts_ = false;
  bool fp8_ = false;
  bool fp8_only_ = false;
  torch::ScalarType compute_ = torch::kFloat;
  std::shared_ptr<BlockSwap> swap_;
};
TORCH_MODULE(WanModel);

// A Linear in `compute` dtype, through its fp8 copy when it has one, plus its LoRA adapter's term
// when one is attached (dropout only while `training`). The output is in `compute`.
torch::Tensor apply_linear(torch::nn::Linear& lin, const Fp8Weight& q, const torch::Tensor& x,
                           torch::ScalarType compute = torch::kFloat, const LoraAdapter& lora = {},
                           bool training = false);

// Diffusers (`WanTransformer3DModel`) key names -> official ones (docs/design/wan-dit.md §2). Keys already official
// pass through; returns the input unchanged when it has no diffusers key.
io::StateDict wan_official_keys(const io::StateDict& sd);
bool wan_is_diffusers_state_dict(const io::StateDict& sd);

// Builds the model from `cfg` and loads `weights_path` strictly (any format load_weights reads:
// .safetensors, sharded *.safetensors.index.json, .pth, a model directory; official or
// diffusers keys). Errors name the file and the first missing/unexpected/mis-shaped key.
WanModel load_wan_model(const WanConfig& cfg, const std::string& weights_path);
// A model directory (config.json official or diffusers + weights) or a weights file with a
// config.json beside it.
WanModel load_wan_model(const std::string& path);

}  // namespace ws::models
