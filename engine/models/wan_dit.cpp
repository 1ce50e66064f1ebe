// SPDX-License-Identifier: Apache-2.0
#include "models/wan_dit.h"

#include <atomic>
#include <cmath>
#include <sstream>

#include "core/interrupt.h"
#include "core/error.h"
#include "models/cpu_gemm.h"
#include "models/grad_checkpoint.h"
#include "models/wan_dit_ops.h"

namespace ws::models {

namespace {

torch::Tensor layer_norm(const torch::Tensor& x, double eps) {
  // WanLayerNorm: statistics in fp32, result back in x's dtype.
  return torch::layer_norm(x.to(torch::kFloat), {x.size(-1)}, {}, {}, eps).to(x.scalar_type());
}

std::string sizes_str(const torch::Tensor& t) {
  std::ostringstream o;
  o << t.sizes();
  return o.str();
}

}  // namespace

WanMlpImpl::WanMlpImpl(int64_t in, int64_t hidden, int64_t out) {
  l0 = register_module("0", torch::nn::Linear(in, hidden));
  l2 = register_module("2", torch::nn::Linear(hidden, out));
}

static torch::Tensor base_linear(torch::nn::Linear& lin, const Fp8Weight& q, const torch::Tensor& xc,
                                 torch::ScalarType compute) {
  if (q.defined()) return fp8_linear(xc, lin->weight, lin->bias, q);
  if (compute == lin->weight.scalar_type()) return gemm_linear(xc, lin->weight, lin->bias);
  // The casts are autograd ops: gradients arrive at the master weights in their own dtype.
  return gemm_linear(xc, lin->weight.to(compute), lin->bias.to(compute));
}

torch::Tensor apply_linear(torch::nn::Linear& lin, const Fp8Weight& q, const torch::Tensor& x,
                           torch::ScalarType compute, const LoraAdapter& lora, bool training) {
  const auto xc = x.to(compute);
  auto y = base_linear(lin, q, xc, compute);
  if (lora.defined()) y = y + lora.delta(x, training, compute);
  return y;
}

torch::Tensor WanMlpImpl::forward(const torch::Tensor& x, bool gelu) {
  auto h = apply_linear(l0, fp8[0], x, compute, lora[0], is_training());
  // Training a plain Linear: its input, the GELU's output (ffn_dim wide), is not stored.
  if (gelu && torch::GradMode::is_enabled() && !fp8[1].defined() && !lora[1].defined() &&
      compute == l2->weight.scalar_type() && h.scalar_type() == compute)
    return wan_gelu_linear(h, l2->weight, l2->bias);
  return apply_linear(l2, fp8[1], gelu ? torch::gelu(h, "tanh") : torch::silu(h), compute, lora[1], is_training());
}

WanAttentionImpl::WanAttentionImpl(int64_t dim, int64_t num_heads, bool qk_norm, double eps)
    : heads_(num_heads), eps_(eps) {
  q = register_module("q", torch::nn::Linear(dim, dim));
  k = register_module("k", torch::nn::Linear(dim, dim));
  v = register_module("v", torch::nn::Linear(dim, dim));
  o = register_module("o", torch::nn::Linear(dim, dim));
  if (qk_norm) {
    // WanRMSNorm modules hold only `weight`.
    norm_q = register_module("norm_q", std::make_shared<torch::nn::Module>("WanRMSNorm"))
                 ->register_parameter("weight", torch::ones({dim}));
    norm_k = register_module("norm_k", std::make_shared<torch::nn::Module>("WanRMSNorm"))
                 ->register_parameter("weight", torch::ones({dim}));
  }
}

std::pair<torch::Tensor, torch::Tensor> WanAttentionImpl::keys_values(const torch::Tensor& kv) {
  const int64_t Lk = kv.size(0), n = heads_, d = kv.size(1) / n;
  const bool tr = is_training();
  auto kx = apply_linear(k, fp8[1], kv, compute, lora[1], tr), vx = apply_linear(v, fp8[2], kv, compute, lora[2], tr);
  if (norm_k.defined()) kx = wan_rms_norm(kx, norm_k, eps_);
  return {kx.view({Lk, n, d}).transpose(0, 1).to(compute), vx.view({Lk, n, d}).transpose(0, 1).to(compute)};
}

torch::Tensor WanAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& kv, const torch::Tensor& angles,
                                        const std::pair<torch::Tensor, torch::Tensor>& keys) {
  const int64_t Lq = x.size(0), D = x.size(1), n = heads_, d = D / n;
  const bool tr = is_training();
  auto qx = apply_linear(q, fp8[0], x, compute, lora[0], tr);
  if (norm_q.defined()) qx = wan_rms_norm(qx, norm_q, eps_);
  qx = qx.view({Lq, n, d});
  torch::Tensor kt, vt;
  if (keys.first.defined()) {
    std::tie(kt, vt) = keys;
  } else if (angles.defined()) {
    // Self-attention: RoPE on the keys before they turn head-major.
    const int64_t Lk = kv.size(0);
    auto kx = apply_linear(k, fp8[1], kv, compute, lora[1], tr);
    if (norm_k.defined()) kx = wan_rms_norm(kx, norm_k, eps_);
    kt = wan_rope_apply(kx.view({Lk, n, d}), angles).transpose(0, 1).to(compute);
    vt = apply_linear(v, fp8[2], kv, compute, lora[2], tr).view({Lk, n, d}).transpose(0, 1).to(compute);
  } else {
    std::tie(kt, vt) = keys_values(kv);
  }
  if (angles.defined()) qx = wan_rope_apply(qx, angles);
  // Norms and RoPE run in fp32/double; attention itself in the compute dtype.
  auto out = wan_attention(qx.transpose(0, 1).to(compute), kt, vt, 1.0 / std::sqrt(static_cast<double>(d)));
  return apply_linear(o, fp8[3], out.transpose(0, 1).reshape({Lq, D}), compute, lora[3], tr);
}

