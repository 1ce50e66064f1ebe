#include "train/upsampler_trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "data/clip_loader.h"
#include "data/metadata.h"
#include "data/random_streams.h"
#include "io/safetensors.h"
#include "io/tfevents.h"
#include "io/weights.h"
#include "models/latent_upsampler.h"
#include "models/wan22_vae.h"
#include "run/cancel.h"
#include "run/events.h"
#include "run/logging.h"
#include "run/run_dir.h"
#include "train/latent_cache.h"
#include "train/upsampler_checkpoint.h"
#include "train/upsampler_options.h"
#include "train/upsampler_setup.h"
#include "dist/data_parallel.h"
#include "train/training_device.h"
#include "train/upsampler_update.h"
#include "train/training_verb.h"
#include "train/upsampler_validation.h"

namespace ws::train {

using json = nlohmann::json;

namespace {

// Encodes [B, 3, L, H, W] in slices of `mini` clips (vae_mini_batch) and concatenates.
torch::Tensor encode_batch(models::Wan22Vae& vae, const torch::Tensor& x, int64_t mini) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < x.size(0); i += mini) parts.push_back(vae.encode(x.narrow(0, i, std::min(mini, x.size(0) - i))));
  return torch::cat(parts, 0);
}

class Trainer {
 public:
  Trainer(io::Config& cfg, UpsamplerSetup setup) : cfg_(cfg), setup_(std::move(setup)) {}
  int run();
  int64_t global_step() const { return updater_ ? updater_->global_step() : 0; }

 private:
  void open_run_dir();
  void build_model_and_vae();
  void build_loader();
  void resume();
  void train_loop();
  void on_update(const UpdateRecord& rec, const data::Batch& batch, double step_seconds);
  void checkpoint(bool final_save);
  void validate(int64_t step);
  torch::Tensor micro_step(const data::Batch& batch, int64_t micro, std::optional<UpdateRecord>* rec);
  torch::Tensor decode_with_grad(const torch::Tensor& latent);
  void encode(const data::Batch& batch, torch::Tensor* z_hr, torch::Tensor* z_lr);

  io::Config& cfg_;
  UpsamplerSetup setup_;
  std::unique_ptr<run::RunDir> run_;
  std::unique_ptr<run::Heartbeat> heartbeat_;
  std::unique_ptr<io::TfEventsWriter> tb_;
  std::unique_ptr<models::Wan22Vae> vae_;
  std::unique_ptr<UpsamplerUpdater> updater_;
  std::unique_ptr<data::ClipLoader> loader_;
  std::unique_ptr<LatentCache> cache_;
  torch::Tensor latent_mean_, latent_inv_std_;  // the VAE's docs/design/wan22-vae.md §9 normalisation, for the pixel-loss decode
  data::LoaderCursor last_cursor_;  // of the last batch used by a completed update
  int64_t epoch_ = 0;
  int64_t resume_step_ = 0;
  int64_t max_steps_ = 0, num_epochs_ = 0, steps_per_epoch_ = 1;
  int rank_ = 0, world_ = 1;
  std::unique_ptr<dist::DataParallel> dp_;  // null with one process
  bool cancelled_ = false;
  bool any_rank(bool v) { return dp_ ? dp_->any(v) : v; }
  torch::Device device_{torch::kCPU};  // CUDA when this LibTorch has it and a GPU is present
  uint64_t seed_ = 42;
  std::deque<std::pair<double, int64_t>> recent_;  // (step seconds, samples) of the last 10 updates
  double samples_since_update_ = 0;
  std::string options_sha_;
  json options_;
};

void Trainer::open_run_dir() {
  run_ = dist::open_run_for_rank(setup_.output_dir, rank_);
  if (run_) heartbeat_ = std::make_unique<run::Heartbeat>(5.0);
}

