// SPDX-License-Identifier: Apache-2.0
// The Qwen2.5-VL vision tower (docs/design/captioning.md §8), as transformers'
// Qwen2_5_VisionTransformerPretrainedModel computes it: Conv3d patch embedding, 2-D rotary
// positions per merged 2×2 unit, blocks that attend within windows of merged units (or over the
// whole frame for fullatt_block_indexes), then the 2×2 patch merger into the decoder's width.
// Frozen: the weights are held as loaded and cast a matrix at a time to the compute dtype.
//
//   QwenVisionTower tower(cfg, weights);                        // keys without "visual."
//   std::array<int64_t, 3> grid;
//   torch::Tensor p = qwen_video_patches(frames, cfg, &grid);   // qwen_vl_preprocess.h
//   torch::Tensor e = tower.forward(p, grid);                   // [N / 4, out_hidden_size]
#pragma once
#include <torch/torch.h>

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/state_dict.h"
#include "models/frozen_weights.h"
#include "models/qwen_vl_config.h"

namespace ws::models {

// Intermediates for parity, on the CPU: "window_index", "cu_seqlens", "cu_window_seqlens",
// "patch_embed", "block{i}_out" (the hidden stream, in window order as the reference holds it),
// "merged" (the merger's output before the window order is undone).
struct QwenVisionTrace {
  std::map<std::string, torch::Tensor> tensors;
};

class QwenVisionTower {
 public:
  // Weights by the released names without the "visual." prefix (patch_embed.proj.weight,
  // blocks.{i}.norm1.weight, blocks.{i}.attn.qkv.weight, ..., merger.mlp.2.bias). Strict: a
  // missing, unexpected or mis-shaped key throws ws::Error naming it and `source`.
  QwenVisionTower(QwenVisionConfig config, io::StateDict weights,
                  const std::string& source = "Qwen2.5-VL vision weights");

  const QwenVisionConfig& config() const { return config_; }
  // fp32 (default) or bf16 (the release's dtype); norm statistics, rotary and softmax stay fp32.
  void set_compute_dtype(torch::ScalarType dtype);
  torch::ScalarType compute_dtype() const { return dtype_; }
  // Moves the weights (e.g. to CUDA); they keep their dtype.
  void to(const torch::Device& device);

  // patches [N, C·Tp·P·P] in the processor's layout, grid = {t, h, w} in patches (N = t·h·w)
  // -> [N / merge_unit, out_hidden_size] float, in the order of the <|video_pad|> tokens.
  // One call per video or image: attention never crosses a grid anyway.
  torch::Tensor forward(const torch::Tensor& patches, const std::array<int64_t, 3>& grid,
                        QwenVisionTrace* trace = nullptr) const;

 private:
  const torch::Tensor& w(const std::string& key) const;
  // In the compute dtype; a converted weight lives in a buffer reused by the next one of its shape.
  torch::Tensor cw(const std::string& key) const;
  torch::Tensor linear(const torch::Tensor& x, const std::string& prefix) const;  // prefix.weight, prefix.bias
  torch::Tensor norm(const torch::Tensor& x, const std::string& key) const;

  QwenVisionConfig config_;
  FrozenWeights weights_;
  torch::ScalarType dtype_ = torch::kFloat;
};

// transformers' get_window_index for one grid: the merged units in window order (int64, CPU), and
// the cumulative window lengths in patches from 0 (empty windows dropped, as unique_consecutive does).
std::pair<torch::Tensor, std::vector<int64_t>> qwen_window_index(const QwenVisionConfig& c,
                                                                 const std::array<int64_t, 3>& grid);

// The tower's rotary (h, w) position of every patch in the processor's order, [N, 2] int64.
torch::Tensor qwen_vision_position_ids(const QwenVisionConfig& c, const std::array<int64_t, 3>& grid);

}  // namespace ws::models
