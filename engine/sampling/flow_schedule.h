// SPDX-License-Identifier: Apache-2.0
// The denoising schedule of Wan's flow-matching samplers (docs/design/sampling.md §2): N shifted
// noise levels from the solver's unshifted grid, then 0, and the integer timestep the model sees
// at each step, floor(1000·σ). Computed in IEEE double in the reference's order and truncated,
// so every timestep matches the official tables exactly (this file is built without FMA
// contraction).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ws::sampling {

enum class Solver { UniPC, DpmPP };
Solver parse_solver(const std::string& name);  // "unipc" | "dpm++"; ws::Error otherwise
const char* solver_name(Solver s);

struct FlowSchedule {
  std::vector<int64_t> timesteps;  // N, what the model receives
  std::vector<float> sigmas;       // N + 1, the solver's noise levels (float32), last 0
};

// UniPC starts from shift(0.999) (t0 = 999), DPM++ from exactly 1 (t0 = 1000).
FlowSchedule flow_schedule(Solver solver, int64_t steps, double shift);

}  // namespace ws::sampling
