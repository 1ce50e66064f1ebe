// SPDX-License-Identifier: Apache-2.0
#include "train/adamw.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "models/cpu_parallel.h"
#include "train/adamw_kernel.h"

namespace ws::train {

AdamW::AdamW(std::vector<AdamWGroup> groups, AdamWOptions opts) : groups_(std::move(groups)), opts_(opts) {
  for (const auto& g : groups_)
    for (size_t i = 0; i < g.params.size(); ++i) {
      m_[g.names[i]] = torch::zeros_like(g.params[i], torch::MemoryFormat::Preserve);
      v_[g.names[i]] = torch::zeros_like(g.params[i], torch::MemoryFormat::Preserve);
    }
}

namespace {

// One parameter's update, in place but for the denominator (as large as `v`).
void update(const torch::Tensor& p, const torch::Tensor& grad, const torch::Tensor& m, const torch::Tensor& v,
            const AdamWOptions& o, double lr, double step_size, double bc2_sqrt) {
  p.mul_(1.0 - lr * o.weight_decay);
  m.mul_(o.beta1).add_(grad, 1.0 - o.beta1);
  v.mul_(o.beta2).addcmul_(grad, grad, 1.0 - o.beta2);
  auto denom = v.sqrt().div_(bc2_sqrt).add_(o.eps);
  p.addcdiv_(m, denom, -step_size);
}

// Elements per slice of an update: no parameter-sized denominator (the released upsampler's 81 MB
// kernel would add two at the optimizer's peak), and on the CPU a slice of p, grad, m, v and the
// denominator stays in the caches through all the update's operations.
int64_t slice_elements(const torch::Tensor& p) { return p.is_cuda() ? int64_t{1} << 24 : int64_t{1} << 17; }

// The one-pass kernel's share of work: 64k elements (1 MB of p, grad, m and v together) a slice.
constexpr int64_t kFusedSlice = int64_t{1} << 16;

struct FusedSlice {
  float* p;
  const float* g;
  float* m;
  float* v;
  int64_t n;
  AdamWScalars s;
};

bool one_pass(const torch::Tensor& p, const torch::Tensor& grad, const torch::Tensor& m, const torch::Tensor& v) {
  for (const auto* t : {&p, &grad, &m, &v})
    if (!t->device().is_cpu() || t->scalar_type() != torch::kFloat) return false;
  return true;
}

}  // namespace

void AdamW::step(const std::vector<double>& group_lrs) {
  if (group_lrs.size() != groups_.size()) throw Error("AdamW: one learning rate per parameter group expected");
  torch::NoGradGuard no_grad;
  ++step_;
  // torch computes these in Python doubles.
  const double bc1 = 1.0 - std::pow(opts_.beta1, static_cast<double>(step_));
  const double bc2 = 1.0 - std::pow(opts_.beta2, static_cast<double>(step_));
  const double bc2_sqrt = std::sqrt(bc2);
  // fp32 CPU tensors take the one-pass kernel, in slices shared among the threads; the rest (GPU,
  // other dtypes, strided views) the ops.
  std::vector<FusedSlice> fused;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const double lr = group_lrs[gi];
    const double step_size = lr / bc1;
    const AdamWScalars scalars{static_cast<float>(1.0 - lr * opts_.weight_decay),
                               static_cast<float>(opts_.beta1),
                               static_cast<float>(1.0 - opts_.beta1),
                               static_cast<float>(opts_.beta2),
                               static_cast<float>(1.0 - opts_.beta2),
                               static_cast<float>(bc2_sqrt),
                               static_cast<float>(opts_.eps),
                               static_cast<float>(-step_size)};
    auto& g = groups_[gi];
    for (size_t i = 0; i < g.params.size(); ++i) {
      const torch::Tensor p = g.params[i].detach();
      const torch::Tensor grad = g.params[i].grad();
      if (!grad.defined()) continue;
      const torch::Tensor& m = m_[g.names[i]];
      const torch::Tensor& v = v_[g.names[i]];
      const int64_t N = p.numel(), n = slice_elements(p);
      const bool flat = p.is_contiguous() && grad.is_contiguous() && m.is_contiguous() && v.is_contiguous() &&
                        grad.numel() == N && m.numel() == N && v.numel() == N;
      if (flat && one_pass(p, grad, m, v)) {
        for (int64_t at = 0; at < N; at += kFusedSlice)
          fused.push_back({p.data_ptr<float>() + at, grad.data_ptr<float>() + at, m.data_ptr<float>() + at,
                           v.data_ptr<float>() + at, std::min(kFusedSlice, N - at), scalars});
        continue;
      }
      if (!flat || N <= n) {
        update(p, grad, m, v, opts_, lr, step_size, bc2_sqrt);
        continue;
      }
      // Every operation is elementwise: the slices make the whole update.
      const auto pf = p.view(-1), gf = grad.view(-1), mf = m.view(-1), vf = v.view(-1);
      for (int64_t at = 0; at < N; at += n) {
        const int64_t len = std::min(n, N - at);
        update(pf.narrow(0, at, len), gf.narrow(0, at, len), mf.narrow(0, at, len), vf.narrow(0, at, len), opts_, lr,
               step_size, bc2_sqrt);
      }
    }
  }
  models::cpu_parallel_for(static_cast<int64_t>(fused.size()), [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      const auto& f = fused[static_cast<size_t>(j)];
      adamw_update(f.p, f.g, f.m, f.v, f.n, f.s);
    }
  });
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
        throw Error(source + ": optimizer state '" + name + suffix + "' has shape " +
                    io::shape_str(t->second.sizes().vec()) + ", the parameter has " + io::shape_str(dst.sizes().vec()));
      torch::NoGradGuard no_grad;
      dst.copy_(t->second);
    }
  }
  step_ = it->second.to(torch::kLong).item<int64_t>();
}

void AdamW::to(const torch::Device& device, bool follow_parameters) {
  std::map<std::string, torch::Device> where;
  if (follow_parameters)
    for (const auto& g : groups_)
      for (size_t i = 0; i < g.params.size(); ++i) where.emplace(g.names[i], g.params[i].device());
  for (auto* state : {&m_, &v_})
    for (auto& [name, t] : *state) {
      auto it = where.find(name);
      t = t.to(it == where.end() ? device : it->second);
    }
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
