// `wanstudio-engine train-vae --config RUN.yaml`: trains a Wan2.2 VAE of the real
// architecture (normally the demo's tiny widths) on a dataset (docs/design/wan22-vae.md §12). Events on
// stdout and <output_dir>/events.jsonl, checkpoints every checkpointing_steps, the final
// weights as one .safetensors the normal loader reads (save_path).
#include <deque>
#include <cstdio>

#include "core/error.h"
#include "core/fs.h"
#include "data/demo_data.h"
#include "data/metadata.h"
#include "data/random_streams.h"
#include "data/row_check.h"
#include "io/safetensors.h"
#include "io/tfevents.h"
#include "run/cancel.h"
#include "run/events.h"
#include "run/logging.h"
#include "run/run_dir.h"
#include "run/verb.h"
#include "train/training_verb.h"
#include "train/upsampler_setup.h"
#include "train/vae_options.h"
#include "train/vae_trainer.h"

namespace ws::run {
namespace {
using nlohmann::json;

constexpr const char* kWeightsFile = "vae.safetensors";
constexpr const char* kOptimizerFile = "trainer_state/optimizer.safetensors";

// A checkpoint folder given by path: absolute, or relative to output_dir, or to the current
// folder. "" when none of them holds the weights.
std::string resume_dir(const io::Config& cfg, const std::string& r) {
  for (const std::string& d : {r.rfind('/', 0) == 0 ? r : fs::join(cfg.str("output_dir"), r), fs::absolute(r)})
    if (fs::exists(fs::join(d, kWeightsFile))) return d;
  return {};
}

// Every problem of the resolved config, one line each (docs/design/architecture.md "Worker verbs").
void validate(io::Config& cfg) {
  const int64_t size = cfg.integer("video_sample_size"), frames = cfg.integer("video_sample_n_frames");
  if (size % 16) cfg.error("video_sample_size", "must be a multiple of 16, got " + std::to_string(size));
  if (auto c = cfg.opt_integer("random_crop_size")) {
    if (*c % 16) cfg.error("random_crop_size", "must be a multiple of 16, got " + std::to_string(*c));
    if (*c > size) cfg.error("random_crop_size", "must not exceed video_sample_size (" + std::to_string(size) + ")");
  }
  if ((frames - 1) % 4)
    cfg.error("video_sample_n_frames", "must be 4k+1 (1, 5, 9, 13, ...), got " + std::to_string(frames));
  if (cfg.is_set("train_data_meta") && !fs::exists(cfg.str("train_data_meta")))
    cfg.error("train_data_meta", "no such file: " + cfg.str("train_data_meta"));
  if (cfg.is_set("train_data_dir") && !fs::is_dir(cfg.str("train_data_dir")))
    cfg.error("train_data_dir", "no such folder: " + cfg.str("train_data_dir"));
  if (auto d = cfg.opt_str("demo_data"); d && *d != "auto") cfg.error("demo_data", "must be 'auto' or unset, got '" + *d + "'");
  if (cfg.is_set("config_path")) {
    try {
      auto widths = models::read_vae_config_yaml(cfg.str("config_path"));
      models::Wan22VaeConfig::from_json(widths, cfg.str("config_path"), train::tiny_vae_config())
          .validate(cfg.str("config_path"));
    } catch (const Error& e) {
      cfg.error("config_path", e.what());
    }
  }
  if (cfg.is_set("vae_path") && !fs::exists(cfg.str("vae_path")))
    cfg.error("vae_path", "no such file: " + cfg.str("vae_path"));
  if (auto r = cfg.opt_str("resume_from_checkpoint"); r && *r != "latest" && resume_dir(cfg, *r).empty())
    cfg.error("resume_from_checkpoint", "no checkpoint with " + std::string(kWeightsFile) + " at " + *r);
  if (!data::video_support_built())
    cfg.add_error("train-vae needs video support, which is not built into this wanstudio-engine");
  train::check_output_dir_free(cfg, cfg.str("output_dir"));
  train::check_batch_fits(cfg);
}

// 'latest' or a folder (absolute, or relative to output_dir, or to the current folder).
std::optional<Checkpoint> find_resume(const io::Config& cfg, const RunDir& run) {
  auto r = cfg.opt_str("resume_from_checkpoint");
  if (!r) return std::nullopt;
  if (*r == "latest") {
    auto c = run.latest();
    if (!c) spdlog::info("resume_from_checkpoint latest: no checkpoint in {}; starting a new run", run.path());
    return c;
  }
  const std::string dir = resume_dir(cfg, *r);
  Checkpoint c;
  c.path = dir;
  c.name = fs::basename(dir);
  if (!parse_checkpoint_name(c.name, &c.step))
    throw Error(dir + ": a checkpoint folder is named checkpoint-<step>");
  return c;
}

void write_checkpoint(RunDir& run, models::Wan22Vae& vae, train::VaeUpdater& up, int64_t step, int64_t limit) {
  CheckpointWriter w = run.begin_checkpoint(step);
  train::save_vae_weights(vae, fs::join(w.dir(), kWeightsFile));
  fs::make_dirs(fs::join(w.dir(), "trainer_state"));
  io::write_safetensors(fs::join(w.dir(), kOptimizerFile), up.optimizer().state_dict());
  run.commit_checkpoint(w, limit);
}

int fail(const std::string& message, int64_t step) {
  auto& ev = EventStream::global();
  ev.error(message);
  ev.finished("failed", step);
  spdlog::error("{}", message);
  return 1;
}

int run_train_vae(const std::vector<std::string>& argv) {
  const io::OptionSchema schema = train::vae_option_schema();
  io::Config cfg = io::load_config(schema, argv);
  if (cfg.help_requested()) {
    std::printf("%s\nTrains a Wan2.2 VAE of the released architecture (default: the tiny widths dim 4, dec_dim 6)\n"
                "on square crops of a dataset's clips: loss mean((decode(z) - x)^2) + kl_weight * KL with z\n"
                "sampled in the un-normalised latent space (docs/design/wan22-vae.md §12). Writes events, checkpoints and\n"
                "the final weights (save_path, loadable by every VAE option).\n",
                schema.help_text().c_str());
    return 0;
  }
  auto& ev = EventStream::global();
  install_cancel_handlers();
  // `demo_data: auto` writes the demo dataset first (the same seed-0 set every verb writes),
  // then the config is validated.
  if (cfg.ok()) {
    try {
      if (train::make_demo_data_if_asked(cfg)) spdlog::info("wrote the demo dataset for {}", cfg.str("train_data_meta"));
    } catch (const std::exception& e) {
      cfg.error("demo_data", e.what());
    }
  }
  if (cfg.ok()) validate(cfg);
  if (!cfg.ok()) return train::report_config_errors(cfg);
  train::clear_previous_run(cfg, cfg.str("output_dir"));

  std::unique_ptr<RunDir> run;
  try {
    run = std::make_unique<RunDir>(cfg.str("output_dir"));
    run->setup_logging();
    run->open_events();
    run->write_run_yaml(cfg.to_yaml());
  } catch (const Error& e) {
    return fail(e.what(), 0);
  }
  Heartbeat heartbeat;
  int64_t step = 0;
  try {
    const uint64_t seed = static_cast<uint64_t>(cfg.integer("seed"));
    const int64_t max_steps = cfg.integer("max_train_steps");
    json widths = cfg.is_set("config_path") ? models::read_vae_config_yaml(cfg.str("config_path")) : json::object();

    // Model: a checkpoint to resume, a warm start, or fresh weights (docs/design/wan22-vae.md §12 initialisation).
    std::unique_ptr<models::Wan22Vae> vae;
    auto resume = find_resume(cfg, *run);
    if (resume) {
      vae = train::load_vae_for_training(fs::join(resume->path, kWeightsFile), widths);
      step = resume->step;
      spdlog::info("resuming from {} (step {})", resume->path, step);
    } else if (cfg.is_set("vae_path")) {
      vae = train::load_vae_for_training(cfg.str("vae_path"), widths);
      spdlog::info("warm start from {}", cfg.str("vae_path"));
    } else {
      models::Wan22VaeOptions o;
      o.pack_weights = false;  // packed oneDNN weights are inference-only
      auto c = models::Wan22VaeConfig::from_json(widths, cfg.opt_str("config_path").value_or("VAE config"),
                                                 train::tiny_vae_config());
      vae = models::Wan22Vae::random(c, seed, o);
    }
    spdlog::info("VAE dim {} dec_dim {} z_dim {}: {} parameters", vae->config().dim, vae->config().dec_dim,
                 vae->config().z_dim, vae->parameter_count());

    train::VaeUpdateOptions uo;
    uo.learning_rate = cfg.real("learning_rate");
    uo.adam = {cfg.real("adam_beta1"), cfg.real("adam_beta2"), cfg.real("adam_epsilon"), cfg.real("adam_weight_decay")};
    uo.schedule.name = cfg.str("lr_scheduler");
    uo.schedule.warmup_steps = cfg.integer("lr_warmup_steps");
    uo.schedule.training_steps = max_steps;
    uo.schedule.base_lr = uo.learning_rate;
    uo.schedule.validate();
    uo.max_grad_norm = cfg.real("max_grad_norm");
    uo.kl_weight = cfg.real("kl_weight");
    train::VaeUpdater updater(*vae, uo);
    if (resume) {
      const std::string opt = fs::join(resume->path, kOptimizerFile);
      if (fs::exists(opt)) updater.optimizer().load_state_dict(io::read_safetensors(opt), opt);
      updater.set_global_step(step);
    }

    train::VaeDataOptions dopt;
    dopt.size = cfg.integer("video_sample_size");
    dopt.crop = cfg.opt_integer("random_crop_size").value_or(0);
    dopt.n_frames = cfg.integer("video_sample_n_frames");
    dopt.stride = cfg.integer("video_sample_stride");
    dopt.batch = cfg.integer("train_batch_size");
    dopt.seed = seed;
    train::VaeClipSampler sampler(data::read_metadata(cfg.str("train_data_meta"), cfg.opt_str("train_data_dir").value_or("")),
                                  dopt);
    spdlog::info("{} usable rows ({} skipped)", sampler.rows(), sampler.skipped());

    const std::string save_path = cfg.opt_str("save_path").value_or(run->file(kWeightsFile));
    const int64_t every = cfg.integer("checkpointing_steps"), limit = cfg.integer("checkpoints_total_limit");
    ev.emit("started", {{"job", "vae"},
                        {"config", cfg.to_json()},
                        {"world_size", 1},
                        {"resume_step", step},
                        {"max_train_steps", max_steps}});
    io::TfEventsWriter tb(run->logs_dir());

    std::deque<std::pair<double, int64_t>> window;  // (seconds, clips) of the last 10 steps
    while (step < max_steps && !cancel_requested()) {
      const double t0 = unix_time();
      auto clips = sampler.batch(step);
      auto rec = updater.step(clips, data::Rng::keyed(seed, "vae-noise", step).derive_seed());
      step = rec.step;
      window.emplace_back(unix_time() - t0, rec.clips);
      if (window.size() > 10) window.pop_front();
      double secs = 0, n = 0;
      for (const auto& [s, c] : window) secs += s, n += static_cast<double>(c);
      const double per_step = secs / static_cast<double>(window.size());
      ev.emit("step", {{"step", step},
                       {"expert", "vae"},
                       {"expert_step", step},
                       {"loss", rec.loss},
                       {"lr", rec.lr},
                       {"grad_norm", rec.grad_norm},
                       {"samples_per_s", secs > 0 ? n / secs : 0.0},
                       {"eta_s", per_step * static_cast<double>(max_steps - step)},
                       {"recon", rec.recon},
                       {"kl", rec.kl}});
      tb.add_scalars({{"train_loss", static_cast<float>(rec.loss)},
                      {"recon", static_cast<float>(rec.recon)},
                      {"kl", static_cast<float>(rec.kl)},
                      {"lr", static_cast<float>(rec.lr)},
                      {"grad_norm", static_cast<float>(rec.grad_norm)}},
                     step);
      if (step % 10 == 0 || step == max_steps)
        spdlog::info("step {}/{} loss {:.5f} recon {:.5f} kl {:.3f} lr {:.3g} ({:.2f} s/step)", step, max_steps, rec.loss,
                     rec.recon, rec.kl, rec.lr, per_step);
      if (step % every == 0) write_checkpoint(*run, *vae, updater, step, limit);
    }
    if (cancel_requested()) {
      // Finish as the contract says: the step is done, a checkpoint holds it, exit 130.
      if (step > (resume ? resume->step : 0) && !run->has_checkpoint(step))
        write_checkpoint(*run, *vae, updater, step, limit);
      ev.finished("cancelled", step);
      return 130;
    }
    fs::make_dirs(fs::dirname(save_path));
    train::save_vae_weights(*vae, save_path);
    spdlog::info("saved the VAE weights to {}", save_path);
    ev.log("info", "saved the VAE weights to " + save_path);
    ev.finished("completed", step);
    return 0;
  } catch (const Error& e) {
    return fail(e.what(), step);
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    return fail(msg.substr(0, msg.find('\n')), step);
  } catch (const std::exception& e) {
    return fail(e.what(), step);
  }
}

}  // namespace

WS_VERB("train-vae", "train a Wan2.2 VAE (the demo's tiny one) on a dataset", &run_train_vae);

}  // namespace ws::run