void Trainer::build_model_and_vae() {
  const bool pixel = cfg_.boolean("enable_pixel_loss");
  models::Wan22VaeOptions vo;
  vo.pack_weights = !pixel;  // packed oneDNN weights are inference-only; pixel loss backprops the decoder
  if (device_.is_cuda()) {
    vo.device = "cuda:" + std::to_string(device_.index());
    vo.bf16 = cfg_.str("mixed_precision") == "bf16";  // docs/design/upsampler-training.md §9.5: a bf16 VAE; the upsampler keeps fp32 master weights
    vo.low_vram = cfg_.boolean("low_vram");
  }
  spdlog::info("loading the VAE from {}", setup_.vae_file);
  vae_ = models::Wan22Vae::load(setup_.vae_file, setup_.vae_config, vo);
  for (auto& p : vae_->net().parameters()) p.set_requires_grad(false);
  if (pixel) {
    // Wan22Vae::decode runs under no_grad; the pixel loss decodes through the network itself
    // with the same normalisation (Wan22Vae's constructor: docs/design/wan22-vae.md §9 constants for z_dim 48, else identity).
    const int64_t z = vae_->config().z_dim;
    const std::vector<double> mean = z == 48 ? models::wan22_latent_mean() : std::vector<double>(static_cast<size_t>(z), 0.0);
    const std::vector<double> stdv = z == 48 ? models::wan22_latent_std() : std::vector<double>(static_cast<size_t>(z), 1.0);
    latent_mean_ = torch::tensor(std::vector<float>(mean.begin(), mean.end()), torch::kFloat).view({1, -1, 1, 1, 1});
    latent_inv_std_ = 1.0 / torch::tensor(std::vector<float>(stdv.begin(), stdv.end()), torch::kFloat).view({1, -1, 1, 1, 1});
  }

  if (cfg_.boolean("cache_latents")) {
    const std::string dir = cfg_.opt_str("latent_cache_dir").value_or(fs::join(setup_.output_dir, "latent_cache"));
    spdlog::info("latent cache in {} (hashing the VAE weights)", dir);
    cache_ = std::make_unique<LatentCache>(dir, sha256_file(setup_.vae_file));
  }

  torch::manual_seed(seed_);  // a fresh model's initial weights follow the seed
  models::LatentUpsampler model(setup_.model);
  if (setup_.warm_start) {
    const std::string& p = *setup_.warm_start;
    io::StateDict sd = fs::is_dir(p) ? io::read_model_dir(fs::exists(fs::join(p, "latent_upsampler")) ? fs::join(p, "latent_upsampler") : p).weights
                                     : io::load_weights(p);
    auto report = io::load_state_dict(*model, sd, io::LoadMode::WarmStart, p);
    spdlog::info("warm start from {}: {}", p, report.summary());
    if (!report.mismatched.empty() || !report.missing.empty())
      spdlog::warn("warm start from {} skipped keys: {}", p, report.summary());
  }
  model->set_gradient_checkpointing(cfg_.boolean("gradient_checkpointing"));
  model->to(device_);
  // docs/design/upsampler-training.md §9.5: bf16 compute for the upsampler on the GPU, fp32 master weights, AdamW state and loss.
  if (device_.is_cuda() && cfg_.str("mixed_precision") == "bf16") model->set_compute_dtype(torch::kBFloat16);

  UpsamplerUpdateOptions o;
  o.learning_rate = cfg_.real("learning_rate");
  if (cfg_.boolean("scale_lr"))
    o.learning_rate *= static_cast<double>(cfg_.integer("gradient_accumulation_steps") * cfg_.integer("train_batch_size") * world_);
  o.adam = {cfg_.real("adam_beta1"), cfg_.real("adam_beta2"), cfg_.real("adam_epsilon"), cfg_.real("adam_weight_decay")};
  o.clip.max_grad_norm = cfg_.opt_real("max_grad_norm").value_or(0.0);
  o.clip.abnormal_norm_clip_start = cfg_.real("abnormal_norm_clip_start");
  o.clip.initial_grad_norm_ratio = cfg_.real("initial_grad_norm_ratio");
  o.gradient_accumulation_steps = cfg_.integer("gradient_accumulation_steps");
  o.trainable_modules = cfg_.strs("trainable_modules");
  o.trainable_modules_low_learning_rate = cfg_.strs("trainable_modules_low_learning_rate");
  o.use_ema = cfg_.boolean("use_ema");
  o.schedule.name = cfg_.str("lr_scheduler");
  o.schedule.warmup_steps = cfg_.integer("lr_warmup_steps");
  o.schedule.training_steps = max_steps_;
  o.schedule.base_lr = o.learning_rate;
  o.schedule.validate();
  if (dp_) {
    dist::DataParallel* dp = dp_.get();
    o.reduce_gradients = [dp](const std::vector<torch::Tensor>& params) { dp->average_gradients(params); };
    dp->broadcast(model->parameters());  // every rank starts from rank 0's weights
  }
  updater_ = std::make_unique<UpsamplerUpdater>(model, o);
}

