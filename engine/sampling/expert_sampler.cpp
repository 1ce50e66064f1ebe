// SPDX-License-Identifier: Apache-2.0
#include "sampling/expert_sampler.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"
#include "models/dit_conditioning.h"
#include "sampling/flow_solvers.h"

namespace ws::sampling {

ExpertChoice choose_expert(const SamplerOptions& o, bool two_experts, int64_t t) {
  if (!two_experts || !o.boundary) return {false, o.guide_low, "model"};
  // The integer timestep against boundary·1000 in double (0.875 → 875.0).
  if (static_cast<double>(t) >= *o.boundary * 1000.0) return {true, o.guide_high, "high"};
  return {false, o.guide_low, "low"};
}

torch::Tensor seeded_noise(const std::vector<int64_t>& shape, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat));
}

torch::Tensor sample_latents(SamplerModels& models, const SamplerInputs& in, const SamplerOptions& o,
                             const std::function<void(const SamplerStep&)>& on_step,
                             const std::function<bool()>& cancel) {
  if (!models.low) throw Error("sampling needs a model");
  if (!in.noise.defined() || in.noise.dim() != 4) throw Error("sampling: noise must be [C, F, H, W]");
  const bool two = static_cast<bool>(models.high);
  if (two && !o.boundary) throw Error("sampling with two experts needs a boundary");
  torch::NoGradGuard no_grad;
  const FlowSchedule schedule = flow_schedule(o.solver, o.steps, o.shift);
  auto solver = make_solver(o.solver, schedule.sigmas);
  const int64_t F = in.noise.size(1), H = in.noise.size(2), W = in.noise.size(3);
  const bool ti2v = in.first_frame.defined();
  // The latent and the solver live where the first step's model is (fp32). With low_vram the
  // experts take turns on the GPU, so each call's inputs go to the model's own device.
  const auto device_of = [](models::WanModel& m) { return m->parameters().front().device(); };
  const bool first_high = choose_expert(o, two, schedule.timesteps.front()).high;
  if (models.activate) models.activate(first_high);
  const auto dev = device_of(first_high ? models.high : models.low);
  torch::Tensor x = in.noise.to(dev, torch::kFloat);
  const torch::Tensor first = ti2v ? in.first_frame.to(dev, torch::kFloat) : torch::Tensor();
  const torch::Tensor y = in.y.defined() ? in.y.to(dev, torch::kFloat) : torch::Tensor();
  const torch::Tensor ctx = in.context.to(dev), ctx_null = in.context_null.to(dev);
  if (ti2v) x = models::with_clean_first_frame(x, first);
  // The prompt's and the negative prompt's text side, per expert, made at its first step and kept
  // while it runs (the context does not change between steps); dropped when the other expert takes
  // over, so at most one expert's pair is held.
  std::pair<models::WanTextCache, models::WanTextCache> text;
  const models::WanModelImpl* text_of = nullptr;
  for (int64_t i = 0; i < o.steps; ++i) {
    if (cancel && cancel()) return {};
    const int64_t t = schedule.timesteps[static_cast<size_t>(i)];
    const ExpertChoice e = choose_expert(o, two, t);
    models::WanModel& model = e.high ? models.high : models.low;
    if (models.activate) models.activate(e.high);
    // ti2v: the image frame's tokens are clean (t = 0); the others share t.
    const auto mdev = device_of(model);
    auto on = [&](const torch::Tensor& v) { return v.defined() ? v.to(mdev) : v; };
    const torch::Tensor tt = (ti2v ? models::first_frame_token_timesteps(static_cast<double>(t), F, H, W)
                                   : torch::full({1}, static_cast<float>(t)))
                                 .to(mdev);
    const torch::Tensor xm = on(x), ym = on(y);
    torch::Tensor vc, vu;
    if (o.cache_text) {
      if (text_of != model.get() || text.first.text.device() != mdev) {
        text = {};  // the other expert's pair goes before this one's is made
        text = {model->encode_text(on(ctx)), model->encode_text(on(ctx_null))};
        text_of = model.get();
      }
      vc = model->forward(xm, tt, text.first, 0, ym).to(dev, torch::kFloat);
      vu = model->forward(xm, tt, text.second, 0, ym).to(dev, torch::kFloat);
    } else {
      vc = model->forward(xm, tt, on(ctx), 0, ym).to(dev, torch::kFloat);
      vu = model->forward(xm, tt, on(ctx_null), 0, ym).to(dev, torch::kFloat);
    }
    const torch::Tensor v = vu + e.guide * (vc - vu);
    x = solver->step(i, v, x);
    if (ti2v) x = models::with_clean_first_frame(x, first);
    if (on_step) on_step({i, t, e.name, e.guide, x, v});
  }
  return x;
}

}  // namespace ws::sampling
