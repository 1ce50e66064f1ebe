// SPDX-License-Identifier: Apache-2.0
// Qwen2.5-VL as a whole (docs/design/captioning.md §8): a released checkpoint folder loaded into
// the vision tower and the Qwen2 decoder, the tower's output put in place of the video pads, and
// tokens generated with a KV cache, as transformers 5.25's Qwen2_5_VLForConditionalGeneration
// .generate does (greedy, or temperature / top-k / top-p sampling).
//
//   QwenVl vl = QwenVl::load("Qwen2.5-VL-7B-Instruct", torch::kBFloat16, torch::kCUDA);
//   auto ids = tokenizer.encode(qwen_chat_prompt("Describe this video.", {n_pads}));
//   std::vector<int64_t> out = vl.generate(ids, {{patches, grid, 2.0 / fps}}, {});
#pragma once
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/qwen_vl_config.h"
#include "models/qwen_vl_rope_index.h"
#include "models/qwen_vl_text.h"
#include "models/qwen_vl_vision.h"

namespace ws::models {

struct QwenGenerateOptions {
  int64_t max_new_tokens = 512;
  double temperature = 0;  // 0 = greedy
  double top_p = 1.0;
  int64_t top_k = 0;  // 0 = all
  uint64_t seed = 0;  // of the CPU generator that samples
  bool stop_at_eos = true;
  std::vector<int64_t> eos_token_ids;  // empty: the config's
  // Where text after a video resumes (qwen_vl_rope_index.h): the release's rule by default.
  QwenPositionRule positions = QwenPositionRule::Release;
};

struct QwenVideoInput {
  torch::Tensor patches;          // [t·h·w, patch_values] in the processor's layout
  std::array<int64_t, 3> grid{};  // {t, h, w} in patches
  double second_per_grid = 1.0;   // temporal_patch_size / fps
};

// float32 logits on the CPU: the prefill's [L, vocab], and per new token the [vocab] row that
// chose it (step 0 is the prefill's last row), as transformers' output_logits gives them.
struct QwenGenerateTrace {
  torch::Tensor prefill_logits;
  std::vector<torch::Tensor> step_logits;
};

class QwenVl {
 public:
  // A released folder: config.json (+ generation_config.json's eos_token_id when present, as
  // transformers' generate takes it) and model.safetensors or model.safetensors.index.json.
  // Keys by the release's names (visual.*, model.*, lm_head.*) or transformers 5's
  // (model.visual.*, model.language_model.*, lm_head.*); strict otherwise.
  static QwenVl load(const std::string& dir, torch::ScalarType dtype = torch::kFloat,
                     const torch::Device& device = torch::kCPU);
  QwenVl(QwenVlConfig config, QwenVisionTower vision, QwenDecoder decoder);

  const QwenVlConfig& config() const { return config_; }
  const QwenVisionTower& vision() const { return *vision_; }
  const QwenDecoder& decoder() const { return *decoder_; }

  // ids already expanded (one <|video_pad|> per merged vision token, the videos in order); returns
  // the new ids, stopping before an eos id. on_token(id) returning false stops after that id.
  std::vector<int64_t> generate(const std::vector<int64_t>& ids, const std::vector<QwenVideoInput>& videos,
                                const QwenGenerateOptions& options, const std::function<bool(int64_t)>& on_token = {},
                                QwenGenerateTrace* trace = nullptr) const;

 private:
  QwenVlConfig config_;
  std::unique_ptr<QwenVisionTower> vision_;
  std::unique_ptr<QwenDecoder> decoder_;
};

// The next token from float32 logits [vocab] (any device): argmax (the first of equal maxima)
// when options.temperature is 0, else logits / T, top-k, top-p (transformers' warpers, in that
// order), then a draw from `generator` (CPU).
int64_t qwen_pick_token(const torch::Tensor& logits, const QwenGenerateOptions& options, at::Generator& generator);

// Qwen2.5-VL's chat template for one user turn with the default system prompt: each video as
// <|vision_start|> + video_tokens[i] × <|video_pad|> + <|vision_end|>, then the text, then the
// assistant header.
std::string qwen_chat_prompt(const std::string& user_text, const std::vector<int64_t>& video_tokens);

}  // namespace ws::models
