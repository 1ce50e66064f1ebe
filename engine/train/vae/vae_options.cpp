// SPDX-License-Identifier: Apache-2.0
#include "train/vae/vae_options.h"

#include "train/lr_schedule.h"
#include "train/run_options.h"

namespace ws::train {

io::OptionSchema vae_option_schema() {
  io::OptionSchema s = io::OptionSchema::for_job("vae");
  s.about(
      "Trains a Wan2.2 VAE of the released architecture (default: the tiny widths dim 4, dec_dim 6) on square\n"
      "crops of a dataset's clips: loss mean((decode(z) - x)^2) + kl_weight * KL with z sampled in the\n"
      "un-normalised latent space (docs/design/wan22-vae.md §12). Writes events, checkpoints and the final\n"
      "weights (save_path, loadable by every VAE option).");

  s.group("Model");
  s.path("config_path", nullptr,
         "VAE widths YAML (WanVAE_ keys or a VideoX-Fun vae_kwargs); default: the tiny widths dim 4, dec_dim 6");
  s.path("vae_path", nullptr, "warm start: VAE weights (.safetensors or .pth), loaded strictly");

  s.group("Data");
  s.path("train_data_meta", nullptr, "metadata.json of the dataset").required("train_data_meta");
  s.path("train_data_dir", nullptr, "folder that file_path entries are relative to (default: the metadata's folder)");
  s.string("demo_data", nullptr,
           "'auto': write the built-in demo dataset at train_data_dir when train_data_meta is missing");
  s.integer("video_sample_size", 256, "square crop edge, a multiple of 16")
      .max("video_sample_size", 4096)
      .shape("video_sample_size", contract::pixels_rule());
  s.integer("random_crop_size", nullptr,
            "train on random square crops of this edge (a multiple of 16) out of the video_sample_size frames: content "
            "at the scale of video_sample_size for less compute")
      .max("random_crop_size", 4096)
      .shape("random_crop_size", contract::pixels_rule());
  s.integer("video_sample_n_frames", 9, "frames per clip, 4k+1")
      .max("video_sample_n_frames", 1025)
      .shape("video_sample_n_frames", contract::frames_rule());
  s.integer("video_sample_stride", 2, "frame stride").min("video_sample_stride", 1).max("video_sample_stride", 1000);
  s.integer("train_batch_size", 2, "clips per optimizer step").min("train_batch_size", 1).max("train_batch_size", 1024);

  s.group("Training");
  s.path("output_dir", "output_dir_wan_vae", "run folder (checkpoints, logs, events)");
  s.path("save_path", nullptr, "where the final weights go (default <output_dir>/vae.safetensors)");
  s.integer("seed", 42, "seed of every random stream (initialisation, clips, noise)")
      .min("seed", 0)
      .max("seed", 9007199254740991.0);
  s.integer("max_train_steps", 1000, "total optimizer steps")
      .min("max_train_steps", 1)
      .max("max_train_steps", 1000000000);
  s.integer("checkpointing_steps", 500, "save a checkpoint every N steps")
      .min("checkpointing_steps", 1)
      .max("checkpointing_steps", 1000000000);
  s.integer("checkpoints_total_limit", 3, "keep at most N checkpoints")
      .min("checkpoints_total_limit", 1)
      .max("checkpoints_total_limit", 1000000);
  s.string("resume_from_checkpoint", nullptr, "'latest' or a checkpoint folder");
  s.boolean("overwrite_output_dir", false,
            "start a new run in an output_dir that holds another run (removes its checkpoints and events)");
  s.real("kl_weight", 1e-6, "weight of the KL term").min("kl_weight", 0).max("kl_weight", 1e6);

  s.group("Optimizer");
  s.real("learning_rate", 5e-4, "peak learning rate").min("learning_rate", 0).max("learning_rate", 10);
  s.choice("lr_scheduler", lr_schedule_names(), "constant_with_warmup", "learning-rate schedule");
  s.integer("lr_warmup_steps", 20, "warmup steps").min("lr_warmup_steps", 0).max("lr_warmup_steps", 1000000000);
  AdamDefaults adam;
  adam.weight_decay = 1e-2;
  adam.epsilon = 1e-8;
  adam.max_grad_norm = 1.0;
  adam.clip_help = "clip the global gradient norm (≤ 0: no clipping)";
  add_adamw_options(s, adam);
  return s;
}

}  // namespace ws::train
