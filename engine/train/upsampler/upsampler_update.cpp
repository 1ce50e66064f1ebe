// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_update.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace ws::train {

std::vector<AdamWGroup> make_param_groups(torch::nn::Module& module, const std::vector<std::string>& trainable,
                                          const std::vector<std::string>& low_lr) {
  auto matches = [](const std::string& name, const std::vector<std::string>& subs) {
    for (const auto& s : subs)
      if (name.find(s) != std::string::npos) return true;
    return false;
  };
  AdamWGroup main, low;
  for (auto& kv : module.named_parameters()) {
    const std::string& name = kv.key();
    auto& p = kv.value();
    // As in the reference: the low-LR list wins over the main list.
    if (matches(name, low_lr)) {
      p.set_requires_grad(true);
      low.names.push_back(name);
      low.params.push_back(p);
    } else if (matches(name, trainable)) {
      p.set_requires_grad(true);
      main.names.push_back(name);
      main.params.push_back(p);
    } else {
      p.set_requires_grad(false);
    }
  }
  if (main.params.empty() && low.params.empty()) throw Error("trainable_modules matches no parameter of the model");
  return {main, low};
}

UpsamplerUpdater::UpsamplerUpdater(models::LatentUpsampler model, UpsamplerUpdateOptions opts)
    : model_(std::move(model)), opts_(std::move(opts)) {
  if (opts_.gradient_accumulation_steps < 1) throw Error("gradient_accumulation_steps must be >= 1");
  opts_.schedule.base_lr = opts_.learning_rate;
  opts_.schedule.validate();
  model_->train();
  optimizer_ = std::make_unique<AdamW>(
      make_param_groups(*model_, opts_.trainable_modules, opts_.trainable_modules_low_learning_rate), opts_.adam);
  if (opts_.use_ema) ema_ = std::make_unique<Ema>(*model_, opts_.ema);
  if (!opts_.pack_conv_weights || model_->compute_dtype() != torch::kFloat) return;
  for (const auto& item : model_->named_modules()) {
    auto* conv = dynamic_cast<models::ConvNdImpl*>(item.value().get());
    if (!conv || !conv->weight.requires_grad()) continue;
    if (auto layout = models::choose_packed_layout(conv->weight, opts_.winograd_convs))
      packable_.push_back({item.key() + ".weight", conv, std::move(layout)});
  }
  set_packed(true);
}

UpsamplerUpdater::~UpsamplerUpdater() {
  try {
    set_packed(false);
  } catch (const std::exception&) {
    // Only a failed allocation could land here; the weights die with the updater's model then.
  }
}

void UpsamplerUpdater::set_packed(bool on) {
  if (on == packed_ || packable_.empty()) return;
  for (const auto& c : packable_) {
    auto convert = [&](const torch::Tensor& t) {
      if (!t.defined()) return;
      on ? models::pack_(t, *c.layout) : models::unpack_(t, *c.layout);
    };
    convert(c.conv->weight);
    convert(c.conv->weight.grad());
    convert(optimizer_->exp_avg(c.name));
    convert(optimizer_->exp_avg_sq(c.name));
    if (ema_) {
      auto it = ema_->shadow().find(c.name);
      if (it != ema_->shadow().end()) convert(it->second);
    }
    c.conv->packed = on ? c.layout : nullptr;
  }
  packed_ = on;
}

size_t UpsamplerUpdater::winograd_convs() const {
  size_t n = 0;
  for (const auto& c : packable_) n += packed_ && models::layout_is_winograd(*c.layout);
  return n;
}

int64_t UpsamplerUpdater::packing_fingerprint() const {
  if (!packed_) return 0;
  int64_t h = static_cast<int64_t>(packable_.size());
  for (const auto& c : packable_) h = (h * 31 + models::layout_fingerprint(*c.layout)) & ((int64_t{1} << 52) - 1);
  return h;
}

void UpsamplerUpdater::drop_packing() {
  set_packed(false);
  packable_.clear();
}

UpsamplerUpdater::PlainWeights::PlainWeights(UpsamplerUpdater& u) : updater_(u.packed_ ? &u : nullptr) {
  if (updater_) updater_->set_packed(false);
}

UpsamplerUpdater::PlainWeights::~PlainWeights() {
  if (updater_) updater_->set_packed(true);
}

std::vector<torch::Tensor> UpsamplerUpdater::trainable_params() const {
  std::vector<torch::Tensor> out;
  for (const auto& g : optimizer_->groups()) out.insert(out.end(), g.params.begin(), g.params.end());
  return out;
}

double UpsamplerUpdater::micro_step(const torch::Tensor& z_lr, const torch::Tensor& z_hr,
                                    std::optional<UpdateRecord>* record) {
  torch::Tensor pred = model_->forward(z_lr);
  if (pred.sizes() != z_hr.sizes()) {
    std::ostringstream o;
    o << "upsampler output " << pred.sizes() << " does not match the target " << z_hr.sizes();
    throw Error(o.str());
  }
  torch::Tensor loss = torch::mse_loss(pred.to(torch::kFloat), z_hr.to(torch::kFloat));
  return accumulate(loss, record);
}

double UpsamplerUpdater::accumulate(const torch::Tensor& loss, std::optional<UpdateRecord>* record) {
  const int64_t A = opts_.gradient_accumulation_steps;
  const double value = loss.item<double>();
  train_loss_ += static_cast<double>(static_cast<float>(value)) / static_cast<double>(A);
  (loss / static_cast<double>(A)).backward();
  ++micro_;
  if (record) record->reset();
  if (micro_ % A != 0) return value;
  UpdateRecord r = update();
  if (record) *record = r;
  return value;
}

UpdateRecord UpsamplerUpdater::update() {
  UpdateRecord r;
  auto params = trainable_params();
  if (opts_.reduce_gradients) opts_.reduce_gradients(params);
  r.clip = clip_gradients(params, opts_.clip, global_step_);
  if (!std::isfinite(r.clip.grad_norm)) {  // never step on NaN or inf; the step is not counted
    optimizer_->zero_grad();
    r.skipped = true;
    r.global_step = global_step_;
    r.loss = train_loss_;
    train_loss_ = 0;
    return r;
  }
  const double f = opts_.schedule.factor(global_step_);
  r.lr = opts_.learning_rate * f;
  optimizer_->step({opts_.learning_rate * f, opts_.learning_rate / 2.0 * f});
  optimizer_->zero_grad();
  if (ema_) r.ema_decay = ema_->update(*model_);
  ++global_step_;
  r.global_step = global_step_;
  r.loss = train_loss_;
  train_loss_ = 0;
  return r;
}

}  // namespace ws::train
