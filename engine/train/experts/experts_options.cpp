// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_options.h"

#include "train/lr_schedule.h"
#include "train/run_options.h"

namespace ws::train {
using io::json;
using io::OptType;

io::OptionSchema experts_option_schema() {
  io::OptionSchema s = io::OptionSchema::for_job("experts");

  s.group("Model");
  s.path("config_path", nullptr, "VideoX-Fun model YAML (transformer_additional_kwargs, scheduler_kwargs, vae_kwargs)");
  s.path("pretrained_model_name_or_path", nullptr, "model folder: the VAE and the experts' subfolders");
  s.path("vae_path", nullptr, "VAE weights (.pth or .safetensors); replaces the pretrained VAE");
  s.choice("vae_type", {"auto", "wan2.1", "wan2.2"}, "auto",
           "which VAE: auto (the model YAML's vae_kwargs.vae_type, else the weights decide); wan2.1 for the A14B "
           "experts (16 channels), wan2.2 for TI2V-5B (48)");
  s.path("high_noise_model_path", nullptr,
         "high-noise expert: model folder or weights file (default: the model YAML's subpath)");
  s.path("low_noise_model_path", nullptr,
         "low-noise expert: model folder or weights file (default: the model YAML's subpath)");
  s.path("transformer_config", nullptr, "config.json or YAML with WanModel keys: build fresh experts (no weights)");
  s.choice("fp8", {"none", "e4m3"}, "none",
           "LoRA on pretrained experts: the frozen base's block Linears kept as 1-byte e4m3 codes");

  s.group("Data");
  s.path("train_data_meta", nullptr, "metadata.json of the dataset").required("train_data_meta");
  s.path("train_data_dir", nullptr, "folder that file_path entries are relative to (default: the metadata's folder)");
  s.string("demo_data", nullptr, "'auto': write the demo dataset and synthetic text embeddings when missing");
  s.path("text_embeddings_dir", nullptr,
         "cached text conditioning: <sha256 of text>.safetensors with `context` [L, text_dim]")
      .required("text_embeddings_dir");
  s.path("text_encoder_path", nullptr,
         "UMT5 checkpoint (models_t5_umt5-xxl-enc-bf16.pth): captions whose embedding is missing are encoded before "
         "the first step, then the encoder is freed");
  s.path("tokenizer_path", nullptr,
         "the UMT5 tokenizer: spiece.model or the google/umt5-xxl folder (with text_encoder_path)");
  s.choice("text_encoder_dtype", {"fp32", "bf16"}, "fp32", "precision of the caption encoding (Wan runs bf16)");
  s.path("latent_cache_dir", nullptr,
         "cached latents (computed on first use); without it latents are encoded each step");
  add_clip_sampling_options(s, {512, 32, "sample edge S (bucket sizes scale with it)"});
  s.group("Routing");
  s.real("boundary_ratio", nullptr,
         "high expert for t ≥ round(ratio·1000) (default: the model YAML's boundary, else 0.875)")
      .min("boundary_ratio", 0)
      .max("boundary_ratio", 1);
  s.choice("routing_mode", {"uniform", "shift_consistent"}, "uniform",
           "uniform t (Mode A) or shifted t routed on the shifted value (Mode B)");
  s.real("shift", nullptr, "Mode B shift (default: the model YAML's scheduler_kwargs.shift, else 12.0)")
      .min("shift", 0)
      .max("shift", 100);
  s.choice("timestep_weighting", {"none", "bsmntw"}, "none", "loss weight per timestep (bsmntw: the 1000-entry table)");

  s.group("Training");
  RunOptionTexts run;
  run.output_dir = "output_dir_wan_experts";
  run.output_dir_help = "run folder (checkpoints, logs, events)";
  run.max_steps_help = "total optimizer steps (both experts)";
  run.checkpointing_help = "save every N global steps";
  run.keep_best_help = "also keep the checkpoint with the lowest eval loss (eval_data_meta)";
  add_run_options(s, run);
  s.boolean("gradient_checkpointing", true, "recompute each block's activations in backward");
  s.boolean("gradient_checkpointing_offload", false,
            "keep each block's input (what checkpointing holds per block) in host memory until backward needs it "
            "(needs gradient_checkpointing)");
  s.boolean("gradient_checkpointing_parts", false,
            "in backward, recompute each block's self-attention, cross-attention and FFN apart, so one part's "
            "activations live at a time; costs one more forward of each part (needs gradient_checkpointing)");
  s.choice("mixed_precision", {"no", "fp16", "bf16"}, "bf16", "bf16 on GPU builds; fp32 with a warning on CPU");
  s.boolean("low_vram", true, "keep the idle expert on the CPU (GPU builds)");
  s.integer("blocks_to_swap", 0,
            "the last N blocks of each expert wait in host memory and are copied onto the device just before they "
            "run, the next one's copy overlapping this one's compute (needs gradient_checkpointing)")
      .min("blocks_to_swap", 0)
      .max("blocks_to_swap", 1000);
  s.boolean("overlap_vae_encode", false,
            "take and encode the next micro-batch while the experts train on this one (the VAE and the experts then "
            "share the cores or the GPU)");
  s.choice("zero_stage", {"0", "2"}, "0",
           "data parallel: 2 shards each expert's gradients and AdamW moments across the ranks (ZeRO stage 2)");
  s.choice("weight_dtype", {"fp32", "bf16"}, "fp32",
           "full fine-tuning: bf16 stores the block Linears in bf16 and trains fp32 master copies, which zero_stage 2 "
           "shards across the ranks with the moments");
  s.choice("report_to", {"tensorboard", "none"}, "tensorboard", "scalar logging");

  s.group("Optimizer");
  s.real("learning_rate", 2e-5, "peak learning rate of both experts").min("learning_rate", 0).max("learning_rate", 10);
  s.real("learning_rate_high", nullptr, "high-noise expert's learning rate (default learning_rate)")
      .min("learning_rate_high", 0)
      .max("learning_rate_high", 10);
  s.real("learning_rate_low", nullptr, "low-noise expert's learning rate (default learning_rate)")
      .min("learning_rate_low", 0)
      .max("learning_rate_low", 10);
  s.choice("lr_scheduler", lr_schedule_names(), "constant_with_warmup", "learning-rate schedule (per expert)");
  s.integer("lr_warmup_steps", 100, "warmup steps").min("lr_warmup_steps", 0).max("lr_warmup_steps", 1000000000);
  s.integer("lr_warmup_steps_high", nullptr, "high expert's warmup (default lr_warmup_steps)")
      .min("lr_warmup_steps_high", 0)
      .max("lr_warmup_steps_high", 1000000000);
  s.integer("lr_warmup_steps_low", nullptr, "low expert's warmup (default lr_warmup_steps)")
      .min("lr_warmup_steps_low", 0)
      .max("lr_warmup_steps_low", 1000000000);
  s.choice("lr_schedule_basis", {"expert_steps", "global_steps"}, "expert_steps", "what the schedule counts");
  AdamDefaults adam;
  adam.damping_help = "expert step after which abnormal gradient norms are damped";
  add_adamw_options(s, adam);

  s.group("LoRA");
  s.boolean("lora", false, "train LoRA adapters on both experts; the base weights stay frozen");
  s.integer("lora_rank", 32, "adapter rank r").min("lora_rank", 1).max("lora_rank", 4096);
  s.integer("lora_rank_high", nullptr, "high-noise expert's rank (default lora_rank)")
      .min("lora_rank_high", 1)
      .max("lora_rank_high", 4096);
  s.integer("lora_rank_low", nullptr, "low-noise expert's rank (default lora_rank)")
      .min("lora_rank_low", 1)
      .max("lora_rank_low", 4096);
  s.real("lora_alpha", nullptr, "alpha; the adapter is scaled by alpha/r (default: the rank, scale 1)")
      .min("lora_alpha", 0)
      .max("lora_alpha", 1e6);
  s.real("lora_alpha_high", nullptr, "high-noise expert's alpha (default lora_alpha)")
      .min("lora_alpha_high", 0)
      .max("lora_alpha_high", 1e6);
  s.real("lora_alpha_low", nullptr, "low-noise expert's alpha (default lora_alpha)")
      .min("lora_alpha_low", 0)
      .max("lora_alpha_low", 1e6);
  s.real("lora_dropout", 0.0, "dropout on the rank-r activations while training")
      .min("lora_dropout", 0)
      .max("lora_dropout", 0.99);
  s.real("lora_dropout_high", nullptr, "high-noise expert's dropout (default lora_dropout)")
      .min("lora_dropout_high", 0)
      .max("lora_dropout_high", 0.99);
  s.real("lora_dropout_low", nullptr, "low-noise expert's dropout (default lora_dropout)")
      .min("lora_dropout_low", 0)
      .max("lora_dropout_low", 0.99);
  s.list("lora_target_modules", OptType::String, json::array(),
         "block Linears with adapters: self_attn.q/k/v/o, cross_attn.q/k/v/o, ffn.0, ffn.2 (none: all ten)");
  s.choice("lora_base_dtype", {"bf16", "fp32"}, "bf16", "storage of the frozen block Linear weights");

  s.group("Eval");
  s.path("eval_data_meta", nullptr, "metadata.json of the fixed eval set (none: no eval)");
  s.integer("eval_steps", 500, "eval every N global steps").min("eval_steps", 1).max("eval_steps", 1000000000);
  s.list("eval_timesteps", OptType::Int, json::array({125, 250, 375, 500, 625, 750, 875, 900, 937, 975}),
         "row j gets eval_timesteps[j mod len]")
      .min("eval_timesteps", 0)
      .max("eval_timesteps", 1000);
  s.integer("eval_max_samples_per_t", 60, "rows kept per timestep")
      .min("eval_max_samples_per_t", 1)
      .max("eval_max_samples_per_t", 1000000);
  s.integer("eval_seed", nullptr, "seed of the eval noise (default seed)")
      .min("eval_seed", 0)
      .max("eval_seed", 9007199254740991.0);

  s.group("Validation");
  s.list("validation_prompts", OptType::String, json::array(),
         "prompts rendered with both experts at validation (none: no videos); embeddings as for captions");
  s.list("validation_prompt_embeddings", OptType::Path, json::array(), "prompts as embedding files instead of texts");
  s.path("validation_prompts_file", nullptr,
         "more validation prompts: one per line, or a JSON list of prompts or objects (prompt or prompt_embedding, "
         "seed, size, frame_num, image), after validation_prompts and validation_prompt_embeddings");
  s.list("validation_images", OptType::String, json::array(),
         "one start image per validation prompt (i2v needs them, ti2v may have them): a picture, a video (its first "
         "frame), an image_latent .safetensors, or row:N (the first frame of train_data_meta's row N)");
  s.string("validation_negative_prompt", "", "negative prompt (empty: Wan's default)");
  s.integer("validation_steps", 500, "render after every N global steps, and after the last")
      .min("validation_steps", 1)
      .max("validation_steps", 1000000000);
  s.boolean("validation_at_start", true, "also render before the first update (the baseline)");
  s.choice("validation_mode", {"preview", "full"}, "preview",
           "preview: 12 steps, 256x256, 17 frames; full: the preset's");
  s.string("validation_size", nullptr, "video size WxH (default: the mode's)");
  s.integer("validation_frames", nullptr, "frames, 4k+1 (default: the mode's)")
      .shape("validation_frames", contract::frames_rule())
      .min("validation_frames", 1)
      .max("validation_frames", 4001);
  s.integer("validation_sample_steps", nullptr, "denoising steps (default: the mode's)")
      .min("validation_sample_steps", 1)
      .max("validation_sample_steps", 1000);
  s.choice("validation_sample_solver", {"unipc", "dpm++"}, "unipc", "solver");
  s.real("validation_sample_shift", nullptr, "schedule shift (default: the model YAML's, else the preset's)")
      .min("validation_sample_shift", 0)
      .max("validation_sample_shift", 100);
  s.list("validation_guide_scale", OptType::Float, json::array(),
         "guidance: one scale, or low and high (default: the preset's)")
      .min("validation_guide_scale", 0)
      .max("validation_guide_scale", 100);
  s.integer("validation_seed", nullptr, "prompt i renders from noise seed validation_seed + i (default seed)")
      .min("validation_seed", 0)
      .max("validation_seed", 9007199254740991.0);
  return s;
}

}  // namespace ws::train
