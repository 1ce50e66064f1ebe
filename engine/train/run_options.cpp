// SPDX-License-Identifier: Apache-2.0
#include "train/run_options.h"

#include <algorithm>
#include <thread>

namespace ws::train {
namespace {

// Options a job does not declare keep the struct's default (the VAE has no accumulation, ...).
bool has(const io::Config& cfg, const char* name) { return cfg.schema().find(name) != nullptr; }

}  // namespace

RunOptions parse_run_options(const io::Config& cfg) {
  RunOptions o;
  o.job = cfg.job();
  o.output_dir = cfg.str("output_dir");
  o.seed = static_cast<uint64_t>(cfg.integer("seed"));
  o.max_train_steps = cfg.opt_integer("max_train_steps");
  if (has(cfg, "num_train_epochs")) o.num_train_epochs = cfg.integer("num_train_epochs");
  if (has(cfg, "gradient_accumulation_steps"))
    o.gradient_accumulation_steps = cfg.integer("gradient_accumulation_steps");
  o.checkpointing_steps = cfg.integer("checkpointing_steps");
  o.checkpoints_total_limit = cfg.opt_integer("checkpoints_total_limit");
  if (has(cfg, "keep_best")) o.keep_best = cfg.boolean("keep_best");
  o.resume_from_checkpoint = cfg.opt_str("resume_from_checkpoint");
  o.overwrite_output_dir = cfg.boolean("overwrite_output_dir");
  if (has(cfg, "max_nonfinite_steps")) o.max_nonfinite_steps = cfg.integer("max_nonfinite_steps");
  if (has(cfg, "mixed_precision")) {
    o.bf16 = cfg.str("mixed_precision") == "bf16";
    o.bf16_asked = o.bf16 && !cfg.is_default("mixed_precision");
  }
  if (has(cfg, "low_vram")) {
    o.low_vram = cfg.boolean("low_vram");
    o.low_vram_asked = o.low_vram && !cfg.is_default("low_vram");
  }
  if (has(cfg, "allow_tf32")) o.allow_tf32 = cfg.boolean("allow_tf32");
  if (has(cfg, "report_to")) o.tensorboard = cfg.str("report_to") == "tensorboard";
  if (has(cfg, "logging_dir")) o.logging_dir = cfg.str("logging_dir");
  return o;
}

DataOptions parse_data_options(const io::Config& cfg) {
  DataOptions d;
  d.meta = cfg.opt_str("train_data_meta").value_or("");
  d.dir = cfg.opt_str("train_data_dir").value_or("");
  d.sample_size = cfg.integer("video_sample_size");
  d.n_frames = cfg.integer("video_sample_n_frames");
  d.stride = cfg.integer("video_sample_stride");
  d.batch_size = cfg.integer("train_batch_size");
  if (has(cfg, "dataloader_num_workers")) d.workers = cfg.integer("dataloader_num_workers");
  if (has(cfg, "enable_bucket")) d.enable_bucket = cfg.boolean("enable_bucket");
  if (has(cfg, "random_hw_adapt")) d.random_hw_adapt = cfg.boolean("random_hw_adapt");
  if (has(cfg, "frame_extraction")) {
    d.extraction.mode = dataset::parse_extraction(cfg.str("frame_extraction"));
    d.extraction.step = cfg.integer("frame_extraction_step");
    d.extraction.windows = cfg.integer("frame_extraction_windows");
    d.extraction.fps = cfg.real("frame_extraction_fps");
  }
  return d;
}

void add_frame_extraction_options(io::OptionSchema& s) {
  s.choice("frame_extraction", dataset::extraction_names(), "random",
           "how clips become samples: random (a window at a random start each epoch), head (the first window), "
           "chunk (back-to-back windows), slide (a window every frame_extraction_step frames), uniform "
           "(frame_extraction_windows windows spread over the clip), full (the clip at frame_extraction_fps, up to "
           "video_sample_n_frames frames); each fixed window is a sample");
  s.integer("frame_extraction_step", 10, "slide: frames between window starts")
      .min("frame_extraction_step", 1)
      .max("frame_extraction_step", 100000);
  s.integer("frame_extraction_windows", 4, "uniform: windows per clip")
      .min("frame_extraction_windows", 1)
      .max("frame_extraction_windows", 1000);
  s.real("frame_extraction_fps", 16, "full: the rate a clip is resampled to (a slower clip keeps every frame)")
      .min("frame_extraction_fps", 0.1)
      .max("frame_extraction_fps", 1000);
}

void add_clip_sampling_options(io::OptionSchema& s, const ClipSampling& c) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  s.integer("video_sample_size", c.size, c.size_help)
      .min("video_sample_size", static_cast<double>(c.size_min))
      .max("video_sample_size", 4096);
  s.integer("video_sample_stride", 2, "frame stride").min("video_sample_stride", 1).max("video_sample_stride", 1000);
  s.integer("video_sample_n_frames", 81, "frames per clip, 4k+1")
      .max("video_sample_n_frames", 1025)
      .shape("video_sample_n_frames", contract::frames_rule());
  s.integer("train_batch_size", 1, "clips per micro-batch").min("train_batch_size", 1).max("train_batch_size", 1024);
  s.integer("dataloader_num_workers", std::min<int64_t>(4, std::max<int64_t>(1, cores - 1)), "decode threads")
      .min("dataloader_num_workers", 0)
      .max("dataloader_num_workers", 64);
  s.boolean("enable_bucket", true, "aspect-ratio buckets (off: one square bucket)");
  s.boolean("random_hw_adapt", true, "random bucket downscale per batch (no effect below S = 768)");
  add_frame_extraction_options(s);
}