void Trainer::build_loader() {
  data::Metadata meta = data::read_metadata(setup_.meta_path, setup_.data_dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows(meta, cfg_.integer("video_sample_stride"), &dropped);
  for (const auto& d : dropped) spdlog::warn("dataset row {} ({}) skipped: {}", d.meta_index, d.file, d.reason);
  if (!dropped.empty()) spdlog::warn("{} of {} dataset rows skipped (see the lines above)", dropped.size(), meta.rows.size());
  if (rows.empty()) throw Error(setup_.meta_path + ": no usable rows (every row was skipped)");

  data::LoaderOptions lo;
  lo.seed = seed_;
  lo.sample_size = cfg_.integer("video_sample_size");
  lo.n_frames = cfg_.integer("video_sample_n_frames");
  lo.stride = cfg_.integer("video_sample_stride");
  lo.scale = setup_.model.rational_spatial_scale;
  lo.batch_size = cfg_.integer("train_batch_size");
  lo.enable_bucket = cfg_.boolean("enable_bucket");
  lo.random_hw_adapt = cfg_.boolean("random_hw_adapt");
  lo.degradation = cfg_.boolean("enable_degradation");
  lo.min_ops = setup_.degradation_range ? setup_.degradation_range->first : 1;
  lo.max_ops = setup_.degradation_range ? setup_.degradation_range->second : 4;
  lo.frames_per_row = cfg_.boolean("cache_latents");
  lo.workers = static_cast<int>(cfg_.integer("dataloader_num_workers"));
  lo.rank = rank_;
  lo.world = world_;
  const int64_t n = static_cast<int64_t>(rows.size());
  loader_ = std::make_unique<data::ClipLoader>(std::move(rows), lo, [](const std::string& file, const std::string& reason) {
    spdlog::warn("{}: skipped, a random other row trains instead ({})", file, reason);
  });

  // docs/design/upsampler-training.md §9.3: steps per epoch from the batch estimate; max_train_steps wins when given.
  const int64_t batches = std::max<int64_t>(1, n / lo.batch_size);
  const int64_t per_rank = (batches + world_ - 1) / world_;
  const int64_t A = cfg_.integer("gradient_accumulation_steps");
  steps_per_epoch_ = std::max<int64_t>(1, (per_rank + A - 1) / A);
  if (cfg_.is_set("max_train_steps")) {
    max_steps_ = cfg_.integer("max_train_steps");
  } else {
    max_steps_ = cfg_.integer("num_train_epochs") * steps_per_epoch_;
    cfg_.set("max_train_steps", max_steps_, "num_train_epochs × steps per epoch");
  }
  num_epochs_ = (max_steps_ + steps_per_epoch_ - 1) / steps_per_epoch_;
  spdlog::info("{} usable rows, about {} steps per epoch, {} steps, {} epochs", n, steps_per_epoch_, max_steps_, num_epochs_);
}

void Trainer::resume() {
  if (!setup_.resume_dir) return;
  const std::string dir = *setup_.resume_dir;
  LoadedCheckpoint ck = read_upsampler_checkpoint(dir);
  if (ck.state.seed != static_cast<int64_t>(seed_))
    throw Error(dir + ": the checkpoint was trained with seed " + std::to_string(ck.state.seed) + ", this run has seed " +
                std::to_string(seed_) + " (the random streams would change; use the same seed)");
  auto ck_cfg = models::LatentUpsamplerConfig::from_json(ck.model_config, dir + "/latent_upsampler/config.json");
  json a = ck_cfg.to_json(), b = setup_.model.to_json();
  if (a != b) throw Error(dir + ": the checkpoint's model config " + a.dump() + " differs from this run's " + b.dump());
  io::load_state_dict(*updater_->model(), ck.weights, io::LoadMode::Strict, dir);
  updater_->optimizer().load_state_dict(ck.optimizer, dir + "/trainer_state/optimizer.safetensors");
  if (Ema* ema = updater_->ema()) {
    if (!ck.ema_shadow) throw Error(dir + ": use_ema is on but the checkpoint has no EMA (trainer_state/ema_shadow.safetensors)");
    ema->load_shadow(*ck.ema_shadow, dir + "/trainer_state/ema_shadow.safetensors");
    ema->set_optimization_step(ck.state.ema_optimization_step);
  }
  updater_->set_global_step(ck.state.global_step);
  loader_->restore(ck.state.cursor);
  last_cursor_ = ck.state.cursor;
  epoch_ = ck.state.epoch;
  resume_step_ = ck.state.global_step;
  if (!ck.state.options_sha256.empty() && ck.state.options_sha256 != options_sha_) {
    std::string changed;
    for (auto& [k, v] : options_.items())
      if (!ck.state.options.contains(k) || ck.state.options[k] != v) changed += (changed.empty() ? "" : ", ") + k;
    spdlog::warn("resuming with changed options: {}", changed.empty() ? std::string("(unknown)") : changed);
  }
  spdlog::info("resumed from {} at step {} (epoch {})", dir, resume_step_, epoch_);
}

torch::Tensor Trainer::micro_step(const data::Batch& batch, int64_t micro, std::optional<UpdateRecord>* rec) {
  const int64_t mini = cfg_.integer("vae_mini_batch");
  torch::Tensor z_hr, z_lr;
  encode(batch, &z_hr, &z_lr);
  if (setup_.noise.enabled) {
    // Keyed by the global micro index micro·P + rank: P ranks × A micro-batches draw what one
    // process with A·P micro-batches would.
    data::Rng rng = data::Rng::keyed(seed_, "step", updater_->global_step(), micro * world_ + rank_, 0);
    add_flow_noise(z_hr, z_lr, setup_.noise, rng);
  }
  if (!cfg_.boolean("enable_pixel_loss")) {
    updater_->micro_step(z_lr, z_hr, rec);
    return {};
  }
  // docs/design/upsampler-training.md §8: decode the prediction with gradients through the frozen decoder; score against clean x_hr.
  torch::Tensor pred = updater_->model()->forward(z_lr);
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < pred.size(0); i += mini)
    parts.push_back(decode_with_grad(pred.narrow(0, i, std::min(mini, pred.size(0) - i))));
  torch::Tensor decoded = torch::cat(parts, 0);
  torch::Tensor loss = cfg_.real("pixel_loss_weight") * torch::mse_loss(decoded.to(torch::kFloat), batch.x_hr.to(device_, torch::kFloat));
  updater_->accumulate(loss, rec);
  return {};
}

