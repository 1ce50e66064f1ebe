// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_options.h"

#include "train/lr_schedule.h"
#include "train/run_options.h"

namespace ws::train {
using io::json;
using io::OptType;

io::OptionSchema upsampler_option_schema() {
  io::OptionSchema s = io::OptionSchema::for_job("upsampler");

  s.group("Model");
  s.path("config_path", nullptr, "VideoX-Fun model YAML (latent_upsampler_kwargs, vae_kwargs, scheduler_kwargs)");
  s.path("pretrained_model_name_or_path", nullptr,
         "folder holding the Wan2.2 VAE (vae_kwargs.vae_subpath, default Wan2.2_VAE.pth)");
  s.path("vae_path", nullptr, "VAE weights (.pth or .safetensors); replaces the pretrained VAE, loaded strictly");
  s.choice("vae_type", {"auto", "wan2.2", "wan2.1"}, "auto",
           "which VAE: auto (the weights decide); the upsampler trains on Wan2.2 VAE latents, so wan2.1 is refused");
  s.path("latent_upsampler_path", nullptr,
         "warm start: upsampler weights or latent_upsampler/ folder; mismatched keys skipped");
  s.list("trainable_modules", OptType::String, json::array({"."}), "parameter-name substrings to train");
  s.list("trainable_modules_low_learning_rate", OptType::String, json::array(),
         "substrings trained at learning_rate / 2");

  s.group("Data");
  s.path("train_data_meta", nullptr, "metadata.json of the dataset").required("train_data_meta");
  s.path("train_data_dir", nullptr, "folder that file_path entries are relative to (default: the metadata's folder)");
  s.string("demo_data", nullptr,
           "'auto': write the built-in demo dataset at train_data_dir when train_data_meta is missing");
  add_clip_sampling_options(s, {640, 48, "high-res sample edge S (bucket sizes scale with it)"});
  s.boolean("enable_degradation", false, "degrade the low-res input (blur, resize, noise, JPEG)");
  s.list("degradation_ops_range", OptType::Int, json::array({1, 4}), "min and max number of degradation ops")
      .min("degradation_ops_range", 0)
      .max("degradation_ops_range", 16);
  s.boolean("cache_latents", false, "cache VAE latents of each clip (needs degradation off)");
  s.path("latent_cache_dir", nullptr, "latent cache folder (default <output_dir>/latent_cache)");
  s.boolean("overlap_vae_encode", true,
            "take and encode the next batch while the model trains on this one (off with enable_pixel_loss)");
  s.integer("max_train_samples", nullptr, "accepted for compatibility; no effect")
      .min("max_train_samples", 0)
      .max("max_train_samples", 1e12);
  s.integer("video_repeat", 0, "accepted for compatibility; no effect").min("video_repeat", 0).max("video_repeat", 1e6);
  s.boolean("random_ratio_crop", false, "accepted for compatibility; no effect");

  s.group("Training");
  RunOptionTexts run;
  run.output_dir = "output_dir_wan_upsampler";
  run.output_dir_help = "run folder (checkpoints, samples, logs, events)";
  run.max_steps_help = "total optimizer steps";
  run.checkpointing_help = "save every N steps";
  run.keep_best_help = "also keep the checkpoint with the best mean validation PSNR (validation_paths)";
  add_run_options(s, run);
  s.boolean("gradient_checkpointing", true, "recompute ResBlock activations in backward");
  s.choice("mixed_precision", {"no", "fp16", "bf16"}, "bf16", "bf16 on GPU builds; fp32 with a warning on CPU");
  s.boolean("winograd_convs", true,
            "CPU fp32: the 3×3 convs train on oneDNN's Winograd kernels (about 2× faster; false: the direct kernels, "
            "as the reference)");
  s.integer("vae_mini_batch", 1, "clips per VAE call").min("vae_mini_batch", 1).max("vae_mini_batch", 1024);
  s.boolean("low_vram", true, "keep the VAE on the CPU between calls (GPU builds)");
  s.boolean("use_ema", false, "keep an EMA of the weights; validation and the final save use it");
  s.boolean("allow_tf32", false, "TF32 matmuls on CUDA");
  s.choice("report_to", {"tensorboard", "none"}, "tensorboard", "scalar logging");

  s.group("Optimizer");
  s.real("learning_rate", 2e-5, "peak learning rate").min("learning_rate", 0).max("learning_rate", 10);
  s.boolean("scale_lr", false, "lr ×= accumulation · batch · processes");
  s.choice("lr_scheduler", lr_schedule_names(), "constant_with_warmup", "learning-rate schedule");
  s.integer("lr_warmup_steps", 100, "warmup steps").min("lr_warmup_steps", 0).max("lr_warmup_steps", 1000000000);
  AdamDefaults adam;
  adam.damping_help = "step after which abnormal gradient norms are damped";
  add_adamw_options(s, adam);
  s.boolean("use_8bit_adam", false, "not supported (true is an error)");
  s.boolean("use_came", false, "not supported (true is an error)");

  s.group("Noise and loss");
  s.boolean("enable_noisy_training", false, "train on flow-matching-noised latents");
  s.choice("noise_sample_mode", {"scheduler", "uniform"}, "scheduler", "how σ is drawn");
  s.integer("noise_num_inference_steps", 50, "size of the scheduler σ pool")
      .min("noise_num_inference_steps", 1)
      .max("noise_num_inference_steps", 10000);
  s.real("noise_shift", nullptr, "scheduler shift (default: the model YAML's, else 5.0)")
      .min("noise_shift", 0)
      .max("noise_shift", 100);
  s.list("noise_step_range", OptType::Int, nullptr, "slice [a, b) of the σ pool")
      .min("noise_step_range", 0)
      .max("noise_step_range", 1000000);
  s.real("noise_sigma_max", 0.25, "uniform mode: largest σ").min("noise_sigma_max", 0).max("noise_sigma_max", 1);
  s.real("noise_sigma_min", 0.0, "uniform mode: smallest σ").min("noise_sigma_min", 0).max("noise_sigma_min", 1);
  s.boolean("enable_pixel_loss", false, "loss on decoded pixels instead of latents");
  s.real("pixel_loss_weight", 1.0, "weight of the pixel loss")
      .min("pixel_loss_weight", 0)
      .max("pixel_loss_weight", 1e6);

  s.group("Validation");
  s.list("validation_paths", OptType::Path, json::array(), "videos upsampled at validation");
  s.integer("validation_steps", 2000, "validate every N steps")
      .min("validation_steps", 1)
      .max("validation_steps", 1000000000);
  s.integer("validation_epochs", 5, "validate every N epochs")
      .min("validation_epochs", 1)
      .max("validation_epochs", 1000000);

  s.group("Compatibility (accepted, no effect)");
  s.boolean("use_deepspeed", false, "not supported (true is an error)");
  s.boolean("use_fsdp", false, "not supported (true is an error)");
  s.string("revision", nullptr, "Hugging Face hub option; no effect");
  s.string("variant", nullptr, "Hugging Face hub option; no effect");
  s.path("cache_dir", nullptr, "Hugging Face hub option; no effect");
  s.string("non_ema_revision", nullptr, "Hugging Face hub option; no effect");
  s.string("tracker_project_name", nullptr, "no effect");
  s.boolean("report_model_info", false, "no effect");
  s.boolean("multi_stream", false, "no effect");
  s.boolean("save_state", false, "no effect (state is always saved)");
  s.integer("local_rank", nullptr, "no effect (LOCAL_RANK from the environment wins)")
      .min("local_rank", -1)
      .max("local_rank", 65535);
  return s;
}

}  // namespace ws::train
