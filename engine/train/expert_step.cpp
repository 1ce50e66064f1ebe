#include "train/expert_step.h"

#include "core/error.h"
#include "train/expert_conditioning.h"

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
  optimizer_ = std::make_unique<AdamW>(std::vector<AdamWGroup>{zero_->owned_group()}, opts_.adam);
  if (model_->device() != torch::Device(torch::kCPU)) optimizer_->to(model_->device());
}

void ExpertStep::release_gradients() {
  for (auto& p : params_)
    if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
}

void ExpertStep::gather_optimizer_state() {
  if (zero_) gathered_ = zero_->gather_optimizer_state(*optimizer_);
}

io::StateDict ExpertStep::optimizer_state() const { return zero_ ? gathered_ : optimizer_->state_dict(); }

int64_t ExpertStep::optimizer_bytes() const {
  int64_t n = 0;
  for (const auto& name : optimizer_->groups().front().names)
    for (const auto& t : {optimizer_->exp_avg(name), optimizer_->exp_avg_sq(name)})
      if (t.defined()) n += t.numel() * static_cast<int64_t>(t.element_size());
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
  model_->to(device);
  if (lora_) lora_->to(device);
  optimizer_->to(device);
  if (model_->fp8()) model_->refresh_fp8();
}

double ExpertStep::accumulate(const ExpertStepInput& in_any, double weight, torch::Tensor* x_t) {
  const ExpertStepInput in = on_device(in_any, model_->device());
  if (!in.x0.defined() || !in.noise.defined() || in.x0.sizes() != in.noise.sizes())
    throw Error("expert step: x0 and noise must have the same shape");
  if (in.clean_first_frame && in.x0.size(1) < 2) throw Error("expert step: first-frame conditioning needs 2+ latent frames");
  const ExpertModelInput mi = expert_model_input(in);
  auto pred = model_->forward(mi.x_t, mi.t, in.context.to(torch::kFloat), in.seq_len, in.y);
  auto loss = expert_loss(pred, in);
  // Weight 1 backpropagates the loss itself, so the single-sample path stays bit-identical.
  if (weight == 1.0)
    loss.backward();
  else
    (loss * weight).backward();
  if (x_t) *x_t = mi.x_t;
  return loss.item<double>();
}

ClipResult ExpertStep::finish_gradients() {
  if (!zero_) return clip_gradients(params_, opts_.clip, global_step_);
  const double norm = zero_->reduce_gradients();
  max_abs_ = zero_->max_abs_gradient();
  return clip_gradients_to_norm(zero_->owned_params(), norm, opts_.clip, global_step_);
}

ExpertStepRecord ExpertStep::forward_backward(const ExpertStepInput& in) {
  ExpertStepRecord rec;
  begin_accumulation();
  rec.loss = accumulate(in, 1.0, &rec.x_t);
  rec.clip = finish_gradients();
  return rec;
}

void ExpertStep::update(std::optional<int64_t> schedule_step) {
  last_lr_ = opts_.schedule.lr(schedule_step.value_or(global_step_), opts_.learning_rate);
  optimizer_->step({last_lr_});
  if (zero_) zero_->gather_weights();
  if (model_->fp8()) model_->refresh_fp8();  // the fp8 copies follow the master weights
  ++global_step_;
}

ExpertStepRecord ExpertStep::step(const ExpertStepInput& in) {
  auto rec = forward_backward(in);
  update();
  return rec;
}

}  // namespace ws::train
