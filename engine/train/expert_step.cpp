#include "train/expert_step.h"

#include "core/error.h"

namespace ws::train {

ExpertStep::ExpertStep(models::WanModel model, ExpertStepOptions opts) : model_(std::move(model)), opts_(opts) {
  AdamWGroup group;
  for (const auto& kv : model_->named_parameters()) {
    if (!kv.value().requires_grad()) continue;
    group.names.push_back(kv.key());
    group.params.push_back(kv.value());
  }
  params_ = group.params;
  optimizer_ = std::make_unique<AdamW>(std::vector<AdamWGroup>{group}, opts_.adam);
}

torch::Tensor ExpertStep::noisy_latent(const torch::Tensor& x0, const torch::Tensor& noise, float sigma) {
  // Scalars are applied in fp32 by the kernels: (1 − σ) is exact or correctly rounded either way.
  const double s = static_cast<double>(sigma);
  return x0.to(torch::kFloat) * (1.0 - s) + noise.to(torch::kFloat) * s;
}

void ExpertStep::begin_accumulation() {
  model_->train();
  optimizer_->zero_grad();
}

double ExpertStep::accumulate(const ExpertStepInput& in, double weight, torch::Tensor* x_t) {
  if (!in.x0.defined() || !in.noise.defined() || in.x0.sizes() != in.noise.sizes())
    throw Error("expert step: x0 and noise must have the same shape");
  auto xt = noisy_latent(in.x0, in.noise, in.sigma);
  auto t = torch::tensor({static_cast<float>(in.t)});
  auto pred = model_->forward(xt, t, in.context.to(torch::kFloat), in.seq_len, in.y);
  auto target = in.noise.to(torch::kFloat) - in.x0.to(torch::kFloat);
  auto loss = torch::mse_loss(pred.to(torch::kFloat), target);
  // Weight 1 backpropagates the loss itself, so the single-sample path stays bit-identical.
  if (weight == 1.0)
    loss.backward();
  else
    (loss * weight).backward();
  if (x_t) *x_t = xt;
  return loss.item<double>();
}

ClipResult ExpertStep::finish_gradients() { return clip_gradients(params_, opts_.clip, global_step_); }

ExpertStepRecord ExpertStep::forward_backward(const ExpertStepInput& in) {
  ExpertStepRecord rec;
  begin_accumulation();
  rec.loss = accumulate(in, 1.0, &rec.x_t);
  rec.clip = finish_gradients();
  return rec;
}

void ExpertStep::update() {
  optimizer_->step({opts_.learning_rate});
  ++global_step_;
}

ExpertStepRecord ExpertStep::step(const ExpertStepInput& in) {
  auto rec = forward_backward(in);
  update();
  return rec;
}

}  // namespace ws::train
