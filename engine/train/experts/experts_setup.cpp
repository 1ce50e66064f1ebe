// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_setup.h"
#include "train/experts/experts_validation_setup.h"

#include <torch/cuda.h>

#include <algorithm>

#include "core/error.h"
#include "core/fs.h"
#include "data/clip_loader.h"
#include "dataset/metadata.h"
#include "io/model_yaml.h"
#include "models/wan_vae.h"
#include "sampling/flow_schedule.h"
#include "train/experts/sample_render.h"
#include "train/experts/expert_conditioning.h"
#include "train/experts/text_embeddings.h"
#include "train/training_verb.h"
#include "train/run_setup.h"

namespace ws::train {

using json = nlohmann::json;

json experts_maths_options(const io::Config& cfg) {
  static const char* keys[] = {"config_path",
                               "pretrained_model_name_or_path",
                               "vae_path",
                               "high_noise_model_path",
                               "low_noise_model_path",
                               "transformer_config",
                               "fp8",
                               "train_data_meta",
                               "train_data_dir",
                               "text_embeddings_dir",
                               "video_sample_size",
                               "video_sample_stride",
                               "video_sample_n_frames",
                               "train_batch_size",
                               "enable_bucket",
                               "random_hw_adapt",
                               "boundary_ratio",
                               "routing_mode",
                               "shift",
                               "timestep_weighting",
                               "seed",
                               "gradient_accumulation_steps",
                               "learning_rate",
                               "learning_rate_high",
                               "learning_rate_low",
                               "lr_scheduler",
                               "lr_warmup_steps",
                               "lr_warmup_steps_high",
                               "lr_warmup_steps_low",
                               "lr_schedule_basis",
                               "adam_beta1",
                               "adam_beta2",
                               "adam_weight_decay",
                               "adam_epsilon",
                               "max_grad_norm",
                               "abnormal_norm_clip_start",
                               "initial_grad_norm_ratio",
                               "lora",
                               "lora_rank",
                               "lora_rank_high",
                               "lora_rank_low",
                               "lora_alpha",
                               "lora_alpha_high",
                               "lora_alpha_low",
                               "lora_dropout",
                               "lora_dropout_high",
                               "lora_dropout_low",
                               "lora_target_modules",
                               "lora_base_dtype",
                               "weight_dtype"};
  json j = json::object();
  for (const char* k : keys) j[k] = cfg.value(k);
  add_frame_extraction_maths(cfg, j);
  return j;
}

namespace {

// A model folder (config.json inside) or a weights file with config.json beside it; else the
// transformer_config.
models::WanConfig source_config(const std::string& path, const std::optional<models::WanConfig>& fallback) {
  const std::string dir = fs::is_dir(path) ? path : fs::dirname(path);
  const std::string cj = fs::join(dir, "config.json");
  if (fs::exists(cj)) return models::load_wan_config(cj);
  if (fallback) return *fallback;
  throw Error(path + ": no config.json beside the expert's weights (or set transformer_config)");
}

// Every row needs its embedding; with demo_data auto the missing ones are made up.
void check_text_embeddings(io::Config& cfg, ExpertsSetup& s, const std::string& meta_path, int64_t text_len,
                           int64_t text_dim, const char* option) {
  dataset::Metadata meta;
  try {
    meta = dataset::read_metadata(meta_path, s.data.dir);
  } catch (const Error& e) {
    cfg.error(option, e.what());
    return;
  }
  const bool demo = cfg.opt_str("demo_data").value_or("") == "auto";
  std::vector<std::string> missing;
  size_t written = 0;
  for (size_t i = 0; i < meta.rows.size(); ++i) {
    const auto& row = meta.rows[i];
    const std::string p = text_embedding_path(s.text_dir, meta, row);
    if (fs::exists(p)) continue;
    if (demo && fs::is_inside(s.text_dir, p)) {
      write_synthetic_text_embedding(p, row.text, text_len, text_dim);
      ++written;
    } else if (demo) {
      // A row's own text_embedding_path may point anywhere: made-up files go only where the
      // config said embeddings live.
      missing.push_back("row " + std::to_string(i) + " (" + p + ", outside text_embeddings_dir " + s.text_dir +
                        ", so demo_data auto does not write it)");
    } else {
      missing.push_back("row " + std::to_string(i) + " (" + p + ")");
    }
  }
  if (written)
    s.warnings.push_back("demo_data auto: wrote " + std::to_string(written) + " synthetic text embeddings in " +
                         s.text_dir);
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < std::min<size_t>(3, missing.size()); ++i) list += (i ? ", " : "") + missing[i];
    cfg.error("text_embeddings_dir", std::to_string(missing.size()) + " of " + std::to_string(meta.rows.size()) +
                                         " rows of " + meta_path + " have no text embedding, first: " + list);
  }
}

