// SPDX-License-Identifier: Apache-2.0
#include "train/zero_shard.h"

#include "train/grad_clip.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ws::train {

std::vector<int> zero_owners(const std::vector<torch::Tensor>& params, int world) {
  std::vector<size_t> order(params.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return params[a].numel() > params[b].numel(); });
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
    : dp_(dp),
      names_(std::move(names)),
      params_(std::move(params)),
      masters_(params_.size()),
      mastered_(params_.size(), false),
      owners_(zero_owners(params_, dp.world())) {}

void ZeroShard::set_masters(std::vector<torch::Tensor> masters, std::vector<bool> mastered) {
  masters_ = std::move(masters);
  mastered_ = std::move(mastered);
}

std::vector<torch::Tensor> ZeroShard::owned_targets() const {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < params_.size(); ++i)
    if (owns(i)) out.push_back(target(i));
  return out;
}

int64_t ZeroShard::owned_elements() const {
  int64_t n = 0;
  for (size_t i = 0; i < params_.size(); ++i)
    if (owns(i)) n += params_[i].numel();
  return n;
}

int64_t ZeroShard::total_elements() const {
  int64_t n = 0;
  for (const auto& p : params_) n += p.numel();
  return n;
}

void ZeroShard::reduce_gradients() {
  torch::NoGradGuard ng;
  // Every rank has a gradient for every tensor (same model, same route); one missing on all
  // ranks (an unused tensor) gets zeros so the collectives line up.
  std::vector<torch::Tensor> plain, mastered, into;
  std::vector<int> plain_owner, mastered_owner;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    if (mastered_[i]) {
      mastered.push_back(p.grad());
      mastered_owner.push_back(owners_[i]);
      torch::Tensor dst;
      if (owns(i)) {
        auto& g = masters_[i].mutable_grad();
        if (!g.defined()) g = torch::zeros_like(masters_[i]);
        dst = g;
      }
      into.push_back(dst);
    } else {
      plain.push_back(p.grad());
      plain_owner.push_back(owners_[i]);
    }
  }
  // A plain owner's gradient becomes the running sum, which its next backward adds to.
  if (!plain.empty()) dp_.reduce_to_owners(plain, plain_owner);
  if (!mastered.empty()) dp_.reduce_to_owners_into(mastered, mastered_owner, into);
  for (size_t i = 0; i < params_.size(); ++i)
    if (mastered_[i] || !owns(i)) params_[i].mutable_grad() = torch::Tensor();  // stage 2: only the owner keeps it
}

ZeroShard::Norms ZeroShard::finish_gradients() {
  torch::NoGradGuard ng;
  torch::Tensor sq, mx;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!owns(i)) continue;
    const auto& g = target(i).grad();
    if (!g.defined()) continue;
    g.div_(static_cast<double>(dp_.world()));
    auto s = g.to(torch::kDouble).pow(2).sum();
    auto m = max_abs_value(g);
    sq = sq.defined() ? sq + s : s;
    mx = mx.defined() ? torch::maximum(mx, m) : m;
  }
  Norms n;
  n.l2 = std::sqrt(dp_.sum(sq.defined() ? sq.item<double>() : 0.0));
  n.max_abs = dp_.max(mx.defined() ? mx.item<double>() : 0.0);
  return n;
}

void ZeroShard::broadcast_weights() { dp_.broadcast_from_owners(params_, owners_); }

void ZeroShard::gather_to_root(const AdamW& optimizer, io::StateDict& optimizer_state, io::StateDict& masters) const {
  const bool root = dp_.rank() == 0;
  std::vector<torch::Tensor> tensors;
  std::vector<int> owners;
  auto add = [&](size_t i, torch::Tensor local) {
    if (root && !owns(i)) local = torch::empty(params_[i].sizes(), torch::kFloat);  // received into
    tensors.push_back(local.defined() ? local.to(torch::kCPU, torch::kFloat).contiguous() : local);
    owners.push_back(owners_[i]);
  };
  for (size_t i = 0; i < params_.size(); ++i) {
    add(i, owns(i) ? optimizer.exp_avg(names_[i]) : torch::Tensor());
    add(i, owns(i) ? optimizer.exp_avg_sq(names_[i]) : torch::Tensor());
    if (mastered_[i]) add(i, owns(i) ? masters_[i].detach() : torch::Tensor());
  }
  dp_.gather_to_root(tensors, owners);
  optimizer_state.clear();
  masters.clear();
  if (!root) return;
  size_t k = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    optimizer_state[names_[i] + ".exp_avg"] = tensors[k++];
    optimizer_state[names_[i] + ".exp_avg_sq"] = tensors[k++];
    if (mastered_[i]) masters[names_[i]] = tensors[k++];
  }
  optimizer_state["step"] = torch::tensor({optimizer.step_count()}, torch::kLong);
}

}  // namespace ws::train
