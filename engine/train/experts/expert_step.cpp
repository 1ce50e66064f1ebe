// SPDX-License-Identifier: Apache-2.0
#include "train/experts/expert_step.h"

#include "core/error.h"
#include "train/experts/expert_conditioning.h"
#include "train/experts/expert_lora.h"

namespace ws::train {

ExpertStep::ExpertStep(models::WanModel model, ExpertStepOptions opts)
    : model_(std::move(model)), opts_(std::move(opts)), last_lr_(opts_.learning_rate) {
  AdamWGroup group;
  for (const auto& kv : model_->named_parameters()) {
    if (!kv.value().requires_grad()) continue;
    group.names.push_back(kv.key());
    group.params.push_back(kv.value());
  }
  make_optimizer(std::move(group));
}

ExpertStep::ExpertStep(models::WanModel model, ExpertStepOptions opts, models::WanLora lora)
    : model_(std::move(model)), lora_(std::move(lora)), opts_(std::move(opts)), last_lr_(opts_.learning_rate) {
  AdamWGroup group;
  for (auto& [name, t] : lora_->named_parameters()) {
    group.names.push_back(name);
    group.params.push_back(t);
  }
  make_optimizer(std::move(group));
}

void ExpertStep::make_optimizer(AdamWGroup group) {
  opts_.schedule.validate();
  params_ = group.params;
  names_ = group.names;
  optimizer_ = std::make_unique<AdamW>(std::vector<AdamWGroup>{group}, opts_.adam);
}

void ExpertStep::shard(parallel::DataParallel& dp) {
  zero_ = std::make_unique<ZeroShard>(dp, names_, params_);
  rebuild_optimizer();
}

void ExpertStep::rebuild_optimizer() {
  AdamWGroup g;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!zero_ || zero_->owns(i)) {
      g.names.push_back(names_[i]);
      g.params.push_back(target(i));
    }
  optimizer_ = std::make_unique<AdamW>(std::vector<AdamWGroup>{g}, opts_.adam);
}

void ExpertStep::keep_master_weights() {
  if (lora_) throw Error("bf16 weights with fp32 masters are for full fine-tuning; a LoRA base has lora_base_dtype");
  torch::NoGradGuard ng;
  // The fp32 tensors as they are now become the masters (no copy); the module gets bf16 ones.
  std::vector<torch::Tensor> before;
  for (const auto& p : params_) before.push_back(p.detach());
  store_block_linears(*model_, torch::kBFloat16);
  masters_.assign(params_.size(), torch::Tensor());
  mastered_.assign(params_.size(), false);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].scalar_type() == before[i].scalar_type()) continue;
    mastered_[i] = true;
    if (!zero_ || zero_->owns(i)) masters_[i] = before[i];
  }
  if (zero_) zero_->set_masters(masters_, mastered_);
  rebuild_optimizer();
  if (model_->fp8()) model_->refresh_fp8();
}

std::vector<torch::Tensor> ExpertStep::optimizer_tensors() const {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i)
    if (!zero_ || zero_->owns(i)) out.push_back(target(i));
  return out;
}

void ExpertStep::release_gradients() {
  for (auto& p : params_)
    if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
  for (auto& m : masters_)
    if (m.defined() && m.grad().defined()) m.mutable_grad() = torch::Tensor();
}

void ExpertStep::gather_checkpoint_state() {
  if (zero_) zero_->gather_to_root(*optimizer_, gathered_, gathered_masters_);
}

io::StateDict ExpertStep::optimizer_state() const { return zero_ ? gathered_ : optimizer_->state_dict(); }

io::StateDict ExpertStep::weights_state() const {
  io::StateDict sd = io::module_state_dict(*model_);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (mastered_.empty() || !mastered_[i]) continue;
    if (zero_) {
      auto it = gathered_masters_.find(names_[i]);
      if (it != gathered_masters_.end()) sd[names_[i]] = it->second;
    } else {
      sd[names_[i]] = masters_[i];
    }
  }
  return sd;
}

void ExpertStep::load_weights(const io::StateDict& sd, const std::string& source) {
  io::load_state_dict(*model_, sd, io::LoadMode::Strict, source);
  torch::NoGradGuard ng;
  for (size_t i = 0; i < masters_.size(); ++i)
    if (masters_[i].defined()) masters_[i].copy_(sd.at(names_[i]));  // exact: the bf16 copy was rounded from it
  if (model_->fp8()) model_->refresh_fp8();
}

int64_t ExpertStep::optimizer_bytes() const {
  int64_t n = 0;
  for (const auto& name : optimizer_->groups().front().names)
    for (const auto& t : {optimizer_->exp_avg(name), optimizer_->exp_avg_sq(name)})
      if (t.defined()) n += t.numel() * static_cast<int64_t>(t.element_size());
  for (const auto& m : masters_)
    if (m.defined()) n += m.numel() * static_cast<int64_t>(m.element_size());
  return n;
}

torch::Tensor ExpertStep::noisy_latent(const torch::Tensor& x0, const torch::Tensor& noise, float sigma) {
  // Scalars are applied in fp32 by the kernels: (1 − σ) is exact or correctly rounded either way.
  const double s = static_cast<double>(sigma);
  return x0.to(torch::kFloat) * (1.0 - s) + noise.to(torch::kFloat) * s;
}

