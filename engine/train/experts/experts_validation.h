// SPDX-License-Identifier: Apache-2.0
// Validation videos of a dual-expert run (docs/design/sampling.md §12.3): at every
// `validation_steps` (and before the first update, and after the last) rank 0 renders each
// validation prompt with the current weights of both experts through the sampler, writes
// sample/step<N>_val<i>.{latents.safetensors,json,mp4} and a `validation` event (i2v: from the
// prompt's start image, named in the event). Its noise comes
// from validation_seed + i alone and it changes no weight, state or training stream, so a run
// trains the same bits with or without it.
#pragma once
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/wan_dit.h"
#include "models/wan_vae.h"
#include "train/experts/prompts_file.h"
#include "train/experts/sample_render.h"
#include "train/experts/text_encoding.h"

namespace ws::train {

struct ExpertsValidationOptions {
  std::vector<std::string> prompts;       // texts: embeddings by SHA-256 in the run's text_embeddings_dir
  std::vector<std::string> prompt_files;  // or embedding files
  std::vector<SamplePrompt> from_file;    // validation_prompts_file's entries (own seed, size, frames, image)
  std::vector<std::string> images;        // i2v / ti2v: one start image per prompt (paths; empty: none)
  std::string model_type = "t2v";         // what the images condition (i2v: image + zero frames)
  std::string negative_prompt;            // empty: Wan's default
  int64_t every = 0;                      // validation_steps (0: off)
  bool at_start = true;
  SampleSettings settings;  // preview or full, with the run's overrides
  uint64_t seed = 42;       // prompt i renders from seed + i
  // Every prompt in render order: the texts, the embedding files, then the prompts file's entries.
  std::vector<SamplePrompt> all() const;
  bool active() const { return every > 0 && !all().empty(); }
  // The embedding files the prompts (and the negative prompt) need, texts first.
  std::vector<std::pair<std::string, std::string>> text_files(const std::string& text_dir) const;
};

// Encodes the prompts' (and the negative prompt's) missing embeddings with the run's encoder.
void encode_validation_prompts(const ExpertsValidationOptions& o, const std::string& text_dir,
                               const TextEncoderOptions& encoder, int64_t text_dim);

class ExpertsValidation {
 public:
  ExpertsValidation(ExpertsValidationOptions o, std::string text_dir, int64_t text_len, int64_t text_dim);
  // Renders at `step` unless it already did; `activate(high)` brings an expert onto the device.
  void render(int64_t step, models::WanModel high, models::WanModel low, models::WanVae* vae,
              const std::string& run_dir, const std::function<void(bool)>& activate);
  const ExpertsValidationOptions& options() const { return o_; }

 private:
  ExpertsValidationOptions o_;
  std::vector<SamplePrompt> prompts_;
  std::vector<torch::Tensor> contexts_;
  std::vector<std::string> labels_;
  std::vector<torch::Tensor> images_;  // each prompt's image latent, encoded at the first render
  torch::Tensor negative_;
  int64_t last_step_ = -1;
};

}  // namespace ws::train
