// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_setup.h"
#include "train/run_setup.h"

#include "core/error.h"
#include "models/wan_vae.h"
#include "core/fs.h"
#include "dataset/buckets.h"
#include "data/demo_data.h"
#include "io/model_yaml.h"
#include "runtime/run_dir.h"
#include "train/training_verb.h"

namespace ws::train {

using json = nlohmann::json;

json maths_options(const io::Config& cfg) {
  static const char* keys[] = {"config_path",
                               "pretrained_model_name_or_path",
                               "vae_path",
                               "latent_upsampler_path",
                               "trainable_modules",
                               "trainable_modules_low_learning_rate",
                               "train_data_meta",
                               "train_data_dir",
                               "video_sample_size",
                               "video_sample_stride",
                               "video_sample_n_frames",
                               "train_batch_size",
                               "enable_bucket",
                               "random_hw_adapt",
                               "enable_degradation",
                               "degradation_ops_range",
                               "gradient_accumulation_steps",
                               "learning_rate",
                               "scale_lr",
                               "lr_scheduler",
                               "lr_warmup_steps",
                               "adam_beta1",
                               "adam_beta2",
                               "adam_weight_decay",
                               "adam_epsilon",
                               "max_grad_norm",
                               "abnormal_norm_clip_start",
                               "initial_grad_norm_ratio",
                               "use_ema",
                               "enable_noisy_training",
                               "noise_sample_mode",
                               "noise_num_inference_steps",
                               "noise_shift",
                               "noise_step_range",
                               "noise_sigma_max",
                               "noise_sigma_min",
                               "enable_pixel_loss",
                               "pixel_loss_weight",
                               "seed"};
  json j = json::object();
  for (const char* k : keys) j[k] = cfg.value(k);
  add_frame_extraction_maths(cfg, j);
  return j;
}

double upsampler_spatial_scale(const io::Config& cfg) {
  if (!cfg.is_set("config_path")) return 1.5;
  auto kw = io::read_model_yaml(cfg.str("config_path")).section("latent_upsampler_kwargs");
  if (!kw.contains("rational_spatial_scale")) return 1.5;
  if (!kw["rational_spatial_scale"].is_number())
    throw Error(cfg.str("config_path") + ": latent_upsampler_kwargs.rational_spatial_scale must be a number");
  return kw["rational_spatial_scale"].get<double>();
}

UpsamplerSetup resolve_upsampler_setup(io::Config& cfg) {
  UpsamplerSetup s;
  s.run = parse_run_options(cfg);
  s.data = parse_data_options(cfg);
  s.optimizer = parse_optimizer_options(cfg);
  s.trainable_modules = cfg.strs("trainable_modules");
  s.trainable_modules_low_learning_rate = cfg.strs("trainable_modules_low_learning_rate");
  s.use_ema = cfg.boolean("use_ema");
  s.degradation = cfg.boolean("enable_degradation");
  s.pixel_loss = cfg.boolean("enable_pixel_loss");
  s.pixel_loss_weight = cfg.real("pixel_loss_weight");
  s.vae_mini_batch = cfg.integer("vae_mini_batch");
  if (cfg.boolean("cache_latents"))
    s.latent_cache_dir = cfg.opt_str("latent_cache_dir").value_or(fs::join(s.run.output_dir, "latent_cache"));
  // The pixel loss decodes through the VAE inside the step, so it never encodes ahead.
  s.overlap_vae_encode = cfg.boolean("overlap_vae_encode") && !s.pixel_loss;
  s.winograd_convs = cfg.boolean("winograd_convs");
  s.validation_steps = cfg.integer("validation_steps");
  s.validation_epochs = cfg.integer("validation_epochs");
  s.maths = maths_options(cfg);

  // Options that exist only for compatibility (docs/design/upsampler-training.md §2.1).
  for (const char* k : {"use_8bit_adam", "use_came", "use_deepspeed", "use_fsdp"})
    if (cfg.boolean(k)) cfg.error(k, "not supported yet (set it to false)");
  if (cfg.str("mixed_precision") == "fp16")
    cfg.error("mixed_precision", "fp16 needs a gradient scaler, which is not ported: use bf16 or no");
  std::vector<std::string> inert;
  for (const char* k : {"max_train_samples", "revision", "variant", "cache_dir", "non_ema_revision",
                        "tracker_project_name", "local_rank"})
    if (cfg.is_set(k)) inert.push_back(k);
  for (const char* k : {"random_ratio_crop", "report_model_info", "multi_stream", "save_state"})
    if (cfg.boolean(k)) inert.push_back(k);
  if (cfg.integer("video_repeat") != 0) inert.push_back("video_repeat");
  if (!inert.empty()) {
    std::string list;
    for (const auto& k : inert) list += (list.empty() ? "" : ", ") + k;
    s.warnings.push_back("accepted for compatibility with train_upsampler.py, no effect: " + list);
  }

  // Model YAML.
  json kw = json::object();
  std::optional<double> yaml_shift;
  if (cfg.is_set("config_path")) {
    try {
      io::ModelYaml y = io::read_model_yaml(cfg.str("config_path"));
      kw = y.section("latent_upsampler_kwargs");
      s.vae_config = y.section("vae_kwargs");
      json sched = y.section("scheduler_kwargs");
      if (sched.contains("shift")) {
        if (!sched["shift"].is_number()) throw Error(y.path + ": scheduler_kwargs.shift must be a number");
        yaml_shift = sched["shift"].get<double>();
      }
    } catch (const Error& e) {
      cfg.error("config_path", e.what());
    }
  }
  try {
    s.model = models::LatentUpsamplerConfig::from_json(kw.is_object() ? kw : json::object(), "latent_upsampler_kwargs");
    s.model.validate();
  } catch (const Error& e) {
    cfg.error("config_path", e.what());
  }
  s.noise_shift = cfg.opt_real("noise_shift").value_or(yaml_shift.value_or(5.0));

  // Data.
  check_data_options(cfg, s.data);
  const int64_t A = dataset::bucket_alignment(s.model.rational_spatial_scale);
  if (cfg.integer("video_sample_size") < A)
    cfg.error("video_sample_size", "must be at least " + std::to_string(A) + " (the bucket alignment at scale " +
                                       std::to_string(s.model.rational_spatial_scale) + ")");
  auto range = cfg.integers("degradation_ops_range");
  if (range.size() != 2 || range[0] < 1 || range[0] > range[1])
    cfg.error("degradation_ops_range", "needs two integers 1 ≤ min ≤ max");
  else s.degradation_range = std::make_pair(range[0], range[1]);

  // VAE: its latent channels are the upsampler's (docs/design/wan21-vae.md §7).
  if (cfg.str("vae_type") != "auto") s.vae_config["vae_type"] = cfg.str("vae_type");
  s.vae_file = resolve_vae_file(cfg, s.vae_config);
  if (!s.vae_file.empty() && fs::exists(s.vae_file)) {
    try {
      const auto vc = models::WanVae::resolve_config(s.vae_file, s.vae_config);
      if (vc.z_dim != s.model.in_channels)
        cfg.error(cfg.is_set("vae_path") ? "vae_path" : "config_path",
                  "the " + std::string(models::vae_type_name(vc.type)) + " VAE (" + fs::basename(s.vae_file) +
                      ") has " + std::to_string(vc.z_dim) + " latent channels, the upsampler's in_channels is " +
                      std::to_string(s.model.in_channels) +
                      (vc.wan21() ? " (upsampler training runs on Wan2.2 VAE latents)" : ""));
      else if (vc.wan21())
        cfg.error("vae_path", "upsampler training runs on Wan2.2 VAE latents (48 channels); this is a Wan2.1 VAE");
      if (cfg.str("vae_type") == "auto")
        cfg.set("vae_type", models::vae_type_name(vc.type), "detected from the VAE weights");
    } catch (const Error& e) {
      cfg.error(cfg.is_set("vae_path") ? "vae_path" : "vae_type", e.what());
    }
  }
  if (cfg.is_set("latent_upsampler_path")) {
    s.warm_start = cfg.str("latent_upsampler_path");
    if (!fs::exists(*s.warm_start)) cfg.error("latent_upsampler_path", "not found: " + *s.warm_start);
  }

  // Optimisation.
  if (cfg.str("lr_scheduler") == "polynomial" && cfg.real("learning_rate") <= 1e-7)
    cfg.error("learning_rate", "the polynomial schedule needs learning_rate > 1e-7 (its lr_end)");

  // Noise.
  std::optional<std::pair<int64_t, int64_t>> step_range;
  if (auto r = cfg.integers("noise_step_range"); !r.empty()) {
    if (r.size() != 2) cfg.error("noise_step_range", "needs two integers a b (the slice [a, b) of the σ pool)");
    else step_range = std::make_pair(r[0], r[1]);
  }
  try {
    s.noise = make_noise_options(cfg.boolean("enable_noisy_training"), cfg.str("noise_sample_mode"),
                                 cfg.integer("noise_num_inference_steps"), s.noise_shift, step_range,
                                 cfg.real("noise_sigma_min"), cfg.real("noise_sigma_max"));
  } catch (const Error& e) {
    cfg.add_error(e.what());
  }
  if (cfg.boolean("enable_noisy_training") && cfg.boolean("enable_pixel_loss"))
    s.warnings.push_back(
        "enable_pixel_loss with enable_noisy_training: the prediction targets the noisy latent but is scored against "
        "clean pixels");

  // The pixel loss decodes through the VAE inside the step: nothing else may use it meanwhile.
  if (!cfg.is_default("overlap_vae_encode") && cfg.boolean("overlap_vae_encode") && cfg.boolean("enable_pixel_loss"))
    cfg.error("overlap_vae_encode", "cannot be used with enable_pixel_loss (its decode needs the VAE during the step)");

  // Latent cache (docs/design/upsampler-training.md §6.1): only when a clip always gives the same latents.
  if (cfg.boolean("cache_latents")) {
    if (cfg.boolean("enable_degradation"))
      cfg.error("cache_latents", "cannot be used with enable_degradation (every epoch degrades differently)");
    if (cfg.boolean("random_hw_adapt") && dataset::hw_adapt_choices(cfg.integer("video_sample_size")).first.size() > 1)
      cfg.error("cache_latents",
                "cannot be used with random_hw_adapt at video_sample_size ≥ 768 (sizes change per batch)");
  }

  // Resume.
  if (cfg.is_set("resume_from_checkpoint")) {
    std::string warning, error;
    s.resume_dir = find_resume_checkpoint(cfg.str("resume_from_checkpoint"), s.run.output_dir, &warning, &error);
    if (!warning.empty()) s.warnings.push_back(warning);
    if (!error.empty()) cfg.error("resume_from_checkpoint", error);
  }
  check_output_dir_free(cfg, s.run);
  check_batch_fits(cfg, s.data);

  // Validation videos: a missing one is skipped with a warning, as in the reference.
  for (const auto& p : cfg.strs("validation_paths")) {
    if (fs::exists(p)) s.validation_paths.push_back(p);
    else s.warnings.push_back("validation video not found, skipped: " + p);
  }
  if (s.run.keep_best && cfg.strs("validation_paths").empty())
    cfg.error("keep_best", "ranks checkpoints by their validation PSNR: set validation_paths");
  return s;
}

}  // namespace ws::train