ExpertStepInput on_device(const ExpertStepInput& in, const torch::Device& device) {
  ExpertStepInput out = in;
  for (auto [src, dst] : {std::make_pair(&in.x0, &out.x0), std::make_pair(&in.noise, &out.noise),
                          std::make_pair(&in.context, &out.context), std::make_pair(&in.y, &out.y)})
    if (src->defined()) *dst = src->to(device);
  return out;
}

ExpertModelInput expert_model_input(const ExpertStepInput& in) {
  ExpertModelInput m;
  m.x_t = ExpertStep::noisy_latent(in.x0, in.noise, in.sigma);
  if (in.clean_first_frame) {
    m.x_t = with_clean_first_frame(m.x_t, in.x0.to(torch::kFloat));
    m.t = first_frame_token_timesteps(in.t, m.x_t.size(1), m.x_t.size(2), m.x_t.size(3));
  } else {
    m.t = torch::tensor({static_cast<float>(in.t)});
  }
  return m;
}

torch::Tensor expert_loss(const torch::Tensor& pred, const ExpertStepInput& in) {
  auto p = pred.to(torch::kFloat);
  auto target = in.noise.to(p.device(), torch::kFloat) - in.x0.to(p.device(), torch::kFloat);
  if (in.clean_first_frame) {
    const int64_t F = p.size(1);
    p = p.narrow(1, 1, F - 1);
    target = target.narrow(1, 1, F - 1);
  }
  return torch::mse_loss(p, target);
}

void ExpertStep::begin_accumulation() {
  model_->train();
  release_gradients();
}

void ExpertStep::to(const torch::Device& device) {
  if (device == model_->device()) return;
  model_->move_to(device);  // swapped blocks stay in host memory, their moments with them
  if (lora_) lora_->to(device);
  optimizer_->to(device, /*follow_parameters=*/model_->blocks_to_swap() > 0);
  torch::NoGradGuard ng;
  for (auto& m : masters_)  // in place: the optimizer holds these tensors
    if (m.defined()) m.set_data(m.data().to(device));
  if (model_->fp8()) model_->refresh_fp8();
}

double ExpertStep::accumulate(const ExpertStepInput& in_any, double weight, torch::Tensor* x_t) {
  const ExpertStepInput in = on_device(in_any, model_->device());
  if (!in.x0.defined() || !in.noise.defined() || in.x0.sizes() != in.noise.sizes())
    throw Error("expert step: x0 and noise must have the same shape");
  if (in.clean_first_frame && in.x0.size(1) < 2)
    throw Error("expert step: first-frame conditioning needs 2+ latent frames");
  const ExpertModelInput mi = expert_model_input(in);
  auto pred = model_->forward(mi.x_t, mi.t, in.context.to(torch::kFloat), in.seq_len, in.y);
  auto loss = expert_loss(pred, in);
  // Weight 1 backpropagates the loss itself, so the single-sample path stays bit-identical.
  if (weight == 1.0) loss.backward();
  else (loss * weight).backward();
  model_->release_swapped();  // the backward ends with the lowest swapped block on the device
  if (x_t) *x_t = mi.x_t;
  return loss.item<double>();
}

void ExpertStep::fold_gradients() {
  if (zero_) return zero_->reduce_gradients();
  torch::NoGradGuard ng;
  for (size_t i = 0; i < masters_.size(); ++i) {
    if (!masters_[i].defined() || !params_[i].grad().defined()) continue;
    auto& g = masters_[i].mutable_grad();
    if (g.defined()) g.add_(params_[i].grad());
    else g = params_[i].grad().to(torch::kFloat);
    params_[i].mutable_grad() = torch::Tensor();
  }
}

ClipResult ExpertStep::finish_gradients() {
  if (zero_) {
    const ZeroShard::Norms n = zero_->finish_gradients();
    max_abs_ = n.max_abs;
    return clip_gradients_to_norm(zero_->owned_targets(), n.l2, opts_.clip, global_step_);
  }
  const auto targets = optimizer_tensors();
  torch::Tensor mx;
  for (const auto& t : targets)
    if (t.grad().defined()) {
      auto m = max_abs_value(t.grad());
      mx = mx.defined() ? torch::maximum(mx, m.to(mx.device())) : m;  // swapped blocks' on the host
    }
  max_abs_ = mx.defined() ? mx.item<double>() : 0.0;
  return clip_gradients(targets, opts_.clip, global_step_);
}

ExpertStepRecord ExpertStep::forward_backward(const ExpertStepInput& in) {
  ExpertStepRecord rec;
  begin_accumulation();
  rec.loss = accumulate(in, 1.0, &rec.x_t);
  fold_gradients();
  rec.clip = finish_gradients();
  return rec;
}

void ExpertStep::update(std::optional<int64_t> schedule_step) {
  last_lr_ = opts_.schedule.lr(schedule_step.value_or(global_step_), opts_.learning_rate);
  optimizer_->step({last_lr_});
  {
    torch::NoGradGuard ng;
    for (size_t i = 0; i < masters_.size(); ++i)  // the bf16 weights rounded from their updated masters
      if (masters_[i].defined()) params_[i].detach().copy_(masters_[i]);
  }
  if (zero_) zero_->broadcast_weights();
  if (model_->fp8()) model_->refresh_fp8();  // the fp8 copies follow the master weights
  ++global_step_;
}

ExpertStepRecord ExpertStep::step(const ExpertStepInput& in) {
  auto rec = forward_backward(in);
  update();
  return rec;
}

}  // namespace ws::train
