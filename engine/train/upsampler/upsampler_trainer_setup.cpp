// SPDX-License-Identifier: Apache-2.0
// The upsampler trainer's set-up: the model and the frozen VAE, the loader, resume.
#include "train/upsampler/upsampler_trainer_impl.h"

namespace ws::train::upsampler {

void Trainer::build_model_and_vae() {
  const bool pixel = setup_.pixel_loss;
  models::WanVaeOptions vo;
  vo.pack_weights = !pixel;  // packed oneDNN weights are inference-only; pixel loss backprops the decoder
  if (device_.is_cuda()) {
    vo.device = "cuda:" + std::to_string(device_.index());
    vo.bf16 =
        setup_.run.bf16;  // docs/design/upsampler-training.md §9.5: a bf16 VAE; the upsampler keeps fp32 master weights
    vo.low_vram = setup_.run.low_vram;
  }
  ws::log::info("loading the VAE from {}", setup_.vae_file);
  vae_ = models::WanVae::load(setup_.vae_file, setup_.vae_config, vo);
  for (auto& p : vae_->net().parameters()) p.set_requires_grad(false);
  if (pixel) {
    // WanVae::decode runs under no_grad; the pixel loss decodes through the network itself
    // with the same normalisation (WanVae's constructor: docs/design/wan22-vae.md §9 constants for z_dim 48, else
    // identity).
    const int64_t z = vae_->config().z_dim;
    const std::vector<double> mean =
        z == 48 ? models::wan22_latent_mean() : std::vector<double>(static_cast<size_t>(z), 0.0);
    const std::vector<double> stdv =
        z == 48 ? models::wan22_latent_std() : std::vector<double>(static_cast<size_t>(z), 1.0);
    latent_mean_ = torch::tensor(std::vector<float>(mean.begin(), mean.end()), torch::kFloat).view({1, -1, 1, 1, 1});
    latent_inv_std_ =
        1.0 / torch::tensor(std::vector<float>(stdv.begin(), stdv.end()), torch::kFloat).view({1, -1, 1, 1, 1});
  }

  if (setup_.latent_cache_dir) {
    const std::string& dir = *setup_.latent_cache_dir;
    ws::log::info("latent cache in {} (hashing the VAE weights)", dir);
    cache_ = std::make_unique<LatentCache>(dir, sha256_file(setup_.vae_file));
  }

  torch::manual_seed(setup_.run.seed);  // a fresh model's initial weights follow the seed
  models::LatentUpsampler model(setup_.model);
  if (setup_.warm_start) {
    const std::string& p = *setup_.warm_start;
    io::StateDict sd =
        fs::is_dir(p)
            ? io::read_model_dir(fs::exists(fs::join(p, "latent_upsampler")) ? fs::join(p, "latent_upsampler") : p)
                  .weights
            : io::load_weights(p);
    auto report = io::load_state_dict(*model, sd, io::LoadMode::WarmStart, p);
    ws::log::info("warm start from {}: {}", p, report.summary());
    if (!report.mismatched.empty() || !report.missing.empty())
      ws::log::warn("warm start from {} skipped keys: {}", p, report.summary());
  }
  model->set_gradient_checkpointing(setup_.optimizer.gradient_checkpointing);
  model->to(device_);
  // docs/design/upsampler-training.md §9.5: bf16 compute for the upsampler on the GPU, fp32 master weights, AdamW state
  // and loss.
  if (device_.is_cuda() && setup_.run.bf16) model->set_compute_dtype(torch::kBFloat16);

  const OptimizerOptions& opt = setup_.optimizer;
  UpsamplerUpdateOptions o;
  o.learning_rate = opt.learning_rate;
  if (opt.scale_lr)
    o.learning_rate *=
        static_cast<double>(setup_.run.gradient_accumulation_steps * setup_.data.batch_size * run_->world());
  o.adam = opt.adam;
  o.clip = opt.clip;
  o.gradient_accumulation_steps = setup_.run.gradient_accumulation_steps;
  o.trainable_modules = setup_.trainable_modules;
  o.trainable_modules_low_learning_rate = setup_.trainable_modules_low_learning_rate;
  o.use_ema = setup_.use_ema;
  o.winograd_convs = setup_.winograd_convs;
  o.schedule = opt.schedule;
  o.schedule.training_steps = max_steps_;
  o.schedule.base_lr = o.learning_rate;
  o.schedule.validate();
  if (parallel::DataParallel* dp = run_->data_parallel()) {
    o.reduce_gradients = [dp](const std::vector<torch::Tensor>& params) { dp->average_gradients(params); };
    dp->broadcast(model->parameters());  // every rank starts from rank 0's weights
  }
  updater_ = std::make_unique<UpsamplerUpdater>(model, o);
  if (parallel::DataParallel* dp = run_->data_parallel()) {
    // The gradient mean is elementwise: every rank must hold its conv weights in one order.
    const double mine = static_cast<double>(updater_->packing_fingerprint());
    if (dp->max(mine) != -dp->max(-mine)) {
      ws::log::warn("data-parallel ranks pick different oneDNN weight orders: conv weights stay plain");
      updater_->drop_packing();
    }
  }
}

void Trainer::build_loader() {
  const DataOptions& d = setup_.data;
  dataset::Metadata meta = dataset::read_metadata(d.meta, d.dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::extraction_samples(data::usable_rows(meta, d.stride, &dropped), d.n_frames, d.stride, d.extraction,
                                       &dropped);
  for (const auto& d : dropped) ws::log::warn("dataset row {} ({}) skipped: {}", d.meta_index, d.file, d.reason);
  if (!dropped.empty())
    ws::log::warn("{} of {} dataset rows skipped (see the lines above)", dropped.size(), meta.rows.size());
  if (rows.empty()) throw Error(d.meta + ": no usable rows (every row was skipped)");

  data::LoaderOptions lo;
  lo.seed = setup_.run.seed;
  lo.sample_size = d.sample_size;
  lo.n_frames = d.n_frames;
  lo.stride = d.stride;
  lo.scale = setup_.model.rational_spatial_scale;
  lo.batch_size = d.batch_size;
  lo.enable_bucket = d.enable_bucket;
  lo.random_hw_adapt = d.random_hw_adapt;
  lo.degradation = setup_.degradation;
  lo.min_ops = setup_.degradation_range ? setup_.degradation_range->first : 1;
  lo.max_ops = setup_.degradation_range ? setup_.degradation_range->second : 4;
  lo.frames_per_row = setup_.latent_cache_dir.has_value();
  lo.workers = static_cast<int>(d.workers);
  lo.rank = run_->rank();
  lo.world = run_->world();
  const int world = run_->world();
  const int64_t n = static_cast<int64_t>(rows.size());
  loader_ =
      std::make_unique<data::ClipLoader>(std::move(rows), lo, [](const std::string& file, const std::string& reason) {
        ws::log::warn("{}: skipped, a random other row trains instead ({})", file, reason);
      });

  // docs/design/upsampler-training.md §9.3: steps per epoch from the batch estimate; max_train_steps wins when given.
  const int64_t batches = std::max<int64_t>(1, n / lo.batch_size);
  const int64_t per_rank = (batches + world - 1) / world;
  const int64_t A = setup_.run.gradient_accumulation_steps;
  steps_per_epoch_ = std::max<int64_t>(1, (per_rank + A - 1) / A);
  if (setup_.run.max_train_steps) {
    max_steps_ = *setup_.run.max_train_steps;
  } else {
    max_steps_ = setup_.run.num_train_epochs * steps_per_epoch_;
    run_->set_derived("max_train_steps", max_steps_, "num_train_epochs × steps per epoch");
  }
  num_epochs_ = (max_steps_ + steps_per_epoch_ - 1) / steps_per_epoch_;
  ws::log::info("{} samples ({} frame extraction), about {} steps per epoch, {} steps, {} epochs", n,
                dataset::extraction_name(d.extraction.mode), steps_per_epoch_, max_steps_, num_epochs_);
}

void Trainer::resume() {
  if (!setup_.resume_dir) return;
  const std::string dir = *setup_.resume_dir;
  LoadedCheckpoint ck = read_upsampler_checkpoint(dir);
  check_resume_seed(dir, ck.state.seed, setup_.run.seed);
  auto ck_cfg = models::LatentUpsamplerConfig::from_json(ck.model_config, dir + "/latent_upsampler/config.json");
  json a = ck_cfg.to_json(), b = setup_.model.to_json();
  if (a != b) throw Error(dir + ": the checkpoint's model config " + a.dump() + " differs from this run's " + b.dump());
  const auto plain = updater_->plain_weights();  // the files hold the plain order
  io::load_state_dict(*updater_->model(), ck.weights, io::LoadMode::Strict, dir);
  updater_->optimizer().load_state_dict(ck.optimizer, dir + "/trainer_state/optimizer.safetensors");
  if (Ema* ema = updater_->ema()) {
    if (!ck.ema_shadow)
      throw Error(dir + ": use_ema is on but the checkpoint has no EMA (trainer_state/ema_shadow.safetensors)");
    ema->load_shadow(*ck.ema_shadow, dir + "/trainer_state/ema_shadow.safetensors");
    ema->set_optimization_step(ck.state.ema_optimization_step);
  }
  updater_->set_global_step(ck.state.global_step);
  loader_->restore(ck.state.cursor);
  last_cursor_ = ck.state.cursor;
  epoch_ = ck.state.epoch;
  resume_step_ = ck.state.global_step;
  warn_changed_options(ck.state.options_sha256, ck.state.options, options_sha_, setup_.maths);
  ws::log::info("resumed from {} at step {} (epoch {})", dir, resume_step_, epoch_);
}

}  // namespace ws::train::upsampler
