// SPDX-License-Identifier: Apache-2.0
// The upsampler trainer's class, shared by its two files: upsampler_trainer.cpp (the step,
// validation, checkpoints) and upsampler_trainer_setup.cpp (model, VAE, loader, resume). Private to
// train/: nothing else includes it.
#pragma once
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "data/clip_loader.h"
#include "dataset/metadata.h"
#include "data/random_streams.h"
#include "io/safetensors.h"
#include "io/tfevents.h"
#include "io/weights.h"
#include "models/latent_upsampler.h"
#include "models/wan_vae.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/logging.h"
#include "runtime/run_dir.h"
#include "train/nonfinite_guard.h"
#include "train/encode_ahead.h"
#include "train/latent_cache.h"
#include "train/resume_checks.h"
#include "train/upsampler/upsampler_checkpoint.h"
#include "train/upsampler/upsampler_options.h"
#include "train/upsampler/upsampler_setup.h"
#include "parallel/data_parallel.h"
#include "train/training_device.h"
#include "train/step_times.h"
#include "train/upsampler/upsampler_update.h"
#include "train/training_verb.h"
#include "train/upsampler/upsampler_validation.h"

namespace ws::train::upsampler {

using json = nlohmann::json;

// A batch with its latents, made before the step that trains on it (on another thread when
// encoding ahead), and what making it took.
struct Prepared {
  data::Batch batch;
  torch::Tensor z_hr, z_lr;
  double data_wait_s = 0, vae_s = 0;
  int64_t vae_calls = 0, decode_workers = 0;
  bool ahead = false;  // made on the encoding-ahead thread
};

class Trainer final : public TrainerHooks {
 public:
  explicit Trainer(UpsamplerSetup setup) : setup_(std::move(setup)) {}
  void prepare(TrainingRun& run) override;
  int64_t global_step() const override { return updater_ ? updater_->global_step() : 0; }
  int64_t resume_step() const override { return resume_step_; }
  int64_t max_steps() const override { return max_steps_; }
  json started_fields() const override;
  std::optional<StepReport> train_step() override;
  void checkpoint(bool final_save) override;
  void validate(int64_t step) override;
  void log_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate& rate) override;

 private:
  void build_model_and_vae();
  void build_loader();
  void resume();
  StepReport report(const UpdateRecord& rec, const data::Batch& batch, int64_t samples) const;
  void micro_step(Prepared& p, int64_t micro, std::optional<UpdateRecord>* rec);
  torch::Tensor decode_with_grad(const torch::Tensor& latent);
  void encode(const data::Batch& batch, torch::Tensor* z_hr, torch::Tensor* z_lr, int64_t* calls);
  Prepared prepare_batch(bool side_thread);

  UpsamplerSetup setup_;
  TrainingRun* run_ = nullptr;
  std::unique_ptr<models::WanVae> vae_;
  std::unique_ptr<UpsamplerUpdater> updater_;
  std::unique_ptr<data::ClipLoader> loader_;
  std::unique_ptr<LatentCache> cache_;
  torch::Tensor latent_mean_,
      latent_inv_std_;              // the VAE's docs/design/wan22-vae.md §9 normalisation, for the pixel-loss decode
  data::LoaderCursor last_cursor_;  // of the last batch used by a completed update
  int64_t epoch_ = 0;
  NonFiniteGuard guard_{setup_.run.max_nonfinite_steps};  // updates with NaN/inf gradients are skipped
  int64_t resume_step_ = 0;
  int64_t max_steps_ = 0, num_epochs_ = 0, steps_per_epoch_ = 1;
  int64_t micro_ = 0;      // micro-batch index within the optimizer step
  int64_t vae_calls_ = 0;  // VAE encode calls of the current step (vae_mini_batch clips each)
  int64_t decode_workers_ = 0;
  bool encoded_ahead_ = false;  // the current step's (last) batch was encoded during the previous step
  StepTimes times_;             // of the current step
  torch::Device device_{torch::kCPU};
  std::string options_sha_;
  // Last, so it is joined before anything it uses goes away.
  Ahead<Prepared> ahead_;
};

}  // namespace ws::train::upsampler