WanBlockImpl::WanBlockImpl(const WanConfig& cfg) : dim_(cfg.dim), eps_(cfg.eps) {
  self_attn = register_module("self_attn", WanAttention(cfg.dim, cfg.num_heads, cfg.qk_norm, cfg.eps));
  cross_attn = register_module("cross_attn", WanAttention(cfg.dim, cfg.num_heads, cfg.qk_norm, cfg.eps));
  if (cfg.cross_attn_norm)
    norm3 = register_module("norm3", torch::nn::LayerNorm(torch::nn::LayerNormOptions({cfg.dim}).eps(cfg.eps)));
  ffn = register_module("ffn", WanMlp(cfg.dim, cfg.ffn_dim, cfg.dim));
  modulation =
      register_parameter("modulation", torch::randn({1, 6, cfg.dim}) / std::sqrt(static_cast<double>(cfg.dim)));
}

torch::Tensor WanBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& e0, const torch::Tensor& context,
                                    const torch::Tensor& angles, const std::pair<torch::Tensor, torch::Tensor>& text) {
  // Chunk order: shift_sa, scale_sa, gate_sa, shift_ff, scale_ff, gate_ff (fp32 AdaLN math).
  auto m = modulation + e0;  // [1 or L, 6, D]
  return ffn_part(cross_part(self_part(x, m, angles), context, text), m);
}

torch::Tensor WanBlockImpl::self_part(const torch::Tensor& x, const torch::Tensor& m, const torch::Tensor& angles) {
  auto a = layer_norm(x, eps_) * (1 + m.select(1, 1)) + m.select(1, 0);
  return x + self_attn->forward(a, a, angles) * m.select(1, 2);
}

torch::Tensor WanBlockImpl::cross_part(const torch::Tensor& x, const torch::Tensor& context,
                                       const std::pair<torch::Tensor, torch::Tensor>& text) {
  // Cross-attention is neither modulated nor gated, and has no RoPE.
  auto hn = norm3 ? norm3(x.to(torch::kFloat)).to(x.scalar_type()) : x;
  return x + cross_attn->forward(hn, context, torch::Tensor(), text);
}

torch::Tensor WanBlockImpl::ffn_part(const torch::Tensor& x, const torch::Tensor& m) {
  auto f = layer_norm(x, eps_) * (1 + m.select(1, 4)) + m.select(1, 3);
  return x + ffn(f, /*gelu=*/true) * m.select(1, 5);
}