// Wan22Vae::decode (normalisation undone by the fp32 reciprocal, clamp to [-1, 1]) with
// gradients flowing into the latent; the clamp passes no gradient where it saturates (docs/design/upsampler-training.md §8).
torch::Tensor Trainer::decode_with_grad(const torch::Tensor& latent) {
  vae_->check_latent(latent, "pixel-loss decode");
  torch::Tensor z = latent.to(torch::kFloat) / latent_inv_std_.to(latent.device()) + latent_mean_.to(latent.device());
  // On the VAE's own device and dtype (a bf16 VAE on CUDA), as Wan22Vae::decode does.
  const torch::Tensor w = vae_->net().parameters().front();
  torch::Tensor out = vae_->net().decode_raw(z.to(w.device(), w.scalar_type()), vae_->options().schedule);
  return torch::clamp(out.to(latent.device(), torch::kFloat), -1.0, 1.0);
}

void Trainer::encode(const data::Batch& batch, torch::Tensor* z_hr, torch::Tensor* z_lr) {
  const int64_t mini = cfg_.integer("vae_mini_batch");
  const torch::Tensor x_hr = batch.x_hr.to(device_), x_lr = batch.x_lr.to(device_);
  if (!cache_) {
    *z_hr = encode_batch(*vae_, x_hr, mini);
    *z_lr = encode_batch(*vae_, x_lr, mini);
    return;
  }
  // Cached per clip; any miss encodes the whole batch and stores every clip.
  const int64_t L = batch.x_hr.size(2), F = 1 + (L - 1) / 4;
  std::vector<std::string> keys;
  std::vector<torch::Tensor> hr, lr;
  bool all = true;
  for (const auto& c : batch.clips) {
    std::vector<int64_t> frames(c.frames.begin(), c.frames.begin() + std::min<int64_t>(L, static_cast<int64_t>(c.frames.size())));
    keys.push_back(cache_->key(c.file, frames, batch.size.H, batch.size.W, batch.size.h_lr, batch.size.w_lr));
    torch::Tensor a, b;
    if (all && cache_->load(keys.back(), &a, &b) && a.size(1) == F && a.size(2) == batch.size.H / 16 &&
        b.size(2) == batch.size.h_lr / 16) {
      hr.push_back(a);
      lr.push_back(b);
    } else {
      all = false;
    }
  }
  if (all) {
    *z_hr = torch::stack(hr).to(device_);
    *z_lr = torch::stack(lr).to(device_);
    return;
  }
  *z_hr = encode_batch(*vae_, x_hr, mini);
  *z_lr = encode_batch(*vae_, x_lr, mini);
  for (size_t i = 0; i < keys.size(); ++i) cache_->store(keys[i], (*z_hr)[static_cast<int64_t>(i)], (*z_lr)[static_cast<int64_t>(i)]);
}

