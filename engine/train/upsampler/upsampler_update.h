// SPDX-License-Identifier: Apache-2.0
// The optimisation core of the upsampler trainer: forward + loss on one micro-batch,
// gradient accumulation, clipping with the abnormal-norm rule, AdamW with the LR schedule
// and the EMA, in the reference's order (tests/data/train/README.md §A.3). The trainer feeds
// it batches made from videos; `parity upsampler-train` feeds it stored batches — the
// same code path.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/latent_upsampler.h"
#include "train/adamw.h"
#include "train/ema.h"
#include "train/grad_clip.h"
#include "train/lr_schedule.h"

namespace ws::train {

struct UpsamplerUpdateOptions {
  double learning_rate = 2e-5;
  AdamWOptions adam{0.9, 0.999, 1e-10, 3e-2};
  LrSchedule schedule;  // base_lr / training_steps filled by the caller
  ClipOptions clip;
  int64_t gradient_accumulation_steps = 1;
  std::vector<std::string> trainable_modules{"."};
  std::vector<std::string> trainable_modules_low_learning_rate;
  bool use_ema = false;
  EmaOptions ema;
  // Data parallel: averages the gradients over ranks before clipping (null: one process).
  std::function<void(const std::vector<torch::Tensor>&)> reduce_gradients;
  // Keep trained fp32 CPU conv weights in oneDNN's blocked order between steps
  // (models/packed_conv.h). Data-parallel ranks must agree on the order: see packing_fingerprint().
  bool pack_conv_weights = true;
  // With packing: 3×3 convs on oneDNN's Winograd kernels where the CPU has them (same maths,
  // rounding a few times the direct kernels'; see choose_packed_layout).
  bool winograd_convs = true;
};

// What one optimizer update did (the `step` event's numbers and the parity quantities).
struct UpdateRecord {
  int64_t global_step = 0;  // after this update
  double loss = 0;          // Σ micro-batch loss / A, in double
  double lr = 0;            // of the main group, as used by this update
  ClipResult clip;
  double ema_decay = 0;
  bool skipped = false;  // the gradients were not finite: nothing was applied (train/nonfinite_guard.h)
};

class UpsamplerUpdater {
 public:
  UpsamplerUpdater(models::LatentUpsampler model, UpsamplerUpdateOptions opts);
  // Leaves the model's weights plain for whoever still holds it.
  ~UpsamplerUpdater();
  UpsamplerUpdater(const UpsamplerUpdater&) = delete;
  UpsamplerUpdater& operator=(const UpsamplerUpdater&) = delete;

  // Forward, loss = mean((model(z_lr) − z_hr)²) in fp32, backward(loss / A). Returns the
  // micro-batch loss, and fills `record` when this micro-step completed an update.
  double micro_step(const torch::Tensor& z_lr, const torch::Tensor& z_hr, std::optional<UpdateRecord>* record);
  // For losses computed elsewhere (pixel loss): accumulate and maybe update.
  double accumulate(const torch::Tensor& loss, std::optional<UpdateRecord>* record);

  int64_t global_step() const { return global_step_; }
  void set_global_step(int64_t s) { global_step_ = s; }
  models::LatentUpsampler& model() { return model_; }
  AdamW& optimizer() { return *optimizer_; }
  Ema* ema() { return ema_.get(); }
  const UpsamplerUpdateOptions& options() const { return opts_; }
  std::vector<torch::Tensor> trainable_params() const;

  // While one is alive, every packed conv weight and its gradient, moments and EMA shadow are
  // in the plain order: read, save or load state by position only inside one. Nesting is fine.
  class PlainWeights {
   public:
    explicit PlainWeights(UpsamplerUpdater& u);
    ~PlainWeights();
    PlainWeights(const PlainWeights&) = delete;
    PlainWeights& operator=(const PlainWeights&) = delete;

   private:
    UpsamplerUpdater* updater_;
  };
  PlainWeights plain_weights() { return PlainWeights(*this); }
  // The number of conv weights kept packed between steps (0: all plain).
  size_t packed_convs() const { return packed_ ? packable_.size() : 0; }
  // How many of those run oneDNN's Winograd kernels.
  size_t winograd_convs() const;
  // Names every packed conv's order (0: none packed). The gradient mean is elementwise, so ranks
  // whose numbers differ (different CPUs) must all call drop_packing() before the first step.
  int64_t packing_fingerprint() const;
  void drop_packing();

 private:
  struct PackableConv {
    std::string name;  // of the weight parameter
    models::ConvNdImpl* conv;
    models::PackedLayoutPtr layout;
  };
  void set_packed(bool on);
  UpdateRecord update();
  std::vector<PackableConv> packable_;
  bool packed_ = false;
  models::LatentUpsampler model_;
  UpsamplerUpdateOptions opts_;
  std::unique_ptr<AdamW> optimizer_;
  std::unique_ptr<Ema> ema_;
  int64_t global_step_ = 0;
  int64_t micro_ = 0;
  double train_loss_ = 0;
};

// Splits named parameters into the main and the low-LR group by substring match, marks the
// rest frozen (requires_grad false). Names matching neither list are frozen.
std::vector<AdamWGroup> make_param_groups(torch::nn::Module& module, const std::vector<std::string>& trainable,
                                          const std::vector<std::string>& low_lr);

}  // namespace ws::train
