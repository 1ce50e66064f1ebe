// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_report.h"

namespace ws::train {

using json = nlohmann::json;

void add_batch_fields(json& x, const data::Batch& batch) {
  json clips = json::array();
  for (const auto& c : batch.clips)
    clips.push_back({{"row", c.meta_index}, {"file", c.file}, {"start", c.frames.empty() ? 0 : c.frames.front()}});
  x["epoch"] = batch.plan.epoch;
  x["size"] = batch.latents.defined() ? json(nullptr) : json{batch.size.H, batch.size.W};
  x["frames"] = batch.x_hr.defined() ? batch.x_hr.size(2) : 4 * (batch.latents.size(2) - 1) + 1;
  x["clips"] = clips;
  if (batch.latents.defined()) x["latent_size"] = batch.latents.sizes().slice(2).vec();  // F, h, w of the files
}

void log_expert_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate& rate, int64_t global_step) {
  const std::string p = r.expert + "/";
  tb.add_scalars({{p + "loss", static_cast<float>(r.loss)},
                  {p + "lr", static_cast<float>(r.lr)},
                  {p + "grad_norm", static_cast<float>(r.grad_norm)},
                  {p + "max_abs_grad", static_cast<float>(r.extra.at("max_abs_grad").get<double>())}},
                 r.expert_step);
  tb.add_scalars({{"train/loss", static_cast<float>(r.loss)},
                  {"train/routed_high", r.expert == "high" ? 1.0f : 0.0f},
                  {"train/share_high", static_cast<float>(r.extra.at("share_high").get<double>())},
                  {"perf/samples_per_s", static_cast<float>(rate.samples_per_s)},
                  {"perf/step_time_s", static_cast<float>(rate.step_seconds)}},
                 global_step);
}

}  // namespace ws::train