namespace {

// Appends the LoRA adapters' tensors that train.
void add_adapters(std::vector<torch::Tensor>& out, const LoraAdapter* adapters, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (adapters[i].defined())
      for (const auto& t : {adapters[i].down, adapters[i].up})
        if (t.requires_grad()) out.push_back(t);
}

std::vector<torch::Tensor> attention_trainables(WanAttentionImpl& a) {
  auto out = trainable_parameters(a);
  add_adapters(out, a.lora, 4);
  return out;
}

}  // namespace

torch::Tensor WanBlockImpl::forward_parts(const torch::Tensor& x, const torch::Tensor& e0, const torch::Tensor& context,
                                          const torch::Tensor& angles) {
  auto m = modulation + e0;
  // Each part's trainables; m and the context are routed like parameters (gradients flow to them).
  auto self_params = attention_trainables(*self_attn);
  self_params.push_back(m);
  auto cross_params = attention_trainables(*cross_attn);
  if (norm3)
    for (const auto& p : trainable_parameters(*norm3)) cross_params.push_back(p);
  cross_params.push_back(context);
  auto ffn_params = trainable_parameters(*ffn);
  add_adapters(ffn_params, ffn->lora, 2);
  ffn_params.push_back(m);
  auto h = checkpoint([this, m, angles](const torch::Tensor& v) { return self_part(v, m, angles); }, x, self_params);
  h = checkpoint([this, context](const torch::Tensor& v) { return cross_part(v, context, {}); }, h, cross_params);
  return checkpoint([this, m](const torch::Tensor& v) { return ffn_part(v, m); }, h, ffn_params);
}

std::vector<torch::Tensor> WanBlockImpl::trainables() {
  auto params = trainable_parameters(*this);
  // Attached LoRA adapters are not the block's parameters, but train through it.
  add_adapters(params, self_attn->lora, 4);
  add_adapters(params, cross_attn->lora, 4);
  add_adapters(params, ffn->lora, 2);
  return params;
}

WanHeadImpl::WanHeadImpl(int64_t dim, int64_t out_features, double eps) : eps_(eps) {
  head = register_module("head", torch::nn::Linear(dim, out_features));
  modulation = register_parameter("modulation", torch::randn({1, 2, dim}) / std::sqrt(static_cast<double>(dim)));
}

torch::Tensor WanHeadImpl::forward(const torch::Tensor& x, const torch::Tensor& e) {
  // The head uses the un-projected time embedding e, without a SiLU.
  auto m = modulation + e.unsqueeze(1);  // [1 or L, 2, D]
  return gemm_linear(layer_norm(x, eps_) * (1 + m.select(1, 1)) + m.select(1, 0), head->weight, head->bias);
}

WanModelImpl::WanModelImpl(const WanConfig& cfg) : cfg_(cfg) {
  cfg_.validate();
  const int64_t D = cfg.dim;
  patch_embedding = register_module(
      "patch_embedding", torch::nn::Conv3d(torch::nn::Conv3dOptions(cfg.in_dim, D, {1, 2, 2}).stride({1, 2, 2})));
  text_embedding = register_module("text_embedding", WanMlp(cfg.text_dim, D, D));
  time_embedding = register_module("time_embedding", WanMlp(cfg.freq_dim, D, D));
  time_projection = register_module("time_projection", std::make_shared<torch::nn::Module>("Sequential"));
  time_projection_1 = time_projection->register_module("1", torch::nn::Linear(D, 6 * D));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < cfg.num_layers; ++i) blocks->push_back(WanBlock(cfg));
  head = register_module("head", WanHead(D, cfg.out_dim * 4, cfg.eps));
  init_weights();
}

void WanModelImpl::init_weights() {
  torch::NoGradGuard no_grad;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* lin = m->as<torch::nn::Linear>()) {
      torch::nn::init::xavier_uniform_(lin->weight);
      lin->bias.zero_();
    }
  }
  // Conv3d weight as [D, Cin·4]; the bias keeps PyTorch's default.
  auto w = patch_embedding->weight;
  torch::nn::init::xavier_uniform_(w.view({w.size(0), -1}));
  for (auto* mlp : {text_embedding.get(), time_embedding.get()}) {
    torch::nn::init::normal_(mlp->l0->weight, 0.0, 0.02);
    torch::nn::init::normal_(mlp->l2->weight, 0.0, 0.02);
  }
  head->head->weight.zero_();
  const double s = 1.0 / std::sqrt(static_cast<double>(cfg_.dim));
  for (auto& b : *blocks) b->as<WanBlockImpl>()->modulation.copy_(torch::randn({1, 6, cfg_.dim}) * s);
  head->modulation.copy_(torch::randn({1, 2, cfg_.dim}) * s);
}

