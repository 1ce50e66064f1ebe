// SPDX-License-Identifier: Apache-2.0
#include "train/flow_noise.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"

namespace ws::train {

std::vector<float> flow_sigma_pool(int64_t K, double shift, int64_t T) {
  if (K < 1) throw Error("noise_num_inference_steps must be at least 1");
  // diffusers' constructor works in float32: σ_train(j) = shift·u / (1 + (shift − 1)·u), u = j / T.
  auto shifted32 = [&](float u) {
    const float s = static_cast<float>(shift);
    return s * u / (1.0f + (s - 1.0f) * u);
  };
  const float sigma_max = shifted32(static_cast<float>(T) / static_cast<float>(T));
  const float sigma_min = shifted32(1.0f / static_cast<float>(T));
  // set_timesteps: numpy linspace over t = σ·T in float64, then the shift again, then float32.
  const double t0 = static_cast<double>(sigma_max) * static_cast<double>(T);
  const double t1 = static_cast<double>(sigma_min) * static_cast<double>(T);
  std::vector<float> pool;
  pool.reserve(static_cast<size_t>(K));
  for (int64_t i = 0; i < K; ++i) {
    const double t = K == 1 ? t0 : t0 + (t1 - t0) * static_cast<double>(i) / static_cast<double>(K - 1);
    const double u = t / static_cast<double>(T);
    pool.push_back(static_cast<float>(shift * u / (1.0 + (shift - 1.0) * u)));
  }
  return pool;
}

NoiseOptions make_noise_options(bool enabled, const std::string& mode, int64_t steps, double shift,
                                const std::optional<std::pair<int64_t, int64_t>>& step_range, double sigma_min,
                                double sigma_max) {
  NoiseOptions o;
  o.enabled = enabled;
  o.mode = mode;
  o.sigma_min = sigma_min;
  o.sigma_max = sigma_max;
  if (mode != "scheduler" && mode != "uniform")
    throw Error("noise_sample_mode must be scheduler or uniform, got '" + mode + "'");
  if (mode == "uniform") {
    if (!(sigma_min >= 0 && sigma_max <= 1 && sigma_min <= sigma_max))
      throw Error("noise_sigma_min / noise_sigma_max must satisfy 0 ≤ min ≤ max ≤ 1");
    return o;
  }
  if (shift <= 0) throw Error("noise_shift must be positive");
  auto pool = flow_sigma_pool(steps, shift);
  if (step_range) {
    auto [a, b] = *step_range;
    if (a < 0 || a >= b || b > steps)
      throw Error("noise_step_range [" + std::to_string(a) + ", " + std::to_string(b) +
                  ") must satisfy 0 ≤ a < b ≤ noise_num_inference_steps (" + std::to_string(steps) + ")");
    pool = std::vector<float>(pool.begin() + a, pool.begin() + b);
  }
  o.pool = std::move(pool);
  return o;
}

std::vector<float> add_flow_noise(torch::Tensor& z_hr, torch::Tensor& z_lr, const NoiseOptions& opt, data::Rng& rng) {
  const int64_t B = z_hr.size(0);
  std::vector<float> sigma;
  for (int64_t b = 0; b < B; ++b) {
    if (opt.mode == "uniform")
      sigma.push_back(static_cast<float>(opt.sigma_min + (opt.sigma_max - opt.sigma_min) * rng.uniform()));
    else sigma.push_back(opt.pool[static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(opt.pool.size()) - 1))]);
  }
  auto gen = at::detail::createCPUGenerator(rng.derive_seed());
  torch::Tensor eps_hr = torch::randn(z_hr.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat));
  torch::Tensor eps_lr = torch::randn(z_lr.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat));
  torch::Tensor s = torch::tensor(sigma, torch::kFloat).view({B, 1, 1, 1, 1});
  z_hr = ((1 - s) * z_hr.to(torch::kFloat).cpu() + s * eps_hr).to(z_hr.device());
  z_lr = ((1 - s) * z_lr.to(torch::kFloat).cpu() + s * eps_lr).to(z_lr.device());
  return sigma;
}

}  // namespace ws::train