void add_run_options(io::OptionSchema& s, const RunOptionTexts& t) {
  s.path("output_dir", t.output_dir, t.output_dir_help);
  s.string("logging_dir", "logs", "TensorBoard folder inside output_dir");
  s.integer("seed", 42, "seed of every random stream").min("seed", 0).max("seed", 9007199254740991.0);
  s.integer("num_train_epochs", 100, "epochs (max_train_steps wins when set)")
      .min("num_train_epochs", 1)
      .max("num_train_epochs", 1000000);
  s.integer("max_train_steps", nullptr, t.max_steps_help).min("max_train_steps", 1).max("max_train_steps", 1000000000);
  s.integer("max_nonfinite_steps", 10, "updates skipped in a row for NaN/inf gradients before the run stops")
      .min("max_nonfinite_steps", 1)
      .max("max_nonfinite_steps", 1000000);
  s.integer("gradient_accumulation_steps", 1, "micro-batches per optimizer step")
      .min("gradient_accumulation_steps", 1)
      .max("gradient_accumulation_steps", 1024);
  s.integer("checkpointing_steps", 500, t.checkpointing_help)
      .min("checkpointing_steps", 1)
      .max("checkpointing_steps", 1000000000);
  s.integer("checkpoints_total_limit", 3, "keep at most N checkpoints")
      .min("checkpoints_total_limit", 1)
      .max("checkpoints_total_limit", 1000000);
  s.boolean("keep_best", false, t.keep_best_help);
  s.string("resume_from_checkpoint", nullptr, "'latest' or a checkpoint folder");
  s.boolean("force", false, "start even when the memory estimate says the run will not fit this machine");
  s.boolean("overwrite_output_dir", false,
            "start a new run in an output_dir that holds another run (removes its checkpoints and events)");
}

void add_adamw_options(io::OptionSchema& s, const AdamDefaults& a) {
  s.real("adam_beta1", 0.9, "AdamW beta1").min("adam_beta1", 0).max("adam_beta1", 1);
  s.real("adam_beta2", 0.999, "AdamW beta2").min("adam_beta2", 0).max("adam_beta2", 1);
  s.real("adam_weight_decay", a.weight_decay, "decoupled weight decay")
      .min("adam_weight_decay", 0)
      .max("adam_weight_decay", 10);
  s.real("adam_epsilon", a.epsilon, "AdamW epsilon").min("adam_epsilon", 0).max("adam_epsilon", 1);
  s.real("max_grad_norm", a.max_grad_norm, a.clip_help).min("max_grad_norm", -1).max("max_grad_norm", 1e12);
  if (*a.damping_help == '\0') return;
  s.real("abnormal_norm_clip_start", 1000, a.damping_help)
      .min("abnormal_norm_clip_start", 0)
      .max("abnormal_norm_clip_start", 1e9);
  s.real("initial_grad_norm_ratio", 5, "the threshold starts at this × max_grad_norm")
      .min("initial_grad_norm_ratio", 0)
      .max("initial_grad_norm_ratio", 1e6);
}

void add_frame_extraction_maths(const io::Config& cfg, nlohmann::json& maths) {
  if (cfg.str("frame_extraction") == "random") return;
  for (const char* k :
       {"frame_extraction", "frame_extraction_step", "frame_extraction_windows", "frame_extraction_fps"})
    maths[k] = cfg.value(k);
}

OptimizerOptions parse_optimizer_options(const io::Config& cfg) {
  OptimizerOptions o;
  o.learning_rate = cfg.real("learning_rate");
  if (has(cfg, "scale_lr")) o.scale_lr = cfg.boolean("scale_lr");
  o.adam = {cfg.real("adam_beta1"), cfg.real("adam_beta2"), cfg.real("adam_epsilon"), cfg.real("adam_weight_decay")};
  o.clip.max_grad_norm = cfg.opt_real("max_grad_norm").value_or(0.0);
  if (has(cfg, "abnormal_norm_clip_start")) o.clip.abnormal_norm_clip_start = cfg.real("abnormal_norm_clip_start");
  if (has(cfg, "initial_grad_norm_ratio")) o.clip.initial_grad_norm_ratio = cfg.real("initial_grad_norm_ratio");
  o.schedule.name = cfg.str("lr_scheduler");
  o.schedule.warmup_steps = cfg.integer("lr_warmup_steps");
  o.schedule.base_lr = o.learning_rate;
  if (has(cfg, "gradient_checkpointing")) o.gradient_checkpointing = cfg.boolean("gradient_checkpointing");
  return o;
}

}  // namespace ws::train
