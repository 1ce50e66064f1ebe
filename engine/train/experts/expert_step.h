// SPDX-License-Identifier: Apache-2.0
// One DiT (expert) training step with flow matching (docs/design/dual-expert-training.md §1,
// tests/data/train/README.md §B.2): x_t = (1 − σ)·x0 + σ·ε, pred = model(x_t, t, context),
// loss = mse(pred, ε − x0), backward, global gradient norm (optionally clipped), AdamW.
// The dual-expert trainer owns one ExpertStep per expert; `parity dit-train` drives the same
// class with stored steps.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/wan_dit.h"
#include "train/adamw.h"
#include "train/grad_clip.h"
#include "train/lr_schedule.h"
#include "train/zero_shard.h"

namespace ws::train {

struct ExpertStepOptions {
  double learning_rate = 1e-4;  // the peak; the expert's schedule scales it per update
  LrSchedule schedule = {"constant"};
  AdamWOptions adam{0.9, 0.999, 1e-8, 1e-2};
  ClipOptions clip{0.0, 5.0, 1000.0};  // max_grad_norm 0: measure the norm, do not clip
};

struct ExpertStepInput {
  torch::Tensor x0;       // [C, F, H, W] clean normalised latent
  torch::Tensor noise;    // same shape
  float sigma = 0;        // noise level, already rounded to fp32
  double t = 0;           // timestep on the 0–1000 scale, as given to the model
  torch::Tensor context;  // [L_txt, text_dim], unpadded
  int64_t seq_len = 0;    // 0 = the token count
  torch::Tensor y;        // i2v conditioning, or undefined
  // ti2v image conditioning: latent frame 0 of x_t is x0's, its tokens get t = 0 and it is
  // left out of the loss (inference overwrites that frame every step; DiffSynth does the same,
  // VideoX-Fun keeps it in the mean).
  bool clean_first_frame = false;
};

// What the model sees for one sample: x_t (frame 0 clean under clean_first_frame) and t
// ([1], or per token).
struct ExpertModelInput {
  torch::Tensor x_t, t;
};
ExpertModelInput expert_model_input(const ExpertStepInput& in);
// The sample's tensors on `device` (the model's).
ExpertStepInput on_device(const ExpertStepInput& in, const torch::Device& device);
// The per-sample flow-matching loss: mse(pred, ε − x0), in fp32, over the frames that count.
torch::Tensor expert_loss(const torch::Tensor& pred, const ExpertStepInput& in);

struct ExpertStepRecord {
  double loss = 0;    // fp32 loss as a double
  ClipResult clip;    // clip.grad_norm: global L2 norm before clipping
  torch::Tensor x_t;  // the noisy input the model saw
};

class ExpertStep {
 public:
  ExpertStep(models::WanModel model, ExpertStepOptions opts);
  // LoRA (docs/design/lora.md): the adapters, attached to `model`, are what the optimizer updates;
  // the model's own parameters are frozen by the caller.
  ExpertStep(models::WanModel model, ExpertStepOptions opts, models::WanLora lora);

  // x_t = (1 − σ)·x0 + σ·ε in fp32, element-wise (three rounded ops, as the reference).
  static torch::Tensor noisy_latent(const torch::Tensor& x0, const torch::Tensor& noise, float sigma);

  // Forward, loss, zero_grad, backward and the gradient norm (with clipping when enabled);
  // the gradients stay on the parameters for inspection until update().
  ExpertStepRecord forward_backward(const ExpertStepInput& in);
  // The AdamW update at the schedule's learning rate for update `schedule_step` (default: this
  // expert's own completed updates; the dual-expert trainer passes the global step when the
  // schedule runs on it). The expert owns its schedule.
  void update(std::optional<int64_t> schedule_step = std::nullopt);
  // forward_backward + update.
  ExpertStepRecord step(const ExpertStepInput& in);

