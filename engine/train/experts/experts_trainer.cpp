// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_memory.h"
#include "train/experts/experts_trainer.h"
#include "train/experts/experts_trainer_impl.h"
#include "models/grad_checkpoint.h"

namespace ws::train {
namespace experts {

void Trainer::prepare(TrainingRun& run) {
  run_ = &run;
  device_ = run.device();
  // Eval and validation videos keep their own cadences (validate() sorts them out).
  run.set_validation_steps(setup_.validation.active() ? 1 : setup_.eval_steps);
  if (setup_.text_encoder) encode_captions_first();
  build_loader();
  options_sha_ = sha256_hex(setup_.maths.dump());
  build_models();
  resume();
  build_eval();
  if (setup_.validation.active() && run_->is_rank_zero())
    videos_ = std::make_unique<ExpertsValidation>(setup_.validation, setup_.text_dir, setup_.high.config.text_len,
                                                  setup_.high.config.text_dim);
}

void Trainer::validate(int64_t step) {
  const bool eval = step % setup_.eval_steps == 0;
  const bool videos = setup_.validation.active() && step % setup_.validation.every == 0;
  if (eval || videos) ahead_.settle();  // the eval set's encodes and the videos' decodes use the VAE
  if (eval) evaluate();
  if (videos) render_videos(step);
}

void Trainer::render_videos(int64_t step) {
  if (!videos_ || !run_->run_dir()) return;
  videos_->render(step, high_->model(), low_->model(), vae_.get(), run_->run_dir()->path(),
                  [this](bool h) { activate(h); });
}

// Captions without an embedding are encoded once, before the first step (rank 0; the others
// wait), and the encoder is freed before the experts load.
void Trainer::encode_captions_first() {
  if (run_->is_rank_zero()) {
    std::vector<std::string> metas{setup_.data.meta};
    if (setup_.eval_meta) metas.push_back(*setup_.eval_meta);
    encode_missing_captions(metas, setup_.data.dir, setup_.text_dir, *setup_.text_encoder, setup_.high.config.text_dim,
                            [] { return runtime::cancel_requested(); });
    if (setup_.validation.active())  // the validation prompts and their negative prompt too
      encode_validation_prompts(setup_.validation, setup_.text_dir, *setup_.text_encoder, setup_.high.config.text_dim);
  }
  if (parallel::DataParallel* dp = run_->data_parallel()) dp->barrier();
}

json Trainer::started_fields() const {
  return {{"boundary", setup_.routing.boundary()},
          {"p_high", setup_.routing.p_high()},
          {"dataset_rows", loader_->rows().size()},
          {"eval_samples", eval_.size()},
          {"parameters_high", setup_.high.config.parameter_count()},
          {"parameters_low", setup_.low.config.parameter_count()},
          {"conditioning", setup_.high.config.model_type},
          {"fp8_bytes_per_expert", high_->model()->fp8_bytes()},
          {"optimizer_bytes", optimizer_bytes()},
          {"trainable_parameters", trainable_parameters(*high_) + trainable_parameters(*low_)},
          {"zero_stage", high_->sharded() ? 2 : 0},
          {"weight_dtype", high_->has_master_weights() ? "bf16" : "fp32"}};
}

void Trainer::complete() {
  ahead_.settle();
  evaluate();
  render_videos(global_step());  // after the last step (once, if the cadence just rendered it)
  const int64_t step = global_step();
  ws::log::info("done: {} steps, high {} ({:.1f} %), low {}", step, high_->global_step(),
                step ? 100.0 * static_cast<double>(high_->global_step()) / static_cast<double>(step) : 0.0,
                low_->global_step());
}

void Trainer::evaluate() {
  if (eval_.empty() || !run_->is_rank_zero() || last_eval_step_ == global_step()) return;
  const int64_t step = global_step(), boundary = setup_.routing.boundary();
  last_eval_step_ = step;
  const EvalLosses losses = routed_eval_losses(
      eval_, high_->model(), low_->model(), boundary, [this](bool h) { activate(h); }, setup_.bsmntw);
  const double loss = report_eval(step, boundary, losses, eval_.size(), run_->tensorboard());
  run_->offer_best(step, "eval_loss", loss, /*higher_is_better=*/false);
}

void Trainer::checkpoint(bool) {
  for (auto* e : {high_.get(), low_.get()}) e->gather_checkpoint_state();  // ZeRO: a collective, every rank
  runtime::RunDir* dir = run_->run_dir();
  if (!dir) return;  // rank 0 writes for everyone
  ExpertsState st;
  st.global_step = global_step();
  st.steps_high = high_->global_step();
  st.steps_low = low_->global_step();
  st.epoch = epoch_;
  st.cursor = last_cursor_;
  st.seed = static_cast<int64_t>(setup_.run.seed);
  st.eval_seed = setup_.eval_seed;
  st.boundary_ratio = setup_.routing.boundary_ratio;
  st.boundary = setup_.routing.boundary();
  st.routing_mode = setup_.routing.mode;
  st.shift = setup_.routing.shift;
  const LrSchedule& sh = high_->options().schedule;
  const LrSchedule& sl = low_->options().schedule;
  st.extra["lr"] = {{"high",
                     {{"learning_rate", setup_.learning_rate_high},
                      {"warmup", sh.warmup_steps},
                      {"training_steps", sh.training_steps}}},
                    {"low",
                     {{"learning_rate", setup_.learning_rate_low},
                      {"warmup", sl.warmup_steps},
                      {"training_steps", sl.training_steps}}},
                    {"scheduler", sh.name},
                    {"basis", setup_.schedule_on_expert_steps ? "expert_steps" : "global_steps"}};
  st.extra["dtypes"] = {{"master", "F32"}, {"adam", "F32"}};
  st.extra["fp8"] = setup_.fp8 ? "e4m3" : "none";
  st.extra["sources"] = {{"high", setup_.high.weights ? json(*setup_.high.weights) : json("fresh")},
                         {"low", setup_.low.weights ? json(*setup_.low.weights) : json("fresh")}};
  if (setup_.lora.on) st.extra["lora"] = lora_record(setup_.lora);
  st.options_sha256 = options_sha_;
  st.options = setup_.maths;
  runtime::CheckpointWriter w = dir->begin_checkpoint(st.global_step);
  // A LoRA checkpoint names its base by path; fresh experts have none, so they are saved.
  write_experts_checkpoint(w.dir(), *high_, *low_, st, {!setup_.high.weights, !setup_.low.weights});
  dir->commit_checkpoint(w, setup_.run.checkpoints_total_limit);
}

StepReport Trainer::report(bool high, double loss, const ClipResult& clip, double max_abs_grad,
                           const std::vector<double>& ts, const std::vector<bool>& first_frame,
                           const data::Batch& batch, int64_t samples) const {
  const ExpertStep& e = high ? *high_ : *low_;
  const int64_t step = global_step();
  StepReport r;
  r.expert = high ? "high" : "low";
  r.expert_step = e.global_step();
  r.loss = static_cast<float>(loss);
  r.lr = e.learning_rate();
  r.grad_norm = clip.grad_norm;
  r.grad_clip = clip.max_norm;
  r.samples = samples;
  json& x = r.extra;
  x["max_abs_grad"] = max_abs_grad;
  x["steps_high"] = high_->global_step();
  x["steps_low"] = low_->global_step();
  x["share_high"] = static_cast<double>(high_->global_step()) / static_cast<double>(step);
  x["timesteps"] = ts;
  add_batch_fields(x, batch);
  if (latents_->cached()) x["cache_hits"] = latents_->hits(), x["cache_misses"] = latents_->misses();
  if (cond_ != ImageConditioning::None) x["conditioning"] = cond_ == ImageConditioning::I2V ? "i2v" : "ti2v";
  if (!first_frame.empty()) x["image_conditioned"] = first_frame;
  return r;
}

void Trainer::log_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate& rate) {
  log_expert_scalars(tb, r, rate, global_step());
}

std::optional<StepReport> Trainer::train_step() {
  // An update skipped for non-finite gradients is tried again on the next batch (the guard stops
  // the run after max_nonfinite_steps of them in a row).
  for (;;) {
    bool skipped = false;
    auto r = attempt_step(&skipped);
    if (!skipped) return r;
  }
}

std::optional<StepReport> Trainer::attempt_step(bool* skipped) {
  if (!start_rendered_) {  // the baseline, before the first update of a fresh run
    start_rendered_ = true;
    if (setup_.validation.at_start && global_step() == 0) render_videos(0);
  }
  const int64_t A = setup_.run.gradient_accumulation_steps;
  const uint64_t seed = setup_.run.seed;
  const int64_t gs = global_step();
  const bool high = draw_route(setup_.routing, seed, gs);
  ExpertStep& e = high ? *high_ : *low_;
  activate(high);
  e.begin_accumulation();
  double loss = 0;
  int64_t samples = 0;
  std::vector<double> ts;
  std::vector<bool> first_frame;  // ti2v: which samples were image-conditioned
  data::Batch batch;
  bool ended = false;
  StepTimes times;
  bool encoded_ahead = false;
  const models::BlockSwapStats swap0 = e.model()->block_swap_stats();
  const models::CheckpointOffloadStats offload0 = models::checkpoint_offload_stats();
  for (int64_t micro = 0; micro < A; ++micro) {
    Prepared p = ahead_.next(times, [this] { return prepare_batch(false); });
    batch = std::move(p.batch);
    if (batch.plan.epoch != epoch_) {
      epoch_ = batch.plan.epoch;
      if (epoch_ >= num_epochs_) ended = true;
    }
    // The ranks' last batches fall in different steps: stop together, before the micro-batch's
    // collective (fold_gradients under ZeRO).
    if (run_->any_rank(ended)) {
      e.release_gradients();
      return std::nullopt;
    }
    ExpertLatents z = std::move(p.z);
    encoded_ahead = p.ahead;
    // The next micro-batch (of this step or the next) is taken and encoded while this one trains.
    if (setup_.overlap_vae_encode) ahead_.start([this] { return prepare_batch(true); });
    PhaseTimer model_time(&times.model_s, device_);
    const int64_t B = z.z.size(0), F = z.z.size(2);
    const int64_t gm = run_->global_micro(micro);
    StepDraw d = draw_step(setup_.routing, seed, gs, gm, 0, B);
    auto noise = draw_noise(seed, gs, gm, 0, B, z.z[0].sizes().vec());
    for (int64_t b = 0; b < B; ++b) {
      ExpertStepInput in;
      in.x0 = z.z[b];
      condition(in, z, b, cond_ == ImageConditioning::TI2V && draw_ti2v_image(seed, gs, gm, 0, b, F));
      if (cond_ == ImageConditioning::TI2V) first_frame.push_back(in.clean_first_frame);
      in.noise = noise[static_cast<size_t>(b)];
      in.sigma = d.sigma[static_cast<size_t>(b)];
      in.t = d.t[static_cast<size_t>(b)];
      in.context = texts_->get(meta_, meta_.rows[batch.clips[static_cast<size_t>(b)].meta_index]);
      const double w = weight(in.t);
      loss += w * e.accumulate(in, w / static_cast<double>(B * A)) / static_cast<double>(B * A);
      ts.push_back(in.t);
    }
    e.fold_gradients();
    samples += B;
  }
  ClipResult clip;
  double max_abs = 0;
  {
    PhaseTimer t(&times.model_s, device_);
    if (parallel::DataParallel* dp = run_->data_parallel()) {
      if (!e.sharded()) dp->average_gradients(e.optimizer_tensors());  // ZeRO reduces onto the owners instead
      loss = dp->mean(loss);
    }
    clip = e.finish_gradients();
    max_abs = e.last_max_abs_gradient();
    if (!guard_.admit(clip.grad_norm, loss, gs + 1, high ? "high_noise" : "low_noise")) {
      e.release_gradients();  // nothing applied, the step not counted
      last_cursor_ = batch.plan.cursor;
      *skipped = true;
      return std::nullopt;
    }
    // The schedule counts this expert's updates, or every update of the run.
    e.update(setup_.schedule_on_expert_steps ? std::nullopt : std::optional<int64_t>(gs));
    e.release_gradients();  // the idle expert keeps no gradient buffers
  }
  last_cursor_ = batch.plan.cursor;
  StepReport r = report(high, loss, clip, max_abs, ts, first_frame, batch, samples);
  times.add_to(r.extra);
  r.extra["encoded_ahead"] = encoded_ahead;
  if (setup_.blocks_to_swap > 0) {  // the copies' part of model_s, and their count
    const models::BlockSwapStats swap1 = e.model()->block_swap_stats();
    r.extra["swap_wait_s"] = swap1.wait_s - swap0.wait_s;
    r.extra["swap_copies"] = swap1.copies - swap0.copies;
  }
  if (setup_.checkpoint_offload) {  // block inputs sent to host memory and back
    const models::CheckpointOffloadStats offload1 = models::checkpoint_offload_stats();
    r.extra["offload_copies"] = offload1.copies - offload0.copies;
    r.extra["offload_mb"] = static_cast<double>(offload1.bytes - offload0.bytes) / (1 << 20);
  }
  return r;
}

// The loader's next micro-batch and its latents; on the encoding-ahead thread, with its GPU work
// on a stream of its own.
Prepared Trainer::prepare_batch(bool side_thread) {
  Prepared p;
  const double waited = loader_->wait_seconds();
  p.batch = loader_->next();
  p.data_wait_s = loader_->wait_seconds() - waited;
  if (!side_thread) {
    PhaseTimer t(&p.vae_s, device_);
    p.z = latents_->of(p.batch);
    return p;
  }
  p.ahead = true;
  p.vae_s = encode_on_side_stream(device_, [&] { p.z = latents_->of(p.batch); });
  for (auto* t : {&p.z.z, &p.z.image, &p.z.y}) *t = for_default_stream(*t);
  return p;
}

}  // namespace experts

int run_train_experts(const std::vector<std::string>& argv) {
  return run_training_verb<experts::Trainer>(
      experts_option_schema(), argv, [](io::Config& cfg) { return resolve_experts_setup(cfg); },
      DeviceWishes{true, "both experts stay in CPU memory"},
      [](io::Config& cfg, const ExpertsSetup& s) {
        check_memory_fits(cfg,
                          [&](int64_t ranks, const MemoryTarget& t) { return experts_training_memory(s, ranks, t); });
      });
}

}  // namespace ws::train