void WanModelImpl::set_compute_dtype(torch::ScalarType dtype) {
  compute_ = dtype;
  for (auto& m : *blocks) {
    auto* b = m->as<WanBlockImpl>();
    b->self_attn->compute = b->cross_attn->compute = b->ffn->compute = dtype;
  }
}

void WanModelImpl::set_fp8(bool on) {
  fp8_ = on;
  refresh_fp8();
}

void WanModelImpl::refresh_fp8() {
  if (fp8_only_) {  // no master weights to quantise: the copies follow their block (swapped ones wait on the host)
    for (auto& m : *blocks) {
      auto* b = m->as<WanBlockImpl>();
      const torch::Device dev = b->self_attn->q->weight.device();
      for (auto* a : {b->self_attn.get(), b->cross_attn.get()})
        for (auto& q : a->fp8) q.codes = q.codes.to(dev);
      for (auto& q : b->ffn->fp8) q.codes = q.codes.to(dev);
    }
    return;
  }
  for (auto& m : *blocks) {
    auto* b = m->as<WanBlockImpl>();
    for (auto* a : {b->self_attn.get(), b->cross_attn.get()}) {
      torch::nn::Linear* lin[4] = {&a->q, &a->k, &a->v, &a->o};
      for (int i = 0; i < 4; ++i) a->fp8[i] = fp8_ ? fp8_quantize((*lin[i])->weight) : Fp8Weight{};
    }
    b->ffn->fp8[0] = fp8_ ? fp8_quantize(b->ffn->l0->weight) : Fp8Weight{};
    b->ffn->fp8[1] = fp8_ ? fp8_quantize(b->ffn->l2->weight) : Fp8Weight{};
  }
}

void WanModelImpl::keep_only_fp8() {
  if (!fp8_) throw Error("keep_only_fp8: the model has no fp8 copies");
  torch::NoGradGuard ng;
  for (auto& m : *blocks) {
    auto* b = m->as<WanBlockImpl>();
    for (torch::nn::Linear* l :
         {&b->self_attn->q, &b->self_attn->k, &b->self_attn->v, &b->self_attn->o, &b->cross_attn->q, &b->cross_attn->k,
          &b->cross_attn->v, &b->cross_attn->o, &b->ffn->l0, &b->ffn->l2})
      (*l)->weight.set_data(torch::empty({0}, (*l)->weight.options()));
  }
  fp8_only_ = true;
}

int64_t WanModelImpl::fp8_bytes() const {
  int64_t n = 0;
  for (const auto& m : *blocks) {
    const auto* b = m->as<WanBlockImpl>();
    for (const auto* a : {b->self_attn.get(), b->cross_attn.get()})
      for (const auto& q : a->fp8)
        if (q.defined()) n += q.codes.numel();
    for (const auto& q : b->ffn->fp8)
      if (q.defined()) n += q.codes.numel();
  }
  return n;
}

torch::Tensor WanModelImpl::run_block(int64_t i, const torch::Tensor& x, const torch::Tensor& e0,
                                      const torch::Tensor& context, const torch::Tensor& angles,
                                      const std::pair<torch::Tensor, torch::Tensor>& text) {
  WanBlockImpl& block = *blocks[static_cast<size_t>(i)]->as<WanBlockImpl>();
  if (!checkpointing_ || !is_training()) {
    if (swap_) swap_->enter(i, +1, device());
    return block.forward(x, e0, context, angles, text);
  }
  // e0 and the context carry gradients to the embeddings: route them like parameters.
  auto params = block.trainables();
  params.push_back(e0);
  params.push_back(context);
  auto* raw = &block;
  // The recompute in backward visits the blocks downwards: the swap prefetches the one below.
  // Parts are checkpointed only inside the recompute (the forward keeps nothing anyway).
  return checkpoint(
      [raw, swap = swap_, i, dev = device(), e0, context, angles, parts = checkpoint_parts_](const torch::Tensor& h) {
        if (swap) swap->enter(i, checkpoint_recomputing() ? -1 : +1, dev);
        return parts && checkpoint_recomputing() ? raw->forward_parts(h, e0, context, angles)
                                                 : raw->forward(h, e0, context, angles);
      },
      x, params, CheckpointOptions{checkpoint_offload_});
}