void Trainer::on_update(const UpdateRecord& rec, const data::Batch& batch, double step_seconds) {
  const int64_t step = rec.global_step;
  recent_.emplace_back(step_seconds, static_cast<int64_t>(samples_since_update_));
  samples_since_update_ = 0;
  while (recent_.size() > 10) recent_.pop_front();
  double secs = 0, samples = 0;
  for (auto& [s, n] : recent_) secs += s, samples += static_cast<double>(n);
  const double sps = secs > 0 ? samples * world_ / secs : 0;
  const double eta = recent_.empty() ? 0 : secs / static_cast<double>(recent_.size()) * static_cast<double>(max_steps_ - step);
  json ev = {{"step", step},
             {"expert", "upsampler"},
             {"expert_step", step},
             {"loss", static_cast<float>(rec.loss)},
             {"lr", rec.lr},
             {"grad_norm", rec.clip.grad_norm},
             {"grad_clip", rec.clip.max_norm},
             {"samples_per_s", sps},
             {"eta_s", eta},
             {"epoch", batch.plan.epoch},
             {"size_hr", {batch.size.H, batch.size.W}},
             {"size_lr", {batch.size.h_lr, batch.size.w_lr}},
             {"frames", batch.x_hr.size(2)},
             {"data_wait_s", loader_->wait_seconds()}};
  // Which clips, frames and sizes this update trained on (users asked to see it).
  json clips = json::array();
  for (const auto& c : batch.clips) {
    json o = {{"row", c.meta_index}, {"file", c.file}, {"start", c.frames.empty() ? 0 : c.frames.front()},
              {"stride", c.frames.size() > 1 ? c.frames[1] - c.frames[0] : 1}, {"frames_in_clip", c.frames.size()}};
    if (c.attempts > 0) o["replaced_after"] = c.attempts;
    if (!c.degradation.empty()) o["degradation"] = c.degradation;
    clips.push_back(o);
  }
  ev["clips"] = clips;
  ev["hw_ratio"] = batch.hw_ratio;
  if (updater_->ema()) ev["ema_decay"] = rec.ema_decay;
  if (cache_) ev["cache_hits"] = cache_->hits(), ev["cache_misses"] = cache_->misses();
  run::EventStream::global().emit("step", ev);
  if (tb_)
    tb_->add_scalars({{"train_loss", static_cast<float>(rec.loss)},
                      {"lr", static_cast<float>(rec.lr)},
                      {"grad_norm", static_cast<float>(rec.clip.grad_norm)},
                      {"grad_clip", static_cast<float>(rec.clip.max_norm)},
                      {"perf/samples_per_s", static_cast<float>(sps)}},
                     step);
}

