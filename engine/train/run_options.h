// SPDX-License-Identifier: Apache-2.0
// The options every training job shares, read from the resolved config once (docs/design/
// architecture.md §5). Trainers get typed structs: past the parsers (this file and each job's
// *_setup.cpp) no code looks an option up by its name.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataset/frame_sampling.h"
#include "io/yaml_config.h"
#include "train/adamw.h"
#include "train/grad_clip.h"
#include "train/lr_schedule.h"

namespace ws::train {

// The run: folder, seed, length, cadence, device wishes and logging.
struct RunOptions {
  std::string job;         // "upsampler" | "experts" | "vae"
  std::string output_dir;  // absolute
  uint64_t seed = 42;
  std::optional<int64_t> max_train_steps;  // nullopt: num_train_epochs × steps per epoch
  int64_t num_train_epochs = 1;
  int64_t gradient_accumulation_steps = 1;
  int64_t checkpointing_steps = 500;
  std::optional<int64_t> checkpoints_total_limit;
  bool keep_best = false;                             // keep the best validation/eval checkpoint beside the last N
  std::optional<std::string> resume_from_checkpoint;  // "latest" or a folder
  bool overwrite_output_dir = false;
  int64_t max_nonfinite_steps = 10;  // updates skipped in a row for non-finite gradients before the run stops
  // Device wishes: the value, and whether the user set it (GPU-oriented defaults stay silent on a CPU).
  bool bf16 = false, bf16_asked = false;
  bool low_vram = false, low_vram_asked = false;
  bool allow_tf32 = false;
  bool tensorboard = true;
  std::string logging_dir = "logs";  // inside output_dir
};

// The dataset and how clips are cut from it.
struct DataOptions {
  std::string meta;  // train_data_meta (absolute), "" when unset
  std::string dir;   // train_data_dir, "" = the metadata's folder
  int64_t sample_size = 512, n_frames = 81, stride = 1;
  int64_t batch_size = 1;
  int64_t workers = 0;
  bool enable_bucket = true, random_hw_adapt = false;
  dataset::ExtractionRule extraction;  // frame_extraction and its parameters
};

// frame_extraction, frame_extraction_step, _windows and _fps: declared once for both trainers.
void add_frame_extraction_options(io::OptionSchema& s);

// The keys above when frame_extraction is not random (a run's maths hash is unchanged by them otherwise).
void add_frame_extraction_maths(const io::Config& cfg, nlohmann::json& maths);

// video_sample_size (the trainer's default, floor and help), stride, frames, batch, decode threads,
// buckets, then frame_extraction: what parse_data_options reads, declared once for both trainers.
struct ClipSampling {
  int64_t size = 512, size_min = 32;
  const char* size_help = "";
};
void add_clip_sampling_options(io::OptionSchema& s, const ClipSampling& c);

// The Training group's run folder, length, cadence and resume options (parse_run_options), in the
// order both trainers show them; the texts a trainer words its own way are given.
struct RunOptionTexts {
  const char* output_dir = "";  // default folder name
  const char* output_dir_help = "";
  const char* max_steps_help = "";
  const char* checkpointing_help = "";
  const char* keep_best_help = "";
};
void add_run_options(io::OptionSchema& s, const RunOptionTexts& t);

// AdamW's betas, weight decay and epsilon and the clip threshold (parse_optimizer_options), with the
// trainer's defaults; `damping_help` adds the abnormal-norm damping pair (empty: not offered).
struct AdamDefaults {
  double weight_decay = 3e-2, epsilon = 1e-10, max_grad_norm = 0.05;
  const char* clip_help = "clip threshold (≤ 0 or null: no clipping)";
  const char* damping_help = "";  // abnormal_norm_clip_start's help
};
void add_adamw_options(io::OptionSchema& s, const AdamDefaults& a);

// AdamW, clipping and the learning-rate schedule (its training_steps is known once the data is).
struct OptimizerOptions {
  double learning_rate = 1e-4;
  bool scale_lr = false;
  AdamWOptions adam;
  ClipOptions clip;
  LrSchedule schedule;
  bool gradient_checkpointing = false;
};

RunOptions parse_run_options(const io::Config& cfg);
DataOptions parse_data_options(const io::Config& cfg);
OptimizerOptions parse_optimizer_options(const io::Config& cfg);

}  // namespace ws::train
