#include "train/zero_shard.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ws::train {

std::vector<int> zero_owners(const std::vector<torch::Tensor>& params, int world) {
  std::vector<size_t> order(params.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return params[a].numel() > params[b].numel(); });
  std::vector<int64_t> load(static_cast<size_t>(std::max(1, world)), 0);
  std::vector<int> owner(params.size(), 0);
  for (size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[i] = static_cast<int>(least);
    load[static_cast<size_t>(least)] += params[i].numel();
  }
  return owner;
}

ZeroShard::ZeroShard(parallel::DataParallel& dp, std::vector<std::string> names, std::vector<torch::Tensor> params)
    : dp_(dp), names_(std::move(names)), params_(std::move(params)), owners_(zero_owners(params_, dp.world())) {}

AdamWGroup ZeroShard::owned_group() const {
  AdamWGroup g;
  for (size_t i = 0; i < params_.size(); ++i)
    if (owners_[i] == dp_.rank()) {
      g.names.push_back(names_[i]);
      g.params.push_back(params_[i]);
    }
  return g;
}

std::vector<torch::Tensor> ZeroShard::owned_params() const { return owned_group().params; }

int64_t ZeroShard::owned_elements() const {
  int64_t n = 0;
  for (size_t i = 0; i < params_.size(); ++i)
    if (owners_[i] == dp_.rank()) n += params_[i].numel();
  return n;
}

int64_t ZeroShard::total_elements() const {
  int64_t n = 0;
  for (const auto& p : params_) n += p.numel();
  return n;
}

double ZeroShard::reduce_gradients() {
  torch::NoGradGuard ng;
  // Every rank has a gradient for every tensor (same model, same route); one missing on all
  // ranks (an unused tensor) gets zeros so the collectives line up.
  std::vector<torch::Tensor> grads;
  for (auto& p : params_) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  dp_.reduce_to_owners(grads, owners_);
  double sq = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (owners_[i] != dp_.rank()) {
      params_[i].mutable_grad() = torch::Tensor();  // stage 2: only the owner keeps it
      continue;
    }
    auto& g = params_[i].mutable_grad();
    g.div_(static_cast<double>(dp_.world()));
    sq += g.to(torch::kDouble).pow(2).sum().item<double>();
  }
  return std::sqrt(dp_.sum(sq));
}

double ZeroShard::max_abs_gradient() {
  double m = 0;
  for (size_t i = 0; i < params_.size(); ++i)
    if (owners_[i] == dp_.rank() && params_[i].grad().defined())
      m = std::max(m, params_[i].grad().abs().max().item<double>());
  return dp_.max(m);
}

void ZeroShard::gather_weights() { dp_.broadcast_from_owners(params_, owners_); }

io::StateDict ZeroShard::gather_optimizer_state(const AdamW& optimizer) {
  io::StateDict sd;
  std::vector<torch::Tensor> moments;
  std::vector<int> owners;
  for (size_t i = 0; i < params_.size(); ++i)
    for (bool second : {false, true}) {
      torch::Tensor t = second ? optimizer.exp_avg_sq(names_[i]) : optimizer.exp_avg(names_[i]);
      if (!t.defined()) t = torch::zeros_like(params_[i], torch::kFloat);  // another rank's
      t = t.to(torch::kCPU, torch::kFloat).contiguous().clone();
      sd[names_[i] + (second ? ".exp_avg_sq" : ".exp_avg")] = t;
      moments.push_back(t);
      owners.push_back(owners_[i]);
    }
  dp_.broadcast_from_owners(moments, owners);
  sd["step"] = torch::tensor({optimizer.step_count()}, torch::kLong);
  return sd;
}

}  // namespace ws::train
