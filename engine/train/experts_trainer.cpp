// SPDX-License-Identifier: Apache-2.0
#include "train/experts_trainer.h"

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
#include "train/expert_conditioning.h"
#include "train/expert_latents.h"
#include "train/experts_eval.h"
#include "train/expert_routing.h"
#include "train/expert_lora.h"
#include "train/encode_ahead.h"
#include "train/expert_step.h"
#include "train/step_times.h"
#include "train/experts_checkpoint.h"
#include "train/experts_report.h"
#include "train/experts_options.h"
#include "train/resume_checks.h"
#include "train/experts_setup.h"
#include "train/latent_cache.h"
#include "train/lr_schedule.h"
#include "train/text_embeddings.h"
#include "train/training_device.h"
#include "train/training_verb.h"
#include "train/upsampler_setup.h"

namespace ws::train {

using json = nlohmann::json;

namespace {

// Buckets align to the VAE stride × patch 2 (32 pixels for the Wan2.2 VAE, 16 for Wan2.1):
// the loader aligns to lcm(16, 16·scale), so scale = stride / 8.
double loader_scale(const ExpertsSetup& s) { return static_cast<double>(s.vae_spatial_factor) / 8.0; }

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
  std::optional<StepReport> train_step() override;
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
  data::Metadata meta_;
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
  std::string options_sha_;
  // Last, so it is joined before anything it uses goes away.
  Ahead<Prepared> ahead_;
};

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

void Trainer::build_loader() {
  const DataOptions& d = setup_.data;
  meta_ = data::read_metadata(d.meta, d.dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows_with_latents(meta_, d.stride, &dropped);
  for (const auto& r : dropped) ws::log::warn("dataset row {} ({}) skipped: {}", r.meta_index, r.file, r.reason);
  if (rows.empty()) throw Error(d.meta + ": no usable rows (every row was skipped)");
  check_expert_latent_rows(rows, d.meta, setup_.high.config);
  const int world = run_->world();
  data::LoaderOptions lo;
  lo.seed = setup_.run.seed;
  lo.sample_size = d.sample_size;
  lo.n_frames = d.n_frames;
  lo.stride = d.stride;
  lo.scale = loader_scale(setup_);
  lo.batch_size = d.batch_size;
  lo.enable_bucket = d.enable_bucket;
  lo.random_hw_adapt = d.random_hw_adapt;
  lo.frames_per_row = setup_.latent_cache_dir.has_value();  // a cached row always has the same frames
  lo.workers = static_cast<int>(d.workers);
  lo.rank = run_->rank();
  lo.world = world;
  const int64_t n = static_cast<int64_t>(rows.size());
  loader_ =
      std::make_unique<data::ClipLoader>(std::move(rows), lo, [](const std::string& file, const std::string& reason) {
        ws::log::warn("{}: skipped, a random other row trains instead ({})", file, reason);
      });
  const int64_t batches = std::max<int64_t>(1, n / lo.batch_size);
  const int64_t A = setup_.run.gradient_accumulation_steps;
  const int64_t steps_per_epoch = std::max<int64_t>(1, ((batches + world - 1) / world + A - 1) / A);
  if (setup_.run.max_train_steps) {
    max_steps_ = *setup_.run.max_train_steps;
    num_epochs_ = std::numeric_limits<int64_t>::max();  // the step count alone ends the run
  } else {
    num_epochs_ = setup_.run.num_train_epochs;
    max_steps_ = num_epochs_ * steps_per_epoch;
    run_->set_derived("max_train_steps", max_steps_, "num_train_epochs × steps per epoch");
  }
  ws::log::info("{} usable rows, about {} steps per epoch, {} steps", n, steps_per_epoch, max_steps_);
}

void Trainer::activate(bool high) {
  if (!swap_experts_) return;
  ExpertStep& on = high ? *high_ : *low_;
  ExpertStep& off = high ? *low_ : *high_;
  if (on.device() == device_) return;
  off.to(torch::kCPU);  // first, so both never share the GPU
  on.to(device_);
}

void Trainer::build_models() {
  if (!setup_.vae_file.empty()) {
    ws::log::info("loading the VAE from {}", setup_.vae_file);
    models::WanVaeOptions vo;
    if (device_.is_cuda()) {
      vo.device = "cuda:" + std::to_string(device_.index());
      vo.bf16 = setup_.run.bf16;
      vo.low_vram = setup_.run.low_vram;
    }
    vae_ = models::WanVae::load(setup_.vae_file, setup_.vae_config, vo);
  } else {
    ws::log::info("every row brings its latent file: no VAE");
  }
  texts_ = std::make_unique<TextEmbeddings>(setup_.text_dir, setup_.high.config.text_len, setup_.high.config.text_dim);

  // docs/design/dual-expert-training.md §4: per-expert schedules over each expert's expected share of
  // the steps (or the global count); each ExpertStep owns its schedule.
  const int64_t n_high =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(setup_.routing.p_high() * static_cast<double>(max_steps_))));
  const int64_t n_low = std::max<int64_t>(1, max_steps_ - n_high);
  const bool expert_basis = setup_.schedule_on_expert_steps;
  auto make = [&](const ExpertSource& src, const char* tag, double expert_lr) {
    const bool is_high = tag[0] == 'h';
    models::WanModel m{nullptr};
    if (src.weights) {
      ws::log::info("loading the {} expert from {}", tag, *src.weights);
      m = models::load_wan_model(src.config, *src.weights);
    } else {
      // Fresh experts (the tiny demo): each one's initial weights follow the seed and its name.
      torch::manual_seed(data::Rng::keyed(setup_.run.seed, "init", is_high ? 1 : 0).derive_seed());
      m = models::WanModel(src.config);
    }
    m->set_gradient_checkpointing(setup_.optimizer.gradient_checkpointing);
    m->set_fp8(setup_.fp8);
    // bf16 matmuls and attention from fp32 master weights (docs/design/wan-dit.md §8), on the GPU only.
    if (device_.is_cuda() && setup_.run.bf16) m->set_compute_dtype(torch::kBFloat16);
    ExpertStepOptions o;
    o.learning_rate = expert_lr;
    o.adam = setup_.optimizer.adam;
    o.clip = setup_.optimizer.clip;
    o.schedule = setup_.optimizer.schedule;
    o.schedule.warmup_steps = is_high ? setup_.lr_warmup_steps_high : setup_.lr_warmup_steps_low;
    o.schedule.training_steps = expert_basis ? (is_high ? n_high : n_low) : max_steps_;
    o.schedule.base_lr = expert_lr;
    if (!setup_.lora.on) return std::make_unique<ExpertStep>(m, o);
    return std::make_unique<ExpertStep>(m, o,
                                        make_expert_lora(m, is_high ? setup_.lora.high : setup_.lora.low,
                                                         setup_.lora.base_bf16, setup_.run.seed, is_high,
                                                         /*fp8_only=*/src.weights.has_value()));
  };
  cond_ = image_conditioning(setup_.high.config.model_type);
  latents_ = std::make_unique<ExpertLatentSource>(vae_.get(), setup_.vae_file, cond_, setup_.latent_cache_dir);
  high_ = make(setup_.high, "high", setup_.learning_rate_high);
  low_ = make(setup_.low, "low", setup_.learning_rate_low);
  if (parallel::DataParallel* dp = run_->data_parallel()) {
    // Every rank starts from rank 0's weights (fresh ones differ only if a seed was changed).
    for (auto* e : {high_.get(), low_.get()}) {
      dp->broadcast(e->parameters());
      if (e->model()->fp8()) e->model()->refresh_fp8();
      if (setup_.zero2) e->shard(*dp);
    }
  }
  if (setup_.bf16_weights)
    for (auto* e : {high_.get(), low_.get()}) e->keep_master_weights();
  ws::log::info("optimizer state on this rank: {:.1f} MB{}", static_cast<double>(optimizer_bytes()) / 1e6,
                high_->sharded() ? " (ZeRO-2: this rank's shard of each expert)" : "");
  // Both experts on the GPU, or (low_vram) each in turn with the idle one in CPU memory
  // (docs/design/dual-expert-training.md §5).
  swap_experts_ = device_.is_cuda() && setup_.run.low_vram;
  if (device_.is_cuda() && !swap_experts_) {
    high_->to(device_);
    low_->to(device_);
  }
}

