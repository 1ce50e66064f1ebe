// SPDX-License-Identifier: Apache-2.0
#include "train/grad_clip.h"

#include <algorithm>

namespace ws::train {

torch::Tensor max_abs_value(const torch::Tensor& g) {
  auto [lo, hi] = torch::aminmax(g.detach());
  return torch::maximum(hi, -lo).to(torch::kDouble);
}

double linear_decay(double m0, double m1, double S, double s) {
  if (s >= S) return m1;
  return m0 + (m1 - m0) / S * s;
}

namespace {

ClipResult clip_with(const std::vector<torch::Tensor>& grads, const torch::Tensor& total, const ClipOptions& opts,
                     int64_t global_step) {
  ClipResult r;
  r.grad_norm = total.item<double>();
  if (!(opts.max_grad_norm > 0)) return r;

  const double m1 = opts.max_grad_norm;
  const double m = linear_decay(m1 * opts.initial_grad_norm_ratio, m1, opts.abnormal_norm_clip_start,
                                static_cast<double>(global_step));
  r.threshold = m;
  torch::Tensor ratio = total / m;
  double ratio_d = ratio.item<double>();
  if (ratio_d > 5.0 && static_cast<double>(global_step) > opts.abnormal_norm_clip_start) {
    r.abnormal = true;
    // The reference evaluates `m / min(g/m, 10)`: a tensor reciprocal times m when g/m ≤ 10.
    if (ratio_d > 10.0) r.max_norm = m / 10.0;
    else r.max_norm = (ratio.reciprocal() * m).item<double>();
  } else {
    r.max_norm = m;
  }
  // `max_norm / (total + 1e-6)` in Python is (total + 1e-6).reciprocal() * max_norm, clamped to 1.
  torch::Tensor coef = torch::clamp_max((total + 1e-6).reciprocal() * r.max_norm, 1.0);
  r.coef = coef.item<double>();
  for (auto g : grads) g.mul_(coef.to(g.device(), g.dtype()));
  return r;
}

std::vector<torch::Tensor> grads_of(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

}  // namespace

ClipResult clip_gradients(const std::vector<torch::Tensor>& params, const ClipOptions& opts, int64_t global_step) {
  torch::NoGradGuard no_grad;
  const std::vector<torch::Tensor> grads = grads_of(params);
  if (grads.empty()) return {};
  // torch.nn.utils.clip_grad_norm_: the norm of the per-tensor norms, in fp32.
  std::vector<torch::Tensor> norms;
  norms.reserve(grads.size());
  // Gradients of swapped blocks are in host memory: the norms meet on the first one's device.
  for (const auto& g : grads) norms.push_back(torch::norm(g.detach().to(torch::kFloat), 2).to(grads[0].device()));
  return clip_with(grads, torch::norm(torch::stack(norms), 2), opts, global_step);
}

ClipResult clip_gradients_to_norm(const std::vector<torch::Tensor>& params, double total_norm, const ClipOptions& opts,
                                  int64_t global_step) {
  torch::NoGradGuard no_grad;
  return clip_with(grads_of(params), torch::tensor(static_cast<float>(total_norm)), opts, global_step);
}

}  // namespace ws::train
