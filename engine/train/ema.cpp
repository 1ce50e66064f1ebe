// SPDX-License-Identifier: Apache-2.0
#include "train/ema.h"

#include <algorithm>

#include "core/error.h"

namespace ws::train {

Ema::Ema(const torch::nn::Module& module, EmaOptions opts) : opts_(opts) {
  torch::NoGradGuard no_grad;
  for (const auto& kv : module.named_parameters()) shadow_[kv.key()] = kv.value().detach().to(torch::kFloat).clone();
  for (const auto& kv : module.named_buffers()) shadow_[kv.key()] = kv.value().detach().to(torch::kFloat).clone();
}

double Ema::decay_for(int64_t n) const {
  int64_t s = std::max<int64_t>(0, n - opts_.update_after_step - 1);
  if (s <= 0) return 0.0;
  double d = (1.0 + static_cast<double>(s)) / (10.0 + static_cast<double>(s));
  return std::max(opts_.min_decay, std::min(opts_.decay, d));
}

double Ema::update(const torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  ++n_;
  const double d = decay_for(n_);
  const double one_minus = 1.0 - d;
  for (const auto& kv : module.named_parameters()) {
    auto& s = shadow_.at(kv.key());
    const auto& p = kv.value();
    if (p.requires_grad()) s.sub_(one_minus * (s - p.to(s.dtype())));
    else s.copy_(p);
  }
  for (const auto& kv : module.named_buffers()) shadow_.at(kv.key()).copy_(kv.value());
  return d;
}

void Ema::copy_to(torch::nn::Module& module) const {
  torch::NoGradGuard no_grad;
  for (auto& kv : module.named_parameters()) kv.value().copy_(shadow_.at(kv.key()));
  for (auto& kv : module.named_buffers()) kv.value().copy_(shadow_.at(kv.key()));
}

void Ema::load_shadow(const io::StateDict& sd, const std::string& source) {
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : shadow_) {
    auto it = sd.find(name);
    if (it == sd.end()) throw Error(source + ": EMA shadow lacks '" + name + "'");
    if (it->second.sizes() != t.sizes()) throw Error(source + ": EMA shadow '" + name + "' has the wrong shape");
    t.copy_(it->second);
  }
}

}  // namespace ws::train