void Trainer::checkpoint(bool final_save) {
  if (!run_) return;  // rank 0 writes for everyone
  const int64_t step = updater_->global_step();
  TrainerState st;
  st.global_step = step;
  st.epoch = epoch_;
  st.cursor = last_cursor_;
  st.ema_optimization_step = updater_->ema() ? updater_->ema()->optimization_step() : 0;
  st.seed = static_cast<int64_t>(seed_);
  st.options_sha256 = options_sha_;
  st.options = options_;
  run::CheckpointWriter w = run_->begin_checkpoint(step);
  write_upsampler_checkpoint(w.dir(), *updater_, st, final_save);
  run_->commit_checkpoint(w, cfg_.opt_integer("checkpoints_total_limit"));
}

void Trainer::validate(int64_t step) {
  if (setup_.validation_paths.empty() || rank_ != 0) return;
  auto& model = updater_->model();
  // Validation runs with the EMA weights when EMA is on; the live ones come back bit for bit.
  io::StateDict live;
  if (Ema* ema = updater_->ema()) {
    for (auto& [k, v] : io::module_state_dict(*model)) live[k] = v.detach().clone();
    ema->copy_to(*model);
  }
  ValidationSettings vs;
  vs.sample_size = cfg_.integer("video_sample_size");
  vs.n_frames = cfg_.integer("video_sample_n_frames");
  for (size_t i = 0; i < setup_.validation_paths.size(); ++i) {
    const std::string& path = setup_.validation_paths[i];
    try {
      ValidationResult r = run_validation(path, static_cast<int64_t>(i), step, *vae_, model, vs, run_->path());
      run::EventStream::global().emit("validation", {{"step", step},
                                                     {"index", i},
                                                     {"source", path},
                                                     {"lowres", r.lowres},
                                                     {"upsampled", r.upsampled},
                                                     {"highres", r.highres},
                                                     {"psnr", r.psnr},
                                                     {"psnr_lowres", r.psnr_lowres},
                                                     {"latent_mse", r.latent_mse},
                                                     {"frames", r.frames},
                                                     {"size", r.size},
                                                     {"size_lr", r.size_lr}});
      if (tb_)
        tb_->add_scalars({{"val/psnr_" + std::to_string(i), static_cast<float>(r.psnr)},
                          {"val/psnr_lowres_" + std::to_string(i), static_cast<float>(r.psnr_lowres)},
                          {"val/latent_mse_" + std::to_string(i), static_cast<float>(r.latent_mse)}},
                         step);
    } catch (const std::exception& e) {
      spdlog::warn("validation of {} failed: {}", path, e.what());
    }
    if (run::cancel_requested()) break;
  }
  if (updater_->ema()) io::load_state_dict(*model, live, io::LoadMode::Strict, "live weights");
}