void WanModelImpl::set_blocks_to_swap(int64_t n) {
  const torch::Device dev = device();
  if (swap_) {
    swap_->release_all();
    swap_.reset();
    move_to(dev);  // the blocks that waited in host memory come back
    if (fp8_only_) refresh_fp8();
  }
  if (n == 0) return;
  std::vector<BlockSwap::Block> list;
  for (auto& m : *blocks) {
    auto* b = m->as<WanBlockImpl>();
    BlockSwap::Block e{b, {}};
    for (auto* a : {b->self_attn.get(), b->cross_attn.get()})
      for (auto& q : a->fp8) e.extra.push_back(&q.codes);
    for (auto& q : b->ffn->fp8) e.extra.push_back(&q.codes);
    list.push_back(std::move(e));
  }
  swap_ = std::make_shared<BlockSwap>(std::move(list), n);
  swap_->home(dev);
}

BlockSwapStats WanModelImpl::block_swap_stats() { return swap_ ? swap_->stats() : BlockSwapStats{}; }

void WanModelImpl::move_to(const torch::Device& dev) {
  if (!swap_) return to(dev);
  swap_->release_all();
  for (const auto& child : named_children())
    if (child.key() != "blocks") child.value()->to(dev);
  for (int64_t i = 0; i < swap_->first(); ++i) blocks[static_cast<size_t>(i)]->to(dev);
  if (fp8_only_) refresh_fp8();
  swap_->home(dev);
}

namespace {
std::atomic<int64_t> g_text_embeddings{0};
}  // namespace

int64_t wan_text_embeddings() { return g_text_embeddings.load(); }

torch::Tensor WanModelImpl::embed_text(const torch::Tensor& context) {
  ++g_text_embeddings;
  if (context.dim() != 2 || context.size(1) != cfg_.text_dim || context.size(0) > cfg_.text_len)
    throw Error("WanModel: context must be [<= " + std::to_string(cfg_.text_len) + ", " +
                std::to_string(cfg_.text_dim) + "], got " + sizes_str(context));
  // Text: zero-pad to text_len before the MLP; every row is attended.
  auto ctx = context.to(patch_embedding->weight.options());
  if (ctx.size(0) < cfg_.text_len)
    ctx = torch::cat({ctx, torch::zeros({cfg_.text_len - ctx.size(0), ctx.size(1)}, ctx.options())}, 0);
  return text_embedding(ctx, /*gelu=*/true);
}

WanTextCache WanModelImpl::encode_text(const torch::Tensor& context) {
  torch::NoGradGuard no_grad;
  WanTextCache cache;
  cache.text = embed_text(context);
  for (int64_t i = 0; i < static_cast<int64_t>(blocks->size()); ++i) {
    if (swap_) swap_->enter(i, +1, device());
    cache.blocks.push_back(blocks[static_cast<size_t>(i)]->as<WanBlockImpl>()->cross_attn->keys_values(cache.text));
  }
  if (swap_) swap_->release_all();
  return cache;
}

torch::Tensor WanModelImpl::forward(const torch::Tensor& x_in, const torch::Tensor& t, const torch::Tensor& context,
                                    int64_t seq_len, const torch::Tensor& y, DitInter* inter) {
  return forward_tokens(x_in, t, embed_text(context), nullptr, seq_len, y, inter);
}

torch::Tensor WanModelImpl::forward(const torch::Tensor& x, const torch::Tensor& t, const WanTextCache& text,
                                    int64_t seq_len, const torch::Tensor& y) {
  if (!text.defined() || text.blocks.size() != blocks->size())
    throw Error("WanModel: the text cache was made by another model");
  if (torch::GradMode::is_enabled()) throw Error("WanModel: a text cache is for inference (no gradient)");
  return forward_tokens(x, t, text.text, &text, seq_len, y, nullptr);
}

