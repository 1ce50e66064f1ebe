// SPDX-License-Identifier: Apache-2.0
#include "train/experts/expert_routing.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.h"
#include "data/random_streams.h"

namespace ws::train {

int64_t RoutingOptions::boundary() const {
  validate();
  return static_cast<int64_t>(std::nearbyint(boundary_ratio * kTrainTimesteps));  // Python round: halves to even
}

void RoutingOptions::validate() const {
  if (!(boundary_ratio > 0 && boundary_ratio < 1))
    throw Error("boundary_ratio must lie in (0, 1), got " + std::to_string(boundary_ratio));
  const auto b = static_cast<int64_t>(std::nearbyint(boundary_ratio * kTrainTimesteps));
  if (b <= 0 || b >= kTrainTimesteps)
    throw Error("boundary_ratio " + std::to_string(boundary_ratio) + " gives boundary " + std::to_string(b) +
                ", outside 1..999");
  if (mode != "uniform" && mode != "shift_consistent")
    throw Error("routing_mode must be uniform or shift_consistent, got '" + mode + "'");
  if (mode == "shift_consistent" && !(shift > 0)) throw Error("shift must be positive");
}

double RoutingOptions::p_high() const {
  if (mode == "uniform") return 1.0 - boundary_ratio;
  return 1.0 - unshift_sigma(static_cast<double>(boundary()) / kTrainTimesteps, shift);
}

float sigma_from_t(double t) { return static_cast<float>(kSigmaMin + (1.0 - kSigmaMin) * t / kTrainTimesteps); }

double shift_sigma(double sigma, double s) { return s * sigma / (1.0 + (s - 1.0) * sigma); }
double unshift_sigma(double sigma_s, double s) { return sigma_s / (s - (s - 1.0) * sigma_s); }

double bsmntw_weight(double t) {
  auto w = [](double x) { return std::exp(-2.0 * ((x - 500.0) / 1000.0) * ((x - 500.0) / 1000.0)); };
  static const std::pair<double, double> min_sum = [&] {
    double mn = w(0), sum = 0;
    for (int i = 0; i < kTrainTimesteps; ++i) mn = std::min(mn, w(i));
    for (int i = 0; i < kTrainTimesteps; ++i) sum += w(i) - mn;
    return std::make_pair(mn, sum);
  }();
  return (w(t) - min_sum.first) * kTrainTimesteps / min_sum.second;
}

bool draw_route(const RoutingOptions& o, uint64_t seed, int64_t global_step) {
  data::Rng r = data::Rng::keyed(seed, "route", global_step);
  const double u = r.uniform();                          // [0, 1)
  if (o.mode == "uniform") return u > o.boundary_ratio;  // strict, as the requirement writes it
  // Mode B: u is the unshifted time; the shifted t = 1000·shift(u) routes on t ≥ boundary, i.e.
  // u ≥ u_boundary (shift is increasing).
  return u >= 1.0 - o.p_high();
}

StepDraw draw_step(const RoutingOptions& o, uint64_t seed, int64_t global_step, int64_t micro, int rank,
                   int64_t batch) {
  StepDraw d;
  d.high = draw_route(o, seed, global_step);
  const int64_t b = o.boundary();
  data::Rng r = data::Rng::keyed(seed, "timestep", global_step, micro, rank);
  for (int64_t i = 0; i < batch; ++i) {
    double t;
    if (o.mode == "uniform") {
      // Exclusive upper bounds: high [b, 1000), low [0, b); uniform_int is inclusive and unbiased.
      t = static_cast<double>(d.high ? r.uniform_int(b, kTrainTimesteps - 1) : r.uniform_int(0, b - 1));
    } else {
      const double ub = 1.0 - o.p_high();
      const double u = d.high ? r.uniform(ub, 1.0) : r.uniform(0.0, ub);
      t = kTrainTimesteps * shift_sigma(u, o.shift);
      // Guard the boundary against rounding in shift(unshift(b)).
      const double bd = static_cast<double>(b);
      if (d.high && t < bd) t = bd;
      if (!d.high && t >= bd) t = std::nextafter(bd, 0.0);
    }
    d.t.push_back(t);
    d.sigma.push_back(sigma_from_t(t));
  }
  return d;
}

std::vector<torch::Tensor> draw_noise(uint64_t seed, int64_t global_step, int64_t micro, int rank, int64_t batch,
                                      const std::vector<int64_t>& shape) {
  data::Rng r = data::Rng::keyed(seed, "noise", global_step, micro, rank);
  auto gen = at::detail::createCPUGenerator(r.derive_seed());
  std::vector<torch::Tensor> out;
  for (int64_t i = 0; i < batch; ++i)
    out.push_back(torch::randn(shape, gen, torch::TensorOptions().dtype(torch::kFloat)));
  return out;
}

bool routes_high(double t, int64_t boundary) { return t >= static_cast<double>(boundary); }

namespace {
// Partition by the mask, run each expert on its subset (high first), scatter back in order.
template <typename Forward>
std::vector<torch::Tensor> route_each(models::WanModel& high, models::WanModel& low, int64_t boundary,
                                      const std::vector<double>& t, Forward forward,
                                      const std::function<void(bool)>& activate = {}) {
  std::vector<size_t> hi, lo;
  for (size_t i = 0; i < t.size(); ++i) (routes_high(t[i], boundary) ? hi : lo).push_back(i);
  std::vector<torch::Tensor> out(t.size());
  for (auto* part : {&hi, &lo}) {
    models::WanModel& m = part == &hi ? high : low;
    if (activate && !part->empty()) activate(part == &hi);
    for (size_t i : *part) out[i] = forward(m, i);
  }
  return out;
}
}  // namespace

std::vector<torch::Tensor> routed_predict(models::WanModel& high, models::WanModel& low, int64_t boundary,
                                          const std::vector<torch::Tensor>& x_t, const std::vector<double>& t,
                                          const std::vector<torch::Tensor>& context) {
  if (x_t.size() != t.size() || x_t.size() != context.size())
    throw Error("routed_predict: x_t, t and context must have one entry per sample");
  return route_each(high, low, boundary, t, [&](models::WanModel& m, size_t i) {
    return m->forward(x_t[i], torch::tensor({static_cast<float>(t[i])}), context[i].to(torch::kFloat));
  });
}

std::vector<torch::Tensor> routed_predict(models::WanModel& high, models::WanModel& low, int64_t boundary,
                                          const std::vector<ExpertStepInput>& samples,
                                          const std::function<void(bool high)>& activate) {
  std::vector<double> t;
  for (const auto& s : samples) t.push_back(s.t);
  return route_each(
      high, low, boundary, t,
      [&](models::WanModel& m, size_t i) {
        const ExpertStepInput s = on_device(samples[i], m->device());
        const ExpertModelInput mi = expert_model_input(s);
        return m->forward(mi.x_t, mi.t, s.context.to(torch::kFloat), s.seq_len, s.y);
      },
      activate);
}

}  // namespace ws::train
