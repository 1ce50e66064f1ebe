// SPDX-License-Identifier: Apache-2.0
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
#include "train/encode_ahead.h"
#include "train/latent_cache.h"
#include "train/resume_checks.h"
#include "train/upsampler_checkpoint.h"
#include "train/upsampler_options.h"
#include "train/upsampler_setup.h"
#include "parallel/data_parallel.h"
#include "train/training_device.h"
#include "train/step_times.h"
#include "train/upsampler_update.h"
#include "train/training_verb.h"
#include "train/upsampler_validation.h"

namespace ws::train {

using json = nlohmann::json;

namespace {

// Encodes [B, 3, L, H, W] in slices of `mini` clips (vae_mini_batch) and concatenates.
torch::Tensor encode_batch(models::WanVae& vae, const torch::Tensor& x, int64_t mini, int64_t* calls) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < x.size(0); i += mini, ++*calls)
    parts.push_back(vae.encode(x.narrow(0, i, std::min(mini, x.size(0) - i))));
  return torch::cat(parts, 0);
}

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

void Trainer::prepare(TrainingRun& run) {
  run_ = &run;
  device_ = run.device();
  run.set_validation_steps(setup_.validation_steps);
  build_loader();
  options_sha_ = sha256_hex(setup_.maths.dump());
  build_model_and_vae();
  resume();
}

json Trainer::started_fields() const {
  return {{"num_train_epochs", num_epochs_},
          {"dataset_rows", loader_->rows().size()},
          {"parameters", setup_.model.parameter_count()},
          // How the CPU training convs run (models/packed_conv.h): kept packed, and of those on Winograd.
          {"packed_convs", updater_ ? updater_->packed_convs() : 0},
          {"winograd_convs", updater_ ? updater_->winograd_convs() : 0}};
}

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
  data::Metadata meta = data::read_metadata(d.meta, d.dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows(meta, d.stride, &dropped);
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
  ws::log::info("{} usable rows, about {} steps per epoch, {} steps, {} epochs", n, steps_per_epoch_, max_steps_,
                num_epochs_);
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

// The loader's next batch and its latents; on the encoding-ahead thread, with its GPU work on a
// stream of its own.
Prepared Trainer::prepare_batch(bool side_thread) {
  Prepared p;
  const double waited = loader_->wait_seconds();
  p.batch = loader_->next();
  p.data_wait_s = loader_->wait_seconds() - waited;
  p.decode_workers = loader_->worker_threads();
  if (!side_thread) {
    PhaseTimer t(&p.vae_s, device_);
    encode(p.batch, &p.z_hr, &p.z_lr, &p.vae_calls);
    return p;
  }
  p.ahead = true;
  p.vae_s = encode_on_side_stream(device_, [&] { encode(p.batch, &p.z_hr, &p.z_lr, &p.vae_calls); });
  p.z_hr = for_default_stream(p.z_hr);
  p.z_lr = for_default_stream(p.z_lr);
  return p;
}

void Trainer::micro_step(Prepared& p, int64_t micro, std::optional<UpdateRecord>* rec) {
  const int64_t mini = setup_.vae_mini_batch;
  const data::Batch& batch = p.batch;
  torch::Tensor z_hr = std::move(p.z_hr), z_lr = std::move(p.z_lr);
  vae_calls_ += p.vae_calls;
  decode_workers_ = p.decode_workers;
  encoded_ahead_ = p.ahead;
  PhaseTimer t(&times_.model_s, device_);  // the pixel loss's decode backpropagates: the model's time
  if (setup_.noise.enabled) {
    // Keyed by the global micro index micro·P + rank: P ranks × A micro-batches draw what one
    // process with A·P micro-batches would.
    data::Rng rng = data::Rng::keyed(setup_.run.seed, "step", updater_->global_step(), run_->global_micro(micro), 0);
    add_flow_noise(z_hr, z_lr, setup_.noise, rng);
  }
  if (!setup_.pixel_loss) {
    updater_->micro_step(z_lr, z_hr, rec);
    return;
  }
  // docs/design/upsampler-training.md §8: decode the prediction with gradients through the frozen decoder; score
  // against clean x_hr.
  torch::Tensor pred = updater_->model()->forward(z_lr);
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < pred.size(0); i += mini)
    parts.push_back(decode_with_grad(pred.narrow(0, i, std::min(mini, pred.size(0) - i))));
  torch::Tensor decoded = torch::cat(parts, 0);
  torch::Tensor loss =
      setup_.pixel_loss_weight * torch::mse_loss(decoded.to(torch::kFloat), batch.x_hr.to(device_, torch::kFloat));
  updater_->accumulate(loss, rec);
}