torch::Tensor WanModelImpl::forward_tokens(const torch::Tensor& x_in, const torch::Tensor& t, const torch::Tensor& text,
                                           const WanTextCache* cache, int64_t seq_len, const torch::Tensor& y,
                                           DitInter* inter) {
  const int64_t D = cfg_.dim;
  torch::Tensor x = x_in;
  if (y.defined()) {
    if (y.dim() != 4 || x.dim() != 4 || y.sizes().slice(1) != x.sizes().slice(1))
      throw Error("WanModel: y " + sizes_str(y) + " does not match x " + sizes_str(x) + " in F, H, W");
    x = torch::cat({x, y.to(x.options())}, 0);
  }
  if (x.dim() != 4 || x.size(0) != cfg_.in_dim || x.size(2) % 2 || x.size(3) % 2)
    throw Error("WanModel: x must be [" + std::to_string(cfg_.in_dim) + ", F, H, W] with even H and W, got " +
                sizes_str(x));
  const int64_t F = x.size(1), Hp = x.size(2) / 2, Wp = x.size(3) / 2, L = F * Hp * Wp;
  if (seq_len <= 0) seq_len = L;
  if (seq_len < L)
    throw Error("WanModel: seq_len " + std::to_string(seq_len) + " is smaller than the token count " +
                std::to_string(L));
  auto tt = t.flatten();
  if (tt.numel() != 1 && tt.numel() != seq_len)
    throw Error("WanModel: t must have 1 or seq_len (" + std::to_string(seq_len) + ") entries, got " + sizes_str(t));

  // Patch embedding: tokens ordered f, h, w.
  auto tokens = patch_embedding(x.unsqueeze(0)).flatten(2).transpose(1, 2).squeeze(0);  // [L, D]
  if (inter) (*inter)["inter.patch_tokens"] = tokens;

  // Time embedding per token; one distinct row when t is a scalar (broadcast, same values).
  auto emb = wan_sinusoidal_embedding(tt.numel() == 1 ? tt : tt.slice(0, 0, L), cfg_.freq_dim)
                 .to(patch_embedding->weight.options());
  // With one t the embedding stays one row and broadcasts over the tokens: a [L, 6, D] copy
  // would be stored for backward in every block and its gradient summed back over L.
  auto e = time_embedding(emb, /*gelu=*/false);
  auto e0 = time_projection_1(torch::silu(e)).view({-1, 6, D});
  if (inter) {
    (*inter)["inter.time_embedding"] = e.expand({L, D});
    (*inter)["inter.time_projection"] = e0.expand({L, 6, D});
  }

  const torch::Tensor& c = text;
  if (inter) (*inter)["inter.text_embedding"] = c;

  // cos and sin of the RoPE angles once per forward, not per block.
  auto angles = wan_rope_table(wan_rope_angles(cfg_.head_dim(), F, Hp, Wp).to(tokens.device()));
  // Swapped blocks' weights leave after their forward, so autograd must not keep them.
  if (swap_ && torch::GradMode::is_enabled() && !(checkpointing_ && is_training()))
    throw Error("WanModel: blocks_to_swap needs gradient checkpointing to train");
  auto h = tokens;
  for (int64_t i = 0; i < static_cast<int64_t>(blocks->size()); ++i) {
    interruption_point();  // a stop asked for mid-forward ends within one block
    h = run_block(i, h, e0, c, angles,
                  cache ? cache->blocks[static_cast<size_t>(i)] : std::pair<torch::Tensor, torch::Tensor>{});
    if (inter) (*inter)["inter.block_" + std::to_string(i)] = h;
  }
  // Training keeps the last swapped block for the backward, which starts with it.
  if (swap_ && !torch::GradMode::is_enabled()) swap_->release_all();
  auto out = head(h, e);  // [L, Cout·4]
  if (inter) (*inter)["inter.head"] = out;

  // Unpatchify: features ordered (pf, ph, pw, c), c fastest.
  const int64_t C = cfg_.out_dim;
  return out.view({F, Hp, Wp, 1, 2, 2, C}).permute({6, 0, 3, 1, 4, 2, 5}).reshape({C, F, 2 * Hp, 2 * Wp});
}

}  // namespace ws::models
