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

ExpertStepRecord ExpertStep::forward_backward(const ExpertStepInput& in) {
  if (!in.x0.defined() || !in.noise.defined() || in.x0.sizes() != in.noise.sizes())
    throw Error("expert step: x0 and noise must have the same shape");
  model_->train();
  ExpertStepRecord rec;
  rec.x_t = noisy_latent(in.x0, in.noise, in.sigma);
  auto t = torch::tensor({static_cast<float>(in.t)});
  auto pred = model_->forward(rec.x_t, t, in.context.to(torch::kFloat), in.seq_len, in.y);
  auto target = in.noise.to(torch::kFloat) - in.x0.to(torch::kFloat);
  auto loss = torch::mse_loss(pred.to(torch::kFloat), target);
  optimizer_->zero_grad();
  loss.backward();
  rec.loss = loss.item<double>();
  rec.clip = clip_gradients(params_, opts_.clip, global_step_);
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
