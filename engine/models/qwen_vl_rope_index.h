// SPDX-License-Identifier: Apache-2.0
// The 3-D positions (time, height, width) of Qwen2.5-VL's multimodal RoPE for one prompt, as
// transformers 5.25's Qwen2_5_VLModel.get_rope_index computes them: text runs count up on all
// three streams; a run of vision pads is its merged grid, time = ⌊t · second_per_grid ·
// tokens_per_second⌋ (in float32, as the processor's tensor holds it), height and width the
// merged rows and columns, all offset by the position the run starts at. The text after it
// continues one past the largest position so far — the rule Qwen's own code, vLLM and
// transformers before 5.3 follow, and so what the released weights were trained with — or, with
// QwenPositionRule::Transformers, from the run's start + max(h, w) / merge as transformers 5.25
// does (the two differ only where a video's time extent exceeds its merged height and width).
// Generated tokens continue at L + delta (one past the largest position, under both rules).
#pragma once
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <vector>

#include "models/qwen_vl_config.h"

namespace ws::models {

enum class QwenPositionRule { Release, Transformers };

struct QwenRopeIndex {
  torch::Tensor positions;  // int64 [3, L]
  int64_t delta = 0;        // next position = L + delta (max + 1 − L)
};

// ids [L] (one sequence, no padding); each vision input's grid {t, h, w} in patches, in order of
// appearance, and its seconds per temporal grid step (temporal_patch_size / fps; ignored for
// images, whose time step is 1). A run of image or video pads must hold t·h·w / merge² tokens.
// Throws ws::Error when the runs and the grids do not match.
QwenRopeIndex qwen_rope_index(const std::vector<int64_t>& ids, const std::vector<std::array<int64_t, 3>>& grids,
                              const std::vector<double>& second_per_grid, const QwenVlConfig& config,
                              QwenPositionRule rule = QwenPositionRule::Release);

}  // namespace ws::models