void Trainer::resume() {
  if (!setup_.resume_dir) return;
  const std::string dir = *setup_.resume_dir;
  LoadedExperts ck = read_experts_checkpoint(dir);
  const ExpertsState& st = ck.state;
  check_resume_seed(dir, st.seed, setup_.run.seed);
  if (st.boundary != setup_.routing.boundary() || st.routing_mode != setup_.routing.mode)
    throw Error(dir + ": the checkpoint routes with boundary " + std::to_string(st.boundary) + " (" + st.routing_mode +
                "), this run with " + std::to_string(setup_.routing.boundary()) + " (" + setup_.routing.mode + ")");
  restore_expert(*high_, true, ck, dir);
  restore_expert(*low_, false, ck, dir);
  loader_->restore(st.cursor);
  last_cursor_ = st.cursor;
  epoch_ = st.epoch;
  resume_step_ = st.global_step;
  warn_changed_options(st.options_sha256, st.options, options_sha_, setup_.maths);
  ws::log::info("resumed from {} at step {} (high {}, low {})", dir, st.global_step, st.steps_high, st.steps_low);
}

void Trainer::condition(ExpertStepInput& in, const ExpertLatents& z, int64_t b, bool ti2v_image) const {
  if (cond_ == ImageConditioning::I2V) {
    if (z.y.defined()) in.y = z.y[b];
    else if (z.image.defined()) in.y = i2v_y(z.image[b]);
    else throw Error("i2v experts: a latent file without 'y' (the mask and image latent, [in_dim − C, F, h, w])");
    const int64_t want = high_->model()->config().in_dim - high_->model()->config().out_dim;
    if (in.y.size(0) != want)
      throw Error("i2v experts: 'y' has " + std::to_string(in.y.size(0)) + " channels, the experts need " +
                  std::to_string(want));
  }
  if (cond_ == ImageConditioning::TI2V) in.clean_first_frame = ti2v_image;
}