void Trainer::train_loop() {
  const int64_t A = cfg_.integer("gradient_accumulation_steps");
  const int64_t ckpt_every = cfg_.integer("checkpointing_steps");
  const int64_t val_every = cfg_.integer("validation_steps");
  const int64_t val_epochs = cfg_.integer("validation_epochs");
  int64_t micro = 0;
  auto t_step = std::chrono::steady_clock::now();
  while (updater_->global_step() < max_steps_) {
    data::Batch batch = loader_->next();
    bool end = false;
    if (batch.plan.epoch != epoch_) {
      // The previous epoch's permutation is used up (docs/design/upsampler-training.md §11: validate at epoch ends).
      if (epoch_ % val_epochs == 0) validate(updater_->global_step());
      epoch_ = batch.plan.epoch;
      end = epoch_ >= num_epochs_;
    }
    // Ranks reach the end of the data one batch apart: they stop at the same micro-step.
    if (any_rank(end)) break;
    samples_since_update_ += static_cast<double>(batch.x_hr.size(0));
    std::optional<UpdateRecord> rec;
    micro_step(batch, micro, &rec);
    micro = (micro + 1) % A;
    if (!rec) continue;
    last_cursor_ = batch.plan.cursor;
    const auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - t_step).count();
    if (dp_) rec->loss = dp_->mean(rec->loss);  // the loss of the whole global batch
    on_update(*rec, batch, secs);
    const int64_t step = rec->global_step;
    if (step % ckpt_every == 0 && step < max_steps_) checkpoint(false);
    if (step % val_every == 0) validate(step);
    t_step = std::chrono::steady_clock::now();
    if (any_rank(run::cancel_requested())) {
      cancelled_ = true;
      return;
    }
  }
}

int Trainer::run() {
  seed_ = static_cast<uint64_t>(cfg_.integer("seed"));
  const dist::DistEnv env = dist::DistEnv::from_environment();
  rank_ = env.rank;
  world_ = env.world;
  open_run_dir();
  dp_ = dist::DataParallel::connect(env);
  if (dp_) spdlog::info("data parallel: rank {} of {}", rank_, world_);
  for (const auto& w : setup_.warnings) spdlog::warn("{}", w);
  device_ = open_training_device(env.local_rank, cfg_.str("mixed_precision") == "bf16" && !cfg_.is_default("mixed_precision"),
                                 cfg_.boolean("low_vram") && !cfg_.is_default("low_vram"),
                                 "the VAE stays on the CPU");
  if (!device_.is_cuda() && cfg_.boolean("allow_tf32")) spdlog::info("allow_tf32 has no effect on the CPU");
  if (device_.is_cuda() && cfg_.boolean("allow_tf32")) {
    at::globalContext().setAllowTF32CuBLAS(true);
    at::globalContext().setAllowTF32CuDNN(true);
  }

  build_loader();
  options_ = maths_options(cfg_);
  options_sha_ = sha256_hex(options_.dump());
  build_model_and_vae();
  resume();
  if (run_) run_->write_run_yaml(cfg_.to_yaml());
  if (run_ && cfg_.str("report_to") == "tensorboard")
    tb_ = std::make_unique<io::TfEventsWriter>(fs::join(run_->path(), cfg_.str("logging_dir")));
  run::EventStream::global().emit("started", {{"job", "upsampler"},
                                              {"config", cfg_.to_json()},
                                              {"world_size", world_},
                                              {"resume_step", resume_step_},
                                              {"max_train_steps", max_steps_},
                                              {"num_train_epochs", num_epochs_},
                                              {"dataset_rows", loader_->rows().size()},
                                              {"parameters", setup_.model.parameter_count()}});
  train_loop();
  const int64_t step = updater_->global_step();
  if (cancelled_ || run::cancel_requested()) {
    if (run_ && !run_->has_checkpoint(step) && step > resume_step_) checkpoint(false);
    run::EventStream::global().finished("cancelled", step);
    return 130;
  }
  checkpoint(true);
  run::EventStream::global().finished("completed", step);
  return 0;
}

}  // namespace

int run_train_upsampler(const std::vector<std::string>& argv) {
  return run_training_verb<Trainer>(upsampler_option_schema(), argv, [](io::Config& cfg) { return resolve_upsampler_setup(cfg); });
}

}  // namespace ws::train
