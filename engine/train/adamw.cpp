#include "train/adamw.h"

#include <cmath>

#include "core/error.h"

namespace ws::train {

AdamW::AdamW(std::vector<AdamWGroup> groups, AdamWOptions opts) : groups_(std::move(groups)), opts_(opts) {
  for (const auto& g : groups_)
    for (size_t i = 0; i < g.params.size(); ++i) {
      m_[g.names[i]] = torch::zeros_like(g.params[i], torch::MemoryFormat::Preserve);
      v_[g.names[i]] = torch::zeros_like(g.params[i], torch::MemoryFormat::Preserve);
    }
}

void AdamW::step(const std::vector<double>& group_lrs) {
  if (group_lrs.size() != groups_.size()) throw Error("AdamW: one learning rate per parameter group expected");
  torch::NoGradGuard no_grad;
  ++step_;
  // torch computes these in Python doubles.
  const double bc1 = 1.0 - std::pow(opts_.beta1, static_cast<double>(step_));
  const double bc2 = 1.0 - std::pow(opts_.beta2, static_cast<double>(step_));
  const double bc2_sqrt = std::sqrt(bc2);
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const double lr = group_lrs[gi];
    const double step_size = lr / bc1;
    auto& g = groups_[gi];
    for (size_t i = 0; i < g.params.size(); ++i) {
      auto& p = g.params[i];
      const auto& grad = p.grad();
      if (!grad.defined()) continue;
      auto& m = m_[g.names[i]];
      auto& v = v_[g.names[i]];
      p.mul_(1.0 - lr * opts_.weight_decay);
      m.mul_(opts_.beta1).add_(grad, 1.0 - opts_.beta1);
      v.mul_(opts_.beta2).addcmul_(grad, grad, 1.0 - opts_.beta2);
      auto denom = (v.sqrt() / bc2_sqrt).add_(opts_.eps);
      p.addcdiv_(m, denom, -step_size);
    }
  }
}

void AdamW::zero_grad() {
  for (auto& g : groups_)
    for (auto& p : g.params)
      if (p.grad().defined()) p.mutable_grad() = torch::Tensor();
}

io::StateDict AdamW::state_dict() const {
  io::StateDict sd;
  for (const auto& [name, t] : m_) sd[name + ".exp_avg"] = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
  for (const auto& [name, t] : v_) sd[name + ".exp_avg_sq"] = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
  sd["step"] = torch::tensor({step_}, torch::kLong);
  return sd;
}

void AdamW::load_state_dict(const io::StateDict& sd, const std::string& source) {
  auto it = sd.find("step");
  if (it == sd.end()) throw Error(source + ": optimizer state has no 'step'");
  for (auto& [name, m] : m_) {
    for (const char* suffix : {".exp_avg", ".exp_avg_sq"}) {
      auto t = sd.find(name + suffix);
      if (t == sd.end()) throw Error(source + ": optimizer state lacks '" + name + suffix + "'");
      auto& dst = std::string(suffix) == ".exp_avg" ? m : v_[name];
      if (t->second.sizes() != dst.sizes())
        throw Error(source + ": optimizer state '" + name + suffix + "' has shape " + io::shape_str(t->second.sizes().vec()) +
                    ", the parameter has " + io::shape_str(dst.sizes().vec()));
      torch::NoGradGuard no_grad;
      dst.copy_(t->second);
    }
  }
  step_ = it->second.to(torch::kLong).item<int64_t>();
}

void AdamW::to(const torch::Device& device) {
  for (auto* state : {&m_, &v_})
    for (auto& [name, t] : *state) t = t.to(device);
}

torch::Tensor AdamW::exp_avg(const std::string& name) const {
  auto it = m_.find(name);
  return it == m_.end() ? torch::Tensor() : it->second;
}

torch::Tensor AdamW::exp_avg_sq(const std::string& name) const {
  auto it = v_.find(name);
  return it == v_.end() ? torch::Tensor() : it->second;
}

}  // namespace ws::train
