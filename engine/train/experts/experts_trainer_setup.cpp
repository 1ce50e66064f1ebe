// SPDX-License-Identifier: Apache-2.0
// The dual-expert trainer's set-up: the loader, both experts and the VAE, resume, the eval set.
#include "train/experts/experts_trainer_impl.h"

namespace ws::train::experts {

void Trainer::build_loader() {
  const DataOptions& d = setup_.data;
  meta_ = dataset::read_metadata(d.meta, d.dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::extraction_samples(data::usable_rows_with_latents(meta_, d.stride, &dropped), d.n_frames, d.stride,
                                       d.extraction, &dropped);
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
  ws::log::info("{} samples ({} frame extraction), about {} steps per epoch, {} steps", n,
                dataset::extraction_name(d.extraction.mode), steps_per_epoch, max_steps_);
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
    m->set_checkpoint_offload(setup_.checkpoint_offload);
    m->set_checkpoint_parts(setup_.checkpoint_parts);
    m->set_fp8(setup_.fp8);
    // bf16 matmuls and attention from fp32 master weights (docs/design/wan-dit.md §8), on the GPU only.
    if (device_.is_cuda() && setup_.run.bf16) m->set_compute_dtype(torch::kBFloat16);
    m->set_blocks_to_swap(setup_.blocks_to_swap);
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
  dataset::Metadata meta = dataset::read_metadata(*setup_.eval_meta, d.dir);
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

}  // namespace ws::train::experts
