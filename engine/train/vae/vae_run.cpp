// SPDX-License-Identifier: Apache-2.0
#include "train/vae/vae_run.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "data/random_streams.h"
#include "dataset/metadata.h"
#include "io/safetensors.h"
#include "io/tfevents.h"
#include "runtime/events.h"
#include "runtime/run_dir.h"
#include "train/training_verb.h"
#include "train/vae/vae_options.h"
#include "train/vae/vae_setup.h"
#include "train/vae/vae_trainer.h"

namespace ws::train {
namespace {

using json = nlohmann::json;

class VaeTrainer final : public TrainerHooks {
 public:
  explicit VaeTrainer(VaeSetup setup) : setup_(std::move(setup)) {}

  void prepare(TrainingRun& run) override {
    run_ = &run;
    if (run.world() > 1) throw Error("train-vae runs in one process (start it without `launch --nproc`)");
    max_steps_ = setup_.run.max_train_steps.value_or(1);
    // Model: a checkpoint to resume, a warm start, or fresh weights (docs/design/wan22-vae.md §12 initialisation).
    std::optional<std::string> resume = setup_.resume_dir;
    if (setup_.run.resume_from_checkpoint == std::optional<std::string>("latest")) {
      if (auto c = run.run_dir()->latest()) resume = c->path;
      else
        ws::log::info("resume_from_checkpoint latest: no checkpoint in {}; starting a new run", setup_.run.output_dir);
    }
    if (resume) {
      if (!runtime::parse_checkpoint_name(fs::basename(*resume), &resume_step_))
        throw Error(*resume + ": a checkpoint folder is named checkpoint-<step>");
      vae_ = load_vae_for_training(fs::join(*resume, kVaeWeightsFile), setup_.widths);
      ws::log::info("resuming from {} (step {})", *resume, resume_step_);
    } else if (setup_.warm_start) {
      vae_ = load_vae_for_training(*setup_.warm_start, setup_.widths);
      ws::log::info("warm start from {}", *setup_.warm_start);
    } else {
      models::WanVaeOptions o;
      o.pack_weights = false;  // packed oneDNN weights are inference-only
      auto c = models::WanVaeConfig::from_json(setup_.widths, setup_.widths_source, tiny_vae_config());
      vae_ = models::WanVae::random(c, setup_.run.seed, o);
    }
    ws::log::info("VAE dim {} dec_dim {} z_dim {}: {} parameters", vae_->config().dim, vae_->config().dec_dim,
                  vae_->config().z_dim, vae_->parameter_count());

    VaeUpdateOptions uo;
    uo.learning_rate = setup_.optimizer.learning_rate;
    uo.adam = setup_.optimizer.adam;
    uo.schedule = setup_.optimizer.schedule;
    uo.schedule.training_steps = max_steps_;
    uo.schedule.base_lr = uo.learning_rate;
    uo.schedule.validate();
    uo.max_grad_norm = setup_.optimizer.clip.max_grad_norm;
    uo.kl_weight = setup_.kl_weight;
    updater_ = std::make_unique<VaeUpdater>(*vae_, uo);
    if (resume) {
      const std::string opt = fs::join(*resume, kVaeOptimizerFile);
      if (fs::exists(opt)) updater_->optimizer().load_state_dict(io::read_safetensors(opt), opt);
      updater_->set_global_step(resume_step_);
    }

    VaeDataOptions d;
    d.size = setup_.data.sample_size;
    d.crop = setup_.random_crop_size;
    d.n_frames = setup_.data.n_frames;
    d.stride = setup_.data.stride;
    d.batch = setup_.data.batch_size;
    d.seed = setup_.run.seed;
    sampler_ = std::make_unique<VaeClipSampler>(dataset::read_metadata(setup_.data.meta, setup_.data.dir), d);
    ws::log::info("{} usable rows ({} skipped)", sampler_->rows(), sampler_->skipped());
  }

  int64_t global_step() const override { return updater_ ? updater_->global_step() : resume_step_; }
  int64_t resume_step() const override { return resume_step_; }
  int64_t max_steps() const override { return max_steps_; }

  std::optional<StepReport> train_step() override {
    const int64_t step = updater_->global_step();
    auto clips = sampler_->batch(step);
    auto rec = updater_->step(clips, data::Rng::keyed(setup_.run.seed, "vae-noise", step).derive_seed());
    StepReport r;
    r.expert = "vae";
    r.expert_step = rec.step;
    r.loss = rec.loss;
    r.lr = rec.lr;
    r.grad_norm = rec.grad_norm;
    r.samples = rec.clips;
    r.extra = {{"recon", rec.recon}, {"kl", rec.kl}};
    if (rec.step % 10 == 0 || rec.step == max_steps_)
      ws::log::info("step {}/{} loss {:.5f} recon {:.5f} kl {:.3f} lr {:.3g}", rec.step, max_steps_, rec.loss,
                    rec.recon, rec.kl, rec.lr);
    return r;
  }

  void log_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate&) override {
    tb.add_scalars({{"train_loss", static_cast<float>(r.loss)},
                    {"recon", static_cast<float>(r.extra.at("recon").get<double>())},
                    {"kl", static_cast<float>(r.extra.at("kl").get<double>())},
                    {"lr", static_cast<float>(r.lr)},
                    {"grad_norm", static_cast<float>(r.grad_norm)}},
                   r.expert_step);
  }

  // A checkpoint every checkpointing_steps (the last step too when it falls on one); the
  // completed run's weights also go to save_path.
  void checkpoint(bool final_save) override {
    runtime::RunDir* dir = run_->run_dir();
    const int64_t step = updater_->global_step();
    if ((!final_save || step % setup_.run.checkpointing_steps == 0) && !dir->has_checkpoint(step)) {
      runtime::CheckpointWriter w = dir->begin_checkpoint(step);
      save_vae_weights(*vae_, fs::join(w.dir(), kVaeWeightsFile));
      fs::make_dirs(fs::join(w.dir(), "trainer_state"));
      io::write_safetensors(fs::join(w.dir(), kVaeOptimizerFile), updater_->optimizer().state_dict());
      dir->commit_checkpoint(w, setup_.run.checkpoints_total_limit);
    }
    if (!final_save) return;
    fs::make_dirs(fs::dirname(setup_.save_path));
    save_vae_weights(*vae_, setup_.save_path);
    ws::log::info("saved the VAE weights to {}", setup_.save_path);
    runtime::EventStream::global().log("info", "saved the VAE weights to " + setup_.save_path);
  }

 private:
  VaeSetup setup_;
  TrainingRun* run_ = nullptr;
  std::unique_ptr<models::WanVae> vae_;
  std::unique_ptr<VaeUpdater> updater_;
  std::unique_ptr<VaeClipSampler> sampler_;
  int64_t resume_step_ = 0, max_steps_ = 1;
};

}  // namespace

int run_train_vae(const std::vector<std::string>& argv) {
  return run_training_verb<VaeTrainer>(
      vae_option_schema(), argv, [](io::Config& cfg) { return resolve_vae_setup(cfg); }, DeviceWishes{false, ""});
}

}  // namespace ws::train
