// SPDX-License-Identifier: Apache-2.0
// Joint timestep routing of the dual-expert trainer (docs/design/dual-expert-training.md §1–§2, §6): the
// boundary, one high/low decision per optimizer step, the per-sample timesteps of the routed
// expert's range, σ from t, and per-sample routing for eval. Every draw comes from a keyed
// stream (data/random_streams.h), so resume needs no generator state.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/wan_dit.h"
#include "train/experts/expert_step.h"

namespace ws::train {

// MaxDiffusion's σ_min = 0.003/1.002 (docs/design/dual-expert-training.md §1); recorded in state.json.
constexpr double kSigmaMin = 0.003 / 1.002;
constexpr int64_t kTrainTimesteps = 1000;

struct RoutingOptions {
  double boundary_ratio = 0.875;
  std::string mode = "uniform";  // "uniform" (Mode A) | "shift_consistent" (Mode B)
  double shift = 12.0;           // Mode B only

  // round(ratio·1000) with halves to even; ws::Error unless 0 < ratio < 1 and 0 < boundary < 1000.
  int64_t boundary() const;
  // P(high): 1 − ratio (Mode A), 1 − u_boundary (Mode B).
  double p_high() const;
  void validate() const;  // ws::Error naming the option
};

// σ = σ_min + (1 − σ_min)·t/1000 in double, rounded to fp32 once.
float sigma_from_t(double t);
// SD3 shift σ_s = s·σ/(1 + (s − 1)·σ) and its inverse.
double shift_sigma(double sigma, double s);
double unshift_sigma(double sigma_s, double s);

// bsmntw timestep weight, the batch-independent table version (docs/design/dual-expert-training.md §3): w(t) =
// exp(−2((t − 500)/1000)²), then (w − min w)·1000 / Σ(w − min w) with min and sum over t = 0..999.
double bsmntw_weight(double t);

struct StepDraw {
  bool high = false;
  std::vector<double> t;     // per sample, 0–1000 scale (integers in Mode A)
  std::vector<float> sigma;  // per sample
};

// The route of optimizer step `global_step` (stream "route", keyed by seed and step only, so every
// rank and micro-step agrees).
bool draw_route(const RoutingOptions& o, uint64_t seed, int64_t global_step);
// Route plus `batch` timesteps of that expert's range (stream "timestep", keyed by step, micro, rank).
StepDraw draw_step(const RoutingOptions& o, uint64_t seed, int64_t global_step, int64_t micro, int rank, int64_t batch);
// ε for one micro-batch: `batch` tensors of `shape` (stream "noise", keyed by step, micro, rank).
std::vector<torch::Tensor> draw_noise(uint64_t seed, int64_t global_step, int64_t micro, int rank, int64_t batch,
                                      const std::vector<int64_t>& shape);

// Eval (docs/design/dual-expert-training.md §6): sample i goes to high when t_i ≥ boundary. The batch is partitioned by
// that mask, each expert runs on its subset and the outputs are scattered back in order.
bool routes_high(double t, int64_t boundary);
std::vector<torch::Tensor> routed_predict(models::WanModel& high, models::WanModel& low, int64_t boundary,
                                          const std::vector<torch::Tensor>& x_t, const std::vector<double>& t,
                                          const std::vector<torch::Tensor>& context);
// The same for whole samples: each one's model input (expert_model_input: i2v y, ti2v's clean
// first frame) goes to the expert its t selects.
// `activate(high)` runs before an expert takes its subset (the trainer brings it to the GPU).
std::vector<torch::Tensor> routed_predict(models::WanModel& high, models::WanModel& low, int64_t boundary,
                                          const std::vector<ExpertStepInput>& samples,
                                          const std::function<void(bool high)>& activate = {});

}  // namespace ws::train
