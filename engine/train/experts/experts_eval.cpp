// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_eval.h"

#include <string>

#include "contract/events.h"
#include "io/tfevents.h"
#include "runtime/events.h"
#include "train/experts/expert_routing.h"

namespace ws::train {

std::pair<std::vector<data::TrainRow>, std::vector<double>> select_eval_rows(const std::vector<data::TrainRow>& rows,
                                                                             const std::vector<int64_t>& timesteps,
                                                                             int64_t per_t) {
  std::map<int64_t, int64_t> count;
  std::vector<data::TrainRow> kept;
  std::vector<double> kept_t;
  for (const auto& r : rows) {
    const int64_t t = timesteps[static_cast<size_t>(r.meta_index) % timesteps.size()];
    if (count[t]++ >= per_t) continue;
    kept.push_back(r);
    kept_t.push_back(static_cast<double>(t));
  }
  return {kept, kept_t};
}

EvalLosses routed_eval_losses(const std::vector<EvalItem>& items, models::WanModel& high, models::WanModel& low,
                              int64_t boundary, const std::function<void(bool)>& activate, bool bsmntw) {
  torch::NoGradGuard no_grad;
  high->eval();
  low->eval();
  EvalLosses by_t;
  const size_t chunk = 8;
  for (size_t i0 = 0; i0 < items.size(); i0 += chunk) {
    std::vector<ExpertStepInput> samples;
    for (size_t i = i0; i < std::min(items.size(), i0 + chunk); ++i) samples.push_back(items[i].in);
    auto pred = routed_predict(high, low, boundary, samples, activate);
    for (size_t k = 0; k < pred.size(); ++k) {
      const ExpertStepInput& e = samples[k];
      const double l = expert_loss(pred[k], e).item<double>() * (bsmntw ? bsmntw_weight(e.t) : 1.0);
      auto& acc = by_t[static_cast<int64_t>(e.t)];
      acc.first += l, acc.second += 1;
    }
  }
  high->train();
  low->train();
  return by_t;
}

double report_eval(int64_t step, int64_t boundary, const EvalLosses& losses, size_t samples, io::TfEventsWriter* tb) {
  double all = 0, hi = 0, lo = 0;
  int64_t n_hi = 0, n_lo = 0;
  nlohmann::json loss_by_t = nlohmann::json::object();
  std::vector<std::pair<std::string, float>> scalars;
  for (const auto& [t, acc] : losses) {
    const double m = acc.first / static_cast<double>(acc.second);
    loss_by_t[std::to_string(t)] = m;
    scalars.emplace_back("eval/loss_t" + std::to_string(t), static_cast<float>(m));
    all += m;
    if (routes_high(static_cast<double>(t), boundary)) hi += m, ++n_hi;
    else lo += m, ++n_lo;
  }
  contract::EvalEvent ev;
  ev.step = step;
  ev.loss = all / static_cast<double>(losses.size());
  if (n_hi) ev.loss_high = hi / static_cast<double>(n_hi);
  if (n_lo) ev.loss_low = lo / static_cast<double>(n_lo);
  ev.loss_by_t = loss_by_t;
  ev.samples = static_cast<int64_t>(samples);
  runtime::EventStream::global().emit(ev);
  if (!tb) return ev.loss;
  scalars.emplace_back("eval/loss", static_cast<float>(ev.loss));
  if (n_hi) scalars.emplace_back("eval/high/loss", static_cast<float>(*ev.loss_high));
  if (n_lo) scalars.emplace_back("eval/low/loss", static_cast<float>(*ev.loss_low));
  tb->add_scalars(scalars, step);
  return ev.loss;
}

}  // namespace ws::train