void Trainer::build_eval() {
  if (!setup_.eval_meta || !run_->is_rank_zero()) return;  // eval runs on rank 0 alone
  const DataOptions& d = setup_.data;
  data::Metadata meta = data::read_metadata(*setup_.eval_meta, d.dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows_with_latents(meta, d.stride, &dropped);
  for (const auto& r : dropped) ws::log::warn("eval row {} ({}) skipped: {}", r.meta_index, r.file, r.reason);
  check_expert_latent_rows(rows, *setup_.eval_meta, setup_.high.config);
  auto [kept, kept_t] = select_eval_rows(rows, setup_.eval_timesteps, setup_.eval_max_samples_per_t);
  if (kept.empty()) throw Error(*setup_.eval_meta + ": no usable eval rows");
  data::LoaderOptions lo;
  lo.seed = static_cast<uint64_t>(setup_.eval_seed);
  lo.sample_size = d.sample_size;
  lo.n_frames = d.n_frames;
  lo.stride = d.stride;
  lo.scale = loader_scale(setup_);
  lo.enable_bucket = d.enable_bucket;
  lo.random_hw_adapt = false;
  lo.frames_per_row = true;  // fixed frames per row: every eval sees the same inputs
  lo.start_at_zero = true;   // from each clip's first frame (docs/design/dual-expert-training.md §6)
  lo.workers = 0;
  data::ClipLoader loader(kept, lo);
  ws::log::info("encoding {} eval clips", kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    data::BatchPlan plan;
    plan.seq = static_cast<int64_t>(i);
    plan.items = {data::SampleRef{static_cast<int64_t>(i), 0, static_cast<int64_t>(i)}};
    data::Batch b = loader.make_batch(plan);
    EvalItem it;
    it.row = b.clips.front().meta_index;
    const ExpertLatents z = latents_->direct(b);
    it.in.x0 = z.z[0].cpu();  // the eval set waits in CPU memory
    it.in.t = kept_t[i];
    it.in.sigma = sigma_from_t(it.in.t);
    it.in.context = texts_->get(meta, meta.rows[it.row]);
    // ti2v eval rows are all image-conditioned (what the model is asked at inference).
    condition(it.in, z, 0, it.in.x0.size(1) > 1);
    data::Rng r = data::Rng::keyed(static_cast<uint64_t>(setup_.eval_seed), "eval", static_cast<int64_t>(it.row));
    auto gen = at::detail::createCPUGenerator(r.derive_seed());
    it.in.noise = torch::randn(it.in.x0.sizes(), gen, torch::TensorOptions().dtype(torch::kFloat));
    eval_.push_back(std::move(it));
  }
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
    // The schedule counts this expert's updates, or every update of the run.
    e.update(setup_.schedule_on_expert_steps ? std::nullopt : std::optional<int64_t>(gs));
    e.release_gradients();  // the idle expert keeps no gradient buffers
  }
  last_cursor_ = batch.plan.cursor;
  StepReport r = report(high, loss, clip, max_abs, ts, first_frame, batch, samples);
  times.add_to(r.extra);
  r.extra["encoded_ahead"] = encoded_ahead;
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

}  // namespace

int run_train_experts(const std::vector<std::string>& argv) {
  return run_training_verb<Trainer>(
      experts_option_schema(), argv, [](io::Config& cfg) { return resolve_experts_setup(cfg); },
      DeviceWishes{true, "both experts stay in CPU memory"});
}

}  // namespace ws::train
