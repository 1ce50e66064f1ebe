// SPDX-License-Identifier: Apache-2.0
#include "models/qwen_vl_rope_index.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace ws::models {

QwenRopeIndex qwen_rope_index(const std::vector<int64_t>& ids, const std::vector<std::array<int64_t, 3>>& grids,
                              const std::vector<double>& second_per_grid, const QwenVlConfig& config,
                              QwenPositionRule rule) {
  if (second_per_grid.size() != grids.size())
    throw Error("Qwen2.5-VL positions: " + std::to_string(grids.size()) + " vision grids but " +
                std::to_string(second_per_grid.size()) + " seconds-per-grid values");
  const int64_t merge = config.vision.spatial_merge_size;
  const auto L = static_cast<int64_t>(ids.size());
  std::vector<int64_t> pos[3];
  for (auto& p : pos) p.reserve(ids.size());
  auto is_vision = [&](int64_t id) { return id == config.image_token_id || id == config.video_token_id; };

  int64_t current = 0;  // where the next run starts
  size_t grid_i = 0;
  for (int64_t i = 0; i < L;) {
    // One run of a single kind: text, image pads or video pads (transformers groups by token type).
    const int64_t kind = is_vision(ids[i]) ? ids[i] : -1;
    int64_t end = i + 1;
    while (end < L && (kind < 0 ? !is_vision(ids[end]) : ids[end] == kind)) ++end;
    const int64_t n = end - i;
    if (kind < 0) {
      for (int64_t k = 0; k < n; ++k)
        for (auto& p : pos) p.push_back(current + k);
      current += n;
    } else {
      if (grid_i >= grids.size())
        throw Error("Qwen2.5-VL positions: the prompt holds more vision runs than the " + std::to_string(grids.size()) +
                    " grids given");
      const auto& g = grids[grid_i];
      const double spg = second_per_grid[grid_i];
      ++grid_i;
      if (g[0] < 1 || g[1] < 1 || g[2] < 1 || g[1] % merge || g[2] % merge)
        throw Error("Qwen2.5-VL positions: grid " + std::to_string(grid_i) + " is not whole merged units of " +
                    std::to_string(merge) + "×" + std::to_string(merge) + " patches");
      const int64_t gt = g[0], gh = g[1] / merge, gw = g[2] / merge;
      if (gt * gh * gw != n)
        throw Error("Qwen2.5-VL positions: vision run " + std::to_string(grid_i) + " has " + std::to_string(n) +
                    " pad tokens, its grid needs " + std::to_string(gt * gh * gw));
      // The reference multiplies arange(t) by a float32 interval (tokens_per_second × the
      // processor's float32 seconds) and truncates: the same float32 steps here. Images step by 1.
      const bool video = kind == config.video_token_id;
      const float interval =
          video ? static_cast<float>(config.vision.tokens_per_second) * static_cast<float>(spg) : 1.0f;
      int64_t last_time = 0;
      for (int64_t a = 0; a < gt; ++a) {
        const auto time = static_cast<int64_t>(static_cast<float>(a) * interval);
        last_time = std::max(last_time, time);
        for (int64_t b = 0; b < gh; ++b)
          for (int64_t c = 0; c < gw; ++c) {
            pos[0].push_back(current + time);
            pos[1].push_back(current + b);
            pos[2].push_back(current + c);
          }
      }
      current += rule == QwenPositionRule::Release ? std::max({last_time + 1, gh, gw}) : std::max(gh, gw);
    }
    i = end;
  }
  if (grid_i != grids.size())
    throw Error("Qwen2.5-VL positions: " + std::to_string(grids.size()) + " vision grids given, the prompt has " +
                std::to_string(grid_i) + " runs of vision pads");

  QwenRopeIndex r;
  r.positions = torch::empty({3, L}, torch::kInt64);
  int64_t top = -1;
  for (int s = 0; s < 3; ++s) {
    std::copy(pos[s].begin(), pos[s].end(), r.positions[s].data_ptr<int64_t>());
    if (!pos[s].empty()) top = std::max(top, *std::max_element(pos[s].begin(), pos[s].end()));
  }
  r.delta = top + 1 - L;
  return r;
}

}  // namespace ws::models
