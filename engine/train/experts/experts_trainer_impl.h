// SPDX-License-Identifier: Apache-2.0
// The dual-expert trainer's class, shared by its two files: experts_trainer.cpp (the step, eval,
// checkpoints) and experts_trainer_setup.cpp (loader, models, resume, the eval set). Private to
// train/: nothing else includes it.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <memory>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "data/clip_loader.h"
#include "dataset/metadata.h"
#include "data/random_streams.h"
#include "parallel/data_parallel.h"
#include "io/safetensors.h"
#include "io/tfevents.h"
#include "models/wan_vae.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/logging.h"
#include "runtime/run_dir.h"
#include "train/nonfinite_guard.h"
#include "train/experts/expert_conditioning.h"
#include "train/experts/expert_latents.h"
#include "train/experts/experts_eval.h"
#include "train/experts/expert_routing.h"
#include "train/experts/expert_lora.h"
#include "train/encode_ahead.h"
#include "train/experts/expert_step.h"
#include "train/step_times.h"
#include "train/experts/experts_checkpoint.h"
#include "train/experts/experts_report.h"
#include "train/experts/experts_options.h"
#include "train/resume_checks.h"
#include "train/experts/experts_setup.h"
#include "train/latent_cache.h"
#include "train/lr_schedule.h"
#include "train/experts/text_embeddings.h"
#include "train/training_device.h"
#include "train/training_verb.h"
#include "train/run_setup.h"

namespace ws::train::experts {

using json = nlohmann::json;

// Buckets align to the VAE stride × patch 2 (32 pixels for the Wan2.2 VAE, 16 for Wan2.1):
// the loader aligns to lcm(16, 16·scale), so scale = stride / 8.
inline double loader_scale(const ExpertsSetup& s) { return static_cast<double>(s.vae_spatial_factor) / 8.0; }

// A micro-batch from the loader with its latents, made in the step or during the one before.
struct Prepared {
  data::Batch batch;
  ExpertLatents z;
  double data_wait_s = 0, vae_s = 0;
  bool ahead = false;  // made on the encoding-ahead thread
};

class Trainer final : public TrainerHooks {
 public:
  explicit Trainer(ExpertsSetup setup) : setup_(std::move(setup)) {}
  void prepare(TrainingRun& run) override;
  int64_t global_step() const override { return high_ && low_ ? high_->global_step() + low_->global_step() : 0; }
  int64_t resume_step() const override { return resume_step_; }
  int64_t max_steps() const override { return max_steps_; }
  json started_fields() const override;
  std::size_t kept_block_bytes() const override { return std::size_t{32} << 20; }
  std::optional<StepReport> train_step() override;
  // One try at an update; *skipped when its gradients were not finite.
  std::optional<StepReport> attempt_step(bool* skipped);
  void checkpoint(bool final_save) override;
  void validate(int64_t step) override;
  void complete() override;
  void log_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate& rate) override;

 private:
  void encode_captions_first();
  void build_loader();
  void build_models();
  void resume();
  void build_eval();
  // Conditioning of sample b: i2v's y, ti2v's clean first frame (drawn; always in eval).
  void condition(ExpertStepInput& in, const ExpertLatents& z, int64_t b, bool ti2v_image) const;
  double weight(double t) const { return setup_.bsmntw ? bsmntw_weight(t) : 1.0; }
  StepReport report(bool high, double loss, const ClipResult& clip, double max_abs_grad, const std::vector<double>& ts,
                    const std::vector<bool>& first_frame, const data::Batch& batch, int64_t samples) const;
  void evaluate();
  Prepared prepare_batch(bool side_thread);
  int64_t optimizer_bytes() const { return high_->optimizer_bytes() + low_->optimizer_bytes(); }
  static int64_t trainable_parameters(const ExpertStep& e) {
    int64_t n = 0;
    for (const auto& p : e.parameters()) n += p.numel();
    return n;
  }

  ExpertsSetup setup_;
  TrainingRun* run_ = nullptr;
  std::unique_ptr<models::WanVae> vae_;
  std::unique_ptr<ExpertStep> high_, low_;
  ImageConditioning cond_ = ImageConditioning::None;
  torch::Device device_{torch::kCPU};
  bool swap_experts_ = false;  // low_vram on a GPU: only the routed expert is resident
  // Brings the expert about to run onto the device, the other one off it (low_vram).
  void activate(bool high);
  dataset::Metadata meta_;
  std::unique_ptr<TextEmbeddings> texts_;
  std::unique_ptr<data::ClipLoader> loader_;
  std::unique_ptr<ExpertLatentSource> latents_;
  std::vector<EvalItem> eval_;
  std::unique_ptr<ExpertsValidation> videos_;  // rank 0, with validation prompts
  bool start_rendered_ = false;
  void render_videos(int64_t step);
  int64_t last_eval_step_ = -1;
  data::LoaderCursor last_cursor_;
  int64_t epoch_ = 0, resume_step_ = 0, max_steps_ = 0, num_epochs_ = 0;
  NonFiniteGuard guard_{setup_.run.max_nonfinite_steps};  // updates with NaN/inf gradients are skipped
  std::string options_sha_;
  // Last, so it is joined before anything it uses goes away.
  Ahead<Prepared> ahead_;
};

}  // namespace ws::train::experts
