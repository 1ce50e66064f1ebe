// SPDX-License-Identifier: Apache-2.0
#include "train/experts/expert_lora.h"

#include "data/random_streams.h"
#include "train/experts/experts_setup.h"

namespace ws::train {

void store_block_linears(models::WanModelImpl& model, torch::ScalarType dtype) {
  torch::NoGradGuard ng;
  for (size_t n = 0; n < model.blocks->size(); ++n) {
    auto& b = *model.blocks[n]->as<models::WanBlockImpl>();
    for (torch::nn::Linear* l : {&b.self_attn->q, &b.self_attn->k, &b.self_attn->v, &b.self_attn->o, &b.cross_attn->q,
                                 &b.cross_attn->k, &b.cross_attn->v, &b.cross_attn->o, &b.ffn->l0, &b.ffn->l2}) {
      (*l)->weight.set_data((*l)->weight.data().to(dtype));
      if ((*l)->bias.defined()) (*l)->bias.set_data((*l)->bias.data().to(dtype));
    }
  }
}

nlohmann::json lora_record(const ExpertsLoraOptions& o) {
  auto one = [](const models::LoraSpec& s) {
    return nlohmann::json{{"rank", s.rank},
                          {"alpha", s.alpha},
                          {"dropout", s.dropout},
                          {"targets", s.targets.empty() ? models::wan_lora_block_linears() : s.targets}};
  };
  return {{"high", one(o.high)}, {"low", one(o.low)}, {"base_dtype", o.base_bf16 ? "BF16" : "F32"}};
}

models::WanLora make_expert_lora(models::WanModel& model, const models::LoraSpec& spec, bool base_bf16, int64_t seed,
                                 bool high, bool fp8_only) {
  for (auto& p : model->parameters()) p.requires_grad_(false);
  if (base_bf16) store_block_linears(*model, torch::kBFloat16);
  if (model->fp8()) model->refresh_fp8();
  // The adapters' draws depend on the seed and the expert only (not on what ran before).
  torch::manual_seed(data::Rng::keyed(seed, "lora", high ? 1 : 0).derive_seed());
  models::WanLora lora = models::WanLora::create(*model, spec);
  lora.to(model->device());
  lora.attach(*model, 1.0, spec.dropout);
  if (fp8_only && model->fp8()) model->keep_only_fp8();
  return lora;
}

}  // namespace ws::train
