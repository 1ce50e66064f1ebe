// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_memory.h"
#include "train/upsampler/upsampler_trainer.h"
#include "train/upsampler/upsampler_trainer_impl.h"

namespace ws::train {
namespace upsampler {
namespace {

// Encodes [B, 3, L, H, W] in slices of `mini` clips (vae_mini_batch) and concatenates.
torch::Tensor encode_batch(models::WanVae& vae, const torch::Tensor& x, int64_t mini, int64_t* calls) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < x.size(0); i += mini, ++*calls)
    parts.push_back(vae.encode(x.narrow(0, i, std::min(mini, x.size(0) - i))));
  return torch::cat(parts, 0);
}

}  // namespace

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
    if (rec->skipped && !guard_.admit(rec->clip.grad_norm, rec->loss, rec->global_step + 1, "upsampler")) continue;
    if (auto* dp = run_->data_parallel()) rec->loss = dp->mean(rec->loss);  // the loss of the whole global batch
    return report(*rec, batch, samples);
  }
}

}  // namespace upsampler

int run_train_upsampler(const std::vector<std::string>& argv) {
  return run_training_verb<upsampler::Trainer>(
      upsampler_option_schema(), argv, [](io::Config& cfg) { return resolve_upsampler_setup(cfg); },
      DeviceWishes{true, "the VAE stays on the CPU"},
      [](io::Config& cfg, const UpsamplerSetup& s) {
        check_memory_fits(cfg,
                          [&](int64_t ranks, const MemoryTarget& t) { return upsampler_training_memory(s, ranks, t); });
      });
}

}  // namespace ws::train
