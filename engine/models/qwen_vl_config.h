// SPDX-License-Identifier: Apache-2.0
// The sizes of a Qwen2.5-VL checkpoint (docs/design/captioning.md §8): the vision tower's and
// the Qwen2 decoder's, read from the config.json a release ships (text keys at the top level,
// the tower's under `vision_config`) or transformers 5's layout (the text keys under
// `text_config`).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ws::models {

struct QwenVisionConfig {
  int64_t depth = 32, hidden_size = 1280, intermediate_size = 3420, num_heads = 16;
  int64_t in_chans = 3, out_hidden_size = 3584;
  int64_t patch_size = 14, spatial_merge_size = 2, temporal_patch_size = 2;
  int64_t window_size = 112;                                  // pixels; windows of window/merge/patch merged units
  std::vector<int64_t> fullatt_block_indexes{7, 15, 23, 31};  // blocks that attend over the whole frame
  double tokens_per_second = 2;                               // M-RoPE's time positions per second of video
  double eps = 1e-6;                                          // the tower's RMS norms

  int64_t head_dim() const { return hidden_size / num_heads; }
  // Patches of one merged token along one side (2), and merged tokens a window spans (4).
  int64_t merge_unit() const { return spatial_merge_size * spatial_merge_size; }
  int64_t window_units() const { return window_size / spatial_merge_size / patch_size; }
  // Values of one patch: in_chans × temporal_patch_size × patch_size².
  int64_t patch_values() const { return in_chans * temporal_patch_size * patch_size * patch_size; }
};

struct QwenTextConfig {
  int64_t vocab_size = 152064, hidden_size = 3584, intermediate_size = 18944;
  int64_t num_hidden_layers = 28, num_attention_heads = 28, num_key_value_heads = 4;
  double rms_norm_eps = 1e-6, rope_theta = 1000000.0;
  std::vector<int64_t> mrope_section{16, 24, 24};  // rotary pairs for time, height, width (sum = head_dim / 2)
  bool tie_word_embeddings = false;                // 3B: lm_head is embed_tokens

  int64_t head_dim() const { return hidden_size / num_attention_heads; }
};

struct QwenVlConfig {
  QwenVisionConfig vision;
  QwenTextConfig text;
  int64_t image_token_id = 151655, video_token_id = 151656;
  int64_t vision_start_token_id = 151652, vision_end_token_id = 151653;
  std::vector<int64_t> eos_token_ids{151645, 151643};  // <|im_end|>, <|endoftext|>

  // Either layout; missing keys keep the defaults above (the 7B's). Throws ws::Error naming
  // `where` for a wrong type or sizes that do not fit together.
  static QwenVlConfig from_json(const nlohmann::json& j, const std::string& where);
  void validate(const std::string& where) const;
};

}  // namespace ws::models