// Whether every row of a metadata.json names its own latent file (unreadable: false, the
// metadata's own error is reported elsewhere).
bool every_row_has_latents(const std::string& meta_path, const std::string& data_dir) {
  try {
    dataset::Metadata meta = dataset::read_metadata(meta_path, data_dir);
    for (const auto& row : meta.rows)
      if (data::row_latent_path(meta, row).empty()) return false;
    return !meta.rows.empty();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

ExpertsSetup resolve_experts_setup(io::Config& cfg) {
  ExpertsSetup s;
  s.run = parse_run_options(cfg);
  s.data = parse_data_options(cfg);
  s.optimizer = parse_optimizer_options(cfg);
  s.schedule_on_expert_steps = cfg.str("lr_schedule_basis") == "expert_steps";
  s.bsmntw = cfg.str("timestep_weighting") == "bsmntw";
  s.fp8 = cfg.str("fp8") == "e4m3";
  s.zero2 = cfg.str("zero_stage") == "2";
  s.eval_timesteps = cfg.integers("eval_timesteps");
  s.eval_max_samples_per_t = cfg.integer("eval_max_samples_per_t");
  s.eval_steps = cfg.integer("eval_steps");

  // Model YAML.
  json tak = json::object(), sched = json::object();
  if (cfg.is_set("config_path")) {
    try {
      io::ModelYaml y = io::read_model_yaml(cfg.str("config_path"));
      tak = y.section("transformer_additional_kwargs");
      sched = y.section("scheduler_kwargs");
      s.vae_config = y.section("vae_kwargs");
      if (tak.contains("boundary") && !tak["boundary"].is_number())
        throw Error(y.path + ": transformer_additional_kwargs.boundary must be a number");
      if (sched.contains("shift") && !sched["shift"].is_number())
        throw Error(y.path + ": scheduler_kwargs.shift must be a number");
    } catch (const Error& e) {
      cfg.error("config_path", e.what());
      tak = sched = json::object();
    }
  }

  // Routing.
  s.routing.boundary_ratio = cfg.opt_real("boundary_ratio").value_or(tak.value("boundary", 0.875));
  s.routing.mode = cfg.str("routing_mode");
  s.routing.shift = cfg.opt_real("shift").value_or(sched.value("shift", 12.0));
  // run.yaml records the values really used (docs/design/architecture.md "Run directory").
  if (!cfg.is_set("boundary_ratio"))
    cfg.set("boundary_ratio", s.routing.boundary_ratio, tak.contains("boundary") ? "model YAML boundary" : "default");
  if (!cfg.is_set("shift"))
    cfg.set("shift", s.routing.shift, sched.contains("shift") ? "model YAML scheduler_kwargs.shift" : "default");
  try {
    s.routing.validate();
  } catch (const Error& e) {
    cfg.error(cfg.is_set("boundary_ratio") ? "boundary_ratio" : "routing_mode", e.what());
  }

  // Experts: explicit paths, else the model YAML's subpaths under pretrained_model_name_or_path,
  // else fresh ones from transformer_config.
  std::optional<models::WanConfig> fresh;
  if (cfg.is_set("transformer_config")) {
    try {
      fresh = models::load_wan_config(cfg.str("transformer_config"));
      fresh->validate(cfg.str("transformer_config"));
    } catch (const Error& e) {
      cfg.error("transformer_config", e.what());
    }
  }
  bool have_model = true, models_ok = true;
  auto resolve_expert = [&](const char* option, const char* subkey, const char* default_sub, ExpertSource& out) {
    std::optional<std::string> path;
    if (cfg.is_set(option)) {
      path = cfg.str(option);
    } else if (cfg.is_set("pretrained_model_name_or_path") && !cfg.is_set("transformer_config")) {
      std::string sub = tak.contains(subkey) && tak[subkey].is_string() ? tak[subkey].get<std::string>() : default_sub;
      path = fs::join(cfg.str("pretrained_model_name_or_path"), sub);
    }
    try {
      if (path) {
        if (!fs::exists(*path)) throw Error("not found: " + *path);
        out.config = source_config(*path, fresh);
        out.config.validate(*path);
        out.weights = path;
      } else if (fresh) {
        out.config = *fresh;
      } else {
        have_model = false;
      }
    } catch (const Error& e) {
      cfg.error(option, e.what());
      models_ok = false;
    }
  };
  resolve_expert("high_noise_model_path", "transformer_high_noise_model_subpath", "high_noise_model", s.high);
  resolve_expert("low_noise_model_path", "transformer_low_noise_model_subpath", "low_noise_model", s.low);
  if (!have_model && !cfg.is_set("transformer_config"))
    cfg.add_error(
        "no experts: set transformer_config (fresh tiny experts), pretrained_model_name_or_path, or "
        "high_noise_model_path and low_noise_model_path");
  const models::WanConfig& mc = s.high.config;
  have_model = have_model && models_ok && (!cfg.is_set("transformer_config") || fresh);
  // Latent files made elsewhere (docs/design/dual-expert-training.md §9) free the run from the VAE: the way to train
  // 16-channel experts.
  s.all_latent_files = cfg.is_set("train_data_meta") && every_row_has_latents(cfg.str("train_data_meta"), s.data.dir) &&
                       (!cfg.is_set("eval_data_meta") || every_row_has_latents(cfg.str("eval_data_meta"), s.data.dir));
  if (have_model) {
    if (mc.model_type != s.low.config.model_type)
      cfg.add_error("the high expert is " + mc.model_type + ", the low one " + s.low.config.model_type +
                    ": both must have one model_type");
    if (mc.in_dim != s.low.config.in_dim || mc.out_dim != s.low.config.out_dim || mc.text_dim != s.low.config.text_dim)
      cfg.add_error("the high and low experts differ in in_dim/out_dim/text_dim");
    const int64_t want_in = expected_in_dim(image_conditioning(mc.model_type), mc.out_dim);
    if (mc.in_dim != want_in)
      cfg.add_error("a " + mc.model_type + " expert with out_dim " + std::to_string(mc.out_dim) + " needs in_dim " +
                    std::to_string(want_in) + (mc.model_type == "i2v" ? " (latent + 4 mask + image latent)" : "") +
                    ", got " + std::to_string(mc.in_dim));
  }

  if (cfg.str("mixed_precision") == "fp16")
    cfg.error("mixed_precision", "fp16 needs a gradient scaler, which is not ported: use bf16 or no");

  // Data.
  check_data_options(cfg, s.data);
  if (cfg.integer("video_sample_size") < 32)
    cfg.error("video_sample_size", "must be at least 32 (the bucket alignment)");
  if (cfg.is_set("latent_cache_dir")) {
    s.latent_cache_dir = cfg.str("latent_cache_dir");
    if (cfg.boolean("random_hw_adapt") && cfg.integer("video_sample_size") >= 768)
      cfg.error("latent_cache_dir",
                "cannot be used with random_hw_adapt at video_sample_size ≥ 768 (sizes change per batch)");
  }

  s.overlap_vae_encode = cfg.boolean("overlap_vae_encode");

  // Text embeddings (after the model: text_len and text_dim come from it).
  if (cfg.is_set("text_encoder_path")) {
    // Missing embeddings are encoded before the first step: the folder may be empty or new.
    TextEncoderOptions t;
    t.encoder_path = cfg.str("text_encoder_path");
    t.bf16 = cfg.str("text_encoder_dtype") == "bf16";
    if (!fs::exists(t.encoder_path)) cfg.error("text_encoder_path", "not found: " + t.encoder_path);
    if (!cfg.is_set("tokenizer_path")) {
      cfg.error("tokenizer_path", "required with text_encoder_path (spiece.model or the google/umt5-xxl folder)");
    } else {
      t.tokenizer_path = cfg.str("tokenizer_path");
      if (!fs::exists(t.tokenizer_path)) cfg.error("tokenizer_path", "not found: " + t.tokenizer_path);
    }
    if (have_model) t.text_len = mc.text_len;
    s.text_encoder = t;
  }
  if (cfg.is_set("text_embeddings_dir")) {
    s.text_dir = cfg.str("text_embeddings_dir");
    if (s.text_encoder) {
      // Checked and filled in by the trainer, with the encoder.
    } else if (!fs::is_dir(s.text_dir) && cfg.opt_str("demo_data").value_or("") != "auto")
      cfg.error("text_embeddings_dir", "folder not found: " + s.text_dir);
    else if (have_model && !s.data.meta.empty() && fs::exists(s.data.meta))
      check_text_embeddings(cfg, s, s.data.meta, mc.text_len, mc.text_dim, "train_data_meta");
  }

  // VAE: not needed when every row brings its latents (unless named, then it must exist). Its
  // type comes from the weights; vae_type (run, then vae_kwargs) must agree with them.
  if (cfg.str("vae_type") != "auto") s.vae_config["vae_type"] = cfg.str("vae_type");
  if (!s.all_latent_files || cfg.is_set("vae_path")) s.vae_file = resolve_vae_file(cfg, s.vae_config);
  std::string vae_name;
  if (!s.vae_file.empty() && fs::exists(s.vae_file)) {
    try {
      const auto vc = models::WanVae::resolve_config(s.vae_file, s.vae_config);
      vc.validate(s.vae_file);
      s.vae_z_dim = vc.z_dim;
      s.vae_spatial_factor = vc.spatial_factor();
      vae_name = vc.wan21() ? "the Wan2.1 VAE" : "the Wan2.2 VAE";
      if (cfg.str("vae_type") == "auto")
        cfg.set("vae_type", models::vae_type_name(vc.type), "detected from the VAE weights");
    } catch (const Error& e) {
      cfg.error(cfg.is_set("vae_path") ? "vae_path" : "vae_type", e.what());
    }
  }
  if (have_model && s.vae_z_dim > 0) {
    // docs/design/wan21-vae.md §7: the experts' latent channels are the VAE's z_dim.
    const auto cond = image_conditioning(mc.model_type);
    const int64_t z = s.vae_z_dim, want_in = expected_in_dim(cond, z);
    const std::string vae =
        vae_name + " (" + fs::basename(s.vae_file) + ") has " + std::to_string(z) + " latent channels";
    if (mc.out_dim != z)
      cfg.add_error(vae + ", but the experts' out_dim is " + std::to_string(mc.out_dim) +
                    (mc.out_dim == 16   ? ": the A14B experts need the Wan2.1 VAE (vae_type wan2.1)"
                     : mc.out_dim == 48 ? ": these experts need the Wan2.2 VAE (vae_type wan2.2)"
                                        : ""));
    else if (mc.in_dim != want_in)
      cfg.add_error(vae + ", so a " + mc.model_type + " expert needs in_dim " + std::to_string(want_in) + ", got " +
                    std::to_string(mc.in_dim));
  }

  resolve_validation(cfg, s, mc, sched, have_model);

  // Learning rates.
  for (const char* k : {"learning_rate", "learning_rate_high", "learning_rate_low"})
    if (cfg.str("lr_scheduler") == "polynomial" && cfg.opt_real(k).value_or(1.0) <= 1e-7)
      cfg.error(k, "the polynomial schedule needs a learning rate > 1e-7 (its lr_end)");

  // Eval.
  s.eval_seed = cfg.opt_integer("eval_seed").value_or(cfg.integer("seed"));
  if (!cfg.is_set("eval_seed")) cfg.set("eval_seed", s.eval_seed, "seed");
  for (const char* e : {"high", "low"}) {
    const std::string lr = std::string("learning_rate_") + e, warm = std::string("lr_warmup_steps_") + e;
    if (!cfg.is_set(lr)) cfg.set(lr, cfg.real("learning_rate"), "learning_rate");
    if (!cfg.is_set(warm)) cfg.set(warm, cfg.integer("lr_warmup_steps"), "lr_warmup_steps");
  }
  s.learning_rate_high = cfg.real("learning_rate_high");
  s.learning_rate_low = cfg.real("learning_rate_low");
  s.lr_warmup_steps_high = cfg.integer("lr_warmup_steps_high");
  s.lr_warmup_steps_low = cfg.integer("lr_warmup_steps_low");
  if (cfg.boolean("keep_best") && !cfg.is_set("eval_data_meta"))
    cfg.error("keep_best", "ranks checkpoints by their eval loss: set eval_data_meta");
  if (cfg.is_set("eval_data_meta")) {
    s.eval_meta = cfg.str("eval_data_meta");
    if (!fs::exists(*s.eval_meta)) cfg.error("eval_data_meta", "file not found: " + *s.eval_meta);
    else if (have_model && !s.text_dir.empty() && !s.text_encoder)
      check_text_embeddings(cfg, s, *s.eval_meta, mc.text_len, mc.text_dim, "eval_data_meta");
  }
  if (cfg.integers("eval_timesteps").empty()) cfg.error("eval_timesteps", "needs at least one timestep");
  for (int64_t t : cfg.integers("eval_timesteps"))
    if (t < 0 || t >= kTrainTimesteps) cfg.error("eval_timesteps", "each must lie in 0..999, got " + std::to_string(t));

  // Resume.
  if (cfg.is_set("resume_from_checkpoint")) {
    std::string warning, error;
    s.resume_dir = find_resume_checkpoint(cfg.str("resume_from_checkpoint"), s.run.output_dir, &warning, &error);
    if (!warning.empty()) s.warnings.push_back(warning);
    if (!error.empty()) cfg.error("resume_from_checkpoint", error);
  }
  check_output_dir_free(cfg, s.run);
  check_batch_fits(cfg, s.data);
  // LoRA: one spec per expert; the targets must be block Linears.
  s.lora.on = cfg.boolean("lora");
  s.lora.base_bf16 = cfg.str("lora_base_dtype") == "bf16";
  for (const char* tag : {"high", "low"}) {
    models::LoraSpec& spec = tag[0] == 'h' ? s.lora.high : s.lora.low;
    const std::string t(tag);
    spec.rank = cfg.opt_integer("lora_rank_" + t).value_or(cfg.integer("lora_rank"));
    spec.alpha = cfg.opt_real("lora_alpha_" + t).value_or(cfg.opt_real("lora_alpha").value_or(0.0));
    if (spec.alpha <= 0) spec.alpha = static_cast<double>(spec.rank);
    spec.dropout = cfg.opt_real("lora_dropout_" + t).value_or(cfg.real("lora_dropout"));
    spec.targets = cfg.strs("lora_target_modules");
  }
  for (const auto& target : s.lora.high.targets) {
    const auto& all = models::wan_lora_block_linears();
    if (std::find(all.begin(), all.end(), target) == all.end())
      cfg.error("lora_target_modules",
                "'" + target + "' is not a block Linear (self_attn.q, ..., cross_attn.o, ffn.0, ffn.2)");
  }
  s.bf16_weights = cfg.str("weight_dtype") == "bf16";
  if (s.bf16_weights && s.lora.on)
    cfg.error("weight_dtype",
              "bf16 weights with fp32 masters are for full fine-tuning; a LoRA base is stored as lora_base_dtype says");
  // fp8 (docs/design/dual-expert-training.md §10) only where it saves memory: a frozen pretrained
  // base keeps its 1-byte codes instead of its weights. A trained weight needs its master beside
  // the copy, and fresh experts keep theirs for the checkpoint, so there the copies would add memory.
  if (s.fp8 && !s.lora.on)
    cfg.error("fp8",
              "e4m3 copies save memory only for a frozen base: use fp8 with lora: true (full fine-tuning "
              "saves memory with weight_dtype: bf16 and zero_stage: 2)");
  else if (s.fp8 && !(s.high.weights && s.low.weights))
    cfg.error("fp8",
              "with lora, fp8 needs both experts' pretrained weights (high_noise_model_path and "
              "low_noise_model_path, or pretrained_model_name_or_path): fresh experts keep their weights "
              "for the checkpoint, so the copies would add memory");
  else if (s.fp8)
    s.warnings.push_back(
        std::string("fp8 e4m3: the frozen base's block Linears keep only e4m3 codes (1 byte per weight)") +
        (torch::cuda::is_available() ? "" : "; on the CPU the matmuls decode them first (slower than fp32)"));

  // Block swap: results equal to no swap (it is not in the maths); what it does not combine with.
  s.blocks_to_swap = cfg.integer("blocks_to_swap");
  if (s.blocks_to_swap > 0) {
    if (s.blocks_to_swap > s.high.config.num_layers)
      cfg.error("blocks_to_swap", "the experts have " + std::to_string(s.high.config.num_layers) + " blocks, got " +
                                      std::to_string(s.blocks_to_swap));
    else if (!s.optimizer.gradient_checkpointing)
      cfg.error("blocks_to_swap",
                "needs gradient_checkpointing: true (a swapped block's weights leave the device after its forward)");
    else if (s.zero2 || s.bf16_weights)
      cfg.error("blocks_to_swap", "does not combine with zero_stage 2 or weight_dtype bf16 yet");
  }

  // Finer or offloaded checkpointing: the same maths, less device memory.
  s.checkpoint_offload = cfg.boolean("gradient_checkpointing_offload");
  s.checkpoint_parts = cfg.boolean("gradient_checkpointing_parts");
  for (const char* key : {"gradient_checkpointing_offload", "gradient_checkpointing_parts"})
    if (cfg.boolean(key) && !s.optimizer.gradient_checkpointing) cfg.error(key, "needs gradient_checkpointing: true");

  s.maths = experts_maths_options(cfg);
  return s;
}

}  // namespace ws::train
