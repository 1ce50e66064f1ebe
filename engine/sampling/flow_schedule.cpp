// SPDX-License-Identifier: Apache-2.0
#include "sampling/flow_schedule.h"

#include "core/error.h"

namespace ws::sampling {

Solver parse_solver(const std::string& name) {
  if (name == "unipc") return Solver::UniPC;
  if (name == "dpm++" || name == "dpmpp") return Solver::DpmPP;
  throw Error("sample_solver must be unipc or dpm++, got '" + name + "'");
}

const char* solver_name(Solver s) { return s == Solver::UniPC ? "unipc" : "dpm++"; }

FlowSchedule flow_schedule(Solver solver, int64_t steps, double shift) {
  if (steps < 1) throw Error("sampling steps must be at least 1");
  if (!(shift > 0)) throw Error("sample shift must be positive");
  // UniPC's grid starts at the training table's first entry, 0.999 stored as float32.
  const double start = solver == Solver::UniPC ? static_cast<double>(0.999f) : 1.0;
  const double step = (0.0 - start) / static_cast<double>(steps);
  FlowSchedule s;
  for (int64_t i = 0; i < steps; ++i) {
    const double u = static_cast<double>(i) * step + start;  // numpy linspace's i·step + start
    const double sigma = shift * u / (1.0 + (shift - 1.0) * u);
    s.timesteps.push_back(static_cast<int64_t>(sigma * 1000.0));  // truncation toward zero
    s.sigmas.push_back(static_cast<float>(sigma));
  }
  s.sigmas.push_back(0.0f);
  return s;
}

}  // namespace ws::sampling