  // A batch or several micro-batches in one update (the dual-expert trainer): clear the
  // gradients, add weight·∂loss for each sample, fold each micro-batch's gradients, then measure
  // (and clip) once. forward_backward is begin_accumulation + accumulate(in, 1) +
  // fold_gradients + finish_gradients.
  void begin_accumulation();
  // Returns the sample's unweighted loss; `x_t` receives the noisy input when given.
  double accumulate(const ExpertStepInput& in, double weight, torch::Tensor* x_t = nullptr);
  // After each micro-batch: under ZeRO the gradients so far go to their owners (a collective:
  // every rank calls it as often); bf16 weights' gradients are added to their fp32 masters'.
  void fold_gradients();
  ClipResult finish_gradients();
  // Drops the gradients after update() so an idle expert holds none.
  void release_gradients();

  // ZeRO stage 2 over the data-parallel ranks (docs/design/zero.md): from now on the optimizer
  // keeps only this rank's tensors; fold_gradients() reduces onto their owners and update()
  // broadcasts the new weights. Call before restoring a checkpoint.
  void shard(parallel::DataParallel& dp);
  bool sharded() const { return static_cast<bool>(zero_); }
  // `weight_dtype: bf16` (docs/design/zero.md): the block Linears are stored in bf16 for the
  // forward and backward, and the optimizer updates fp32 master copies of them (under ZeRO only
  // on the owning rank), from which the bf16 weights are rounded after each update. Call after
  // shard(), before restoring a checkpoint.
  void keep_master_weights();
  bool has_master_weights() const { return !mastered_.empty(); }
  // What the optimizer updates (the masters where they exist) and whose gradients it reads.
  std::vector<torch::Tensor> optimizer_tensors() const;
  // Collective under ZeRO (every rank calls it before a checkpoint): gathers the whole optimizer
  // state and the fp32 masters onto rank 0, which optimizer_state() and weights_state() then
  // return; without ZeRO they are the expert's own.
  void gather_checkpoint_state();
  io::StateDict optimizer_state() const;
  // The expert's weights by name as the checkpoint saves them: fp32 masters over bf16 copies.
  io::StateDict weights_state() const;
  // Restores the weights (the masters exactly) from a state dict in the model's key names.
  void load_weights(const io::StateDict& sd, const std::string& source);
  // Bytes of optimizer state this rank holds: AdamW moments and fp32 masters.
  int64_t optimizer_bytes() const;
  // The largest |gradient| before clipping (over every rank's shard under ZeRO; after finish_gradients).
  double last_max_abs_gradient() const { return max_abs_; }

  // Moves the expert (weights, fp8 copies, Adam moments) to `device`: the trainer keeps only
  // the routed expert on the GPU under low_vram. Bit-exact both ways.
  void to(const torch::Device& device);
  torch::Device device() const { return model_->device(); }

  // The learning rate of the last update (the peak before the first).
  double learning_rate() const { return last_lr_; }
  int64_t global_step() const { return global_step_; }
  // Resume: the expert's completed updates (the clip threshold decays with it).
  void set_global_step(int64_t step) { global_step_ = step; }
  const ExpertStepOptions& options() const { return opts_; }
  models::WanModel& model() { return model_; }
  AdamW& optimizer() { return *optimizer_; }
  const std::vector<torch::Tensor>& parameters() const { return params_; }
  // The adapters of a LoRA expert; nullptr when the expert trains its own weights.
  const models::WanLora* lora() const { return lora_ ? &*lora_ : nullptr; }

 private:
  void make_optimizer(AdamWGroup group);
  // The optimizer over this rank's tensors (their masters where they exist), fresh.
  void rebuild_optimizer();
  const torch::Tensor& target(size_t i) const {
    return masters_.empty() || !masters_[i].defined() ? params_[i] : masters_[i];
  }
  models::WanModel model_;
  std::optional<models::WanLora> lora_;
  std::vector<std::string> names_;  // of params_
  std::unique_ptr<ZeroShard> zero_;
  std::vector<torch::Tensor> masters_;  // fp32, of the bf16 weights (this rank's under ZeRO)
  std::vector<bool> mastered_;          // which params_ are stored in bf16 (every rank)
  io::StateDict gathered_, gathered_masters_;
  double max_abs_ = 0;
  ExpertStepOptions opts_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<AdamW> optimizer_;
  int64_t global_step_ = 0;
  double last_lr_ = 0;
};

}  // namespace ws::train