// WanVae::decode (normalisation undone by the fp32 reciprocal, clamp to [-1, 1]) with
// gradients flowing into the latent; the clamp passes no gradient where it saturates (docs/design/upsampler-training.md
// §8).
torch::Tensor Trainer::decode_with_grad(const torch::Tensor& latent) {
  vae_->check_latent(latent, "pixel-loss decode");
  torch::Tensor z = latent.to(torch::kFloat) / latent_inv_std_.to(latent.device()) + latent_mean_.to(latent.device());
  // On the VAE's own device and dtype (a bf16 VAE on CUDA), as WanVae::decode does.
  const torch::Tensor w = vae_->net().parameters().front();
  torch::Tensor out = vae_->net().decode_raw(z.to(w.device(), w.scalar_type()), vae_->options().schedule);
  return torch::clamp(out.to(latent.device(), torch::kFloat), -1.0, 1.0);
}

void Trainer::encode(const data::Batch& batch, torch::Tensor* z_hr, torch::Tensor* z_lr, int64_t* calls) {
  const int64_t mini = setup_.vae_mini_batch;
  const torch::Tensor x_hr = batch.x_hr.to(device_), x_lr = batch.x_lr.to(device_);
  if (!cache_) {
    *z_hr = encode_batch(*vae_, x_hr, mini, calls);
    *z_lr = encode_batch(*vae_, x_lr, mini, calls);
    return;
  }
  // Cached per clip; any miss encodes the whole batch and stores every clip.
  const int64_t L = batch.x_hr.size(2), F = 1 + (L - 1) / 4;
  std::vector<std::string> keys;
  std::vector<torch::Tensor> hr, lr;
  bool all = true;
  for (const auto& c : batch.clips) {
    std::vector<int64_t> frames(c.frames.begin(),
                                c.frames.begin() + std::min<int64_t>(L, static_cast<int64_t>(c.frames.size())));
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
  *z_hr = encode_batch(*vae_, x_hr, mini, calls);
  *z_lr = encode_batch(*vae_, x_lr, mini, calls);
  for (size_t i = 0; i < keys.size(); ++i)
    cache_->store(keys[i], (*z_hr)[static_cast<int64_t>(i)], (*z_lr)[static_cast<int64_t>(i)]);
}

StepReport Trainer::report(const UpdateRecord& rec, const data::Batch& batch, int64_t samples) const {
  StepReport r;
  r.expert = "upsampler";
  r.expert_step = rec.global_step;
  r.loss = static_cast<float>(rec.loss);
  r.lr = rec.lr;
  r.grad_norm = rec.clip.grad_norm;
  r.grad_clip = rec.clip.max_norm;
  r.samples = samples;
  json& x = r.extra;
  x["epoch"] = batch.plan.epoch;
  x["size_hr"] = {batch.size.H, batch.size.W};
  x["size_lr"] = {batch.size.h_lr, batch.size.w_lr};
  x["frames"] = batch.x_hr.size(2);
  times_.add_to(x);
  x["decode_workers"] = decode_workers_;
  x["encoded_ahead"] = encoded_ahead_;
  x["vae_encode_calls"] = vae_calls_;
  // Which clips, frames and sizes this update trained on (users asked to see it).
  json clips = json::array();
  for (const auto& c : batch.clips) {
    json o = {{"row", c.meta_index},
              {"file", c.file},
              {"start", c.frames.empty() ? 0 : c.frames.front()},
              {"stride", c.frames.size() > 1 ? c.frames[1] - c.frames[0] : 1},
              {"frames_in_clip", c.frames.size()}};
    if (c.attempts > 0) o["replaced_after"] = c.attempts;
    if (!c.degradation.empty()) o["degradation"] = c.degradation;
    clips.push_back(o);
  }
  x["clips"] = clips;
  x["hw_ratio"] = batch.hw_ratio;
  if (updater_->ema()) x["ema_decay"] = rec.ema_decay;
  if (cache_) x["cache_hits"] = cache_->hits(), x["cache_misses"] = cache_->misses();
  return r;
}

void Trainer::log_scalars(io::TfEventsWriter& tb, const StepReport& r, const StepRate& rate) {
  tb.add_scalars({{"train_loss", static_cast<float>(r.loss)},
                  {"lr", static_cast<float>(r.lr)},
                  {"grad_norm", static_cast<float>(r.grad_norm)},
                  {"grad_clip", static_cast<float>(r.grad_clip.value_or(0.0))},
                  {"perf/samples_per_s", static_cast<float>(rate.samples_per_s)}},
                 r.expert_step);
}

void Trainer::checkpoint(bool final_save) {
  runtime::RunDir* dir = run_->run_dir();
  if (!dir) return;  // rank 0 writes for everyone
  const int64_t step = updater_->global_step();
  TrainerState st;
  st.global_step = step;
  st.epoch = epoch_;
  st.cursor = last_cursor_;
  st.ema_optimization_step = updater_->ema() ? updater_->ema()->optimization_step() : 0;
  st.seed = static_cast<int64_t>(setup_.run.seed);
  st.options_sha256 = options_sha_;
  st.options = setup_.maths;
  runtime::CheckpointWriter w = dir->begin_checkpoint(step);
  write_upsampler_checkpoint(w.dir(), *updater_, st, final_save);
  dir->commit_checkpoint(w, setup_.run.checkpoints_total_limit);
}

void Trainer::validate(int64_t step) {
  ahead_.settle();  // a batch being encoded ahead would share the VAE
  if (setup_.validation_paths.empty() || !run_->is_rank_zero()) return;
  // Plain weights run LibTorch's convs, as `upsample` does on the checkpoint: the scores match it
  // exactly (the packed Winograd convs round differently).
  const auto plain = updater_->plain_weights();
  auto& model = updater_->model();
  // Validation runs with the EMA weights when EMA is on; the live ones come back bit for bit.
  io::StateDict live;
  if (Ema* ema = updater_->ema()) {
    for (auto& [k, v] : io::module_state_dict(*model)) live[k] = v.detach().clone();
    ema->copy_to(*model);
  }
  ValidationSettings vs;
  vs.sample_size = setup_.data.sample_size;
  vs.n_frames = setup_.data.n_frames;
  io::TfEventsWriter* tb = run_->tensorboard();
  double psnr_sum = 0;
  size_t scored = 0;
  for (size_t i = 0; i < setup_.validation_paths.size(); ++i) {
    const std::string& path = setup_.validation_paths[i];
    try {
      ValidationResult r =
          run_validation(path, static_cast<int64_t>(i), step, *vae_, model, vs, run_->run_dir()->path());
      const contract::ValidationEvent ev = validation_event(r, step, static_cast<int64_t>(i), path);
      runtime::EventStream::global().emit(ev);
      psnr_sum += r.psnr;
      ++scored;
      if (tb)
        tb->add_scalars({{"val/psnr_" + std::to_string(i), static_cast<float>(r.psnr)},
                         {"val/psnr_lowres_" + std::to_string(i), static_cast<float>(r.psnr_lowres)},
                         {"val/latent_mse_" + std::to_string(i), static_cast<float>(r.latent_mse)},
                         {"val/psnr_source_" + std::to_string(i), static_cast<float>(r.psnr_source)},
                         {"val/psnr_ceiling_" + std::to_string(i), static_cast<float>(r.psnr_ceiling)}},
                        step);
    } catch (const std::exception& e) {
      ws::log::warn("validation of {} failed: {}", path, e.what());
    }
    if (runtime::cancel_requested()) break;
  }
  if (updater_->ema()) io::load_state_dict(*model, live, io::LoadMode::Strict, "live weights");
  // keep_best ranks validations by the mean PSNR of the upsampled decode against the high-res
  // one, over every clip; a validation cut short by a cancel or a failed clip is not a figure.
  if (scored == setup_.validation_paths.size())
    run_->offer_best(step, "val_psnr", psnr_sum / static_cast<double>(scored), /*higher_is_better=*/true);
}

std::optional<StepReport> Trainer::train_step() {
  const int64_t A = setup_.run.gradient_accumulation_steps;
  int64_t samples = 0;
  vae_calls_ = 0;
  times_ = StepTimes{};
  for (;;) {
    Prepared p = ahead_.next(times_, [this] { return prepare_batch(false); });
    const data::Batch& batch = p.batch;
    bool end = false;
    if (batch.plan.epoch != epoch_) {
      // The previous epoch's permutation is used up (docs/design/upsampler-training.md §11: validate at epoch ends).
      if (epoch_ % setup_.validation_epochs == 0) {
        validate(updater_->global_step());
        run_->settle_best(*this);  // every rank: the checkpoint of a new best is of these weights
      }
      epoch_ = batch.plan.epoch;
      end = epoch_ >= num_epochs_;
    }
    // Ranks reach the end of the data one batch apart: they stop at the same micro-step.
    if (run_->any_rank(end)) return std::nullopt;
    samples += batch.x_hr.size(0);
    // The next batch is taken and encoded while this one trains (the pixel loss's decode shares
    // the VAE with the step, so it never encodes ahead).
    if (setup_.overlap_vae_encode) ahead_.start([this] { return prepare_batch(true); });
    std::optional<UpdateRecord> rec;
    micro_step(p, micro_, &rec);
    micro_ = (micro_ + 1) % A;
    if (!rec) continue;
    last_cursor_ = batch.plan.cursor;
    if (auto* dp = run_->data_parallel()) rec->loss = dp->mean(rec->loss);  // the loss of the whole global batch
    return report(*rec, batch, samples);
  }
}

}  // namespace

int run_train_upsampler(const std::vector<std::string>& argv) {
  return run_training_verb<Trainer>(
      upsampler_option_schema(), argv, [](io::Config& cfg) { return resolve_upsampler_setup(cfg); },
      DeviceWishes{true, "the VAE stays on the CPU"});
}

}  // namespace ws::train
