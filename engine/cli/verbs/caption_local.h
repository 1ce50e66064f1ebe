// SPDX-License-Identifier: Apache-2.0
// The caption verb's in-engine backend: Qwen2.5-VL from a released folder (config.json, the
// safetensors, tokenizer.json), run on the sampled frames of one row at a time.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::cli {

struct LocalCaptionOptions {
  std::string model_path;       // the folder
  std::string device = "auto";  // auto, cpu, cuda, cuda:N
  std::string dtype = "auto";   // auto (bf16 on a GPU; the weights' own on the CPU), fp32, bf16
  int64_t max_new_tokens = 512;
  double temperature = 0, top_p = 1.0;
  int64_t top_k = 0;
  uint64_t seed = 0;
  int64_t min_pixels = 0, max_pixels = 0;  // a frame's size bounds; 0: the video processor's defaults
};

class LocalCaptioner {
 public:
  explicit LocalCaptioner(const LocalCaptionOptions& options);
  ~LocalCaptioner();
  // A Qwen2.5-VL release folder, at a glance (config.json, tokenizer.json): ws::Error otherwise.
  static void check_folder(const std::string& dir);
  // The answer to `prompt` about `frames` (in time order, `seconds_between` apart). `on_text` gets the
  // answer so far after each token; returning false stops.
  std::string caption(const std::string& prompt, const std::vector<video::RgbFrame>& frames, double seconds_between,
                      const std::function<bool(const std::string&)>& on_text) const;
  // What the sidecar records: the folder, device and dtype in use.
  std::string device() const;
  std::string dtype() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ws::cli
