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
#include "core/sha256.h"
#include "data/clip_loader.h"
#include "data/metadata.h"
#include "data/random_streams.h"
#include "dist/data_parallel.h"
#include "io/safetensors.h"
#include "io/tfevents.h"
#include "models/wan22_vae.h"
#include "run/cancel.h"
#include "run/events.h"
#include "run/logging.h"
#include "run/run_dir.h"
#include "train/expert_conditioning.h"
#include "train/expert_routing.h"
#include "train/expert_step.h"
#include "train/experts_checkpoint.h"
#include "train/experts_options.h"
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

// Buckets align to 32 pixels (VAE stride 16 × patch 2): the loader's alignment at scale 2.
constexpr double kLoaderScale = 2.0;

struct EvalItem {
  size_t row = 0;  // j: the row's index in eval_data_meta
  ExpertStepInput in;  // x0, fixed noise, σ, t, context and the image conditioning
};

// A micro-batch's latents: z [B, C, F, h, w] and, for i2v, the encodings of the first-frame
// clips (`image`) or the latent files' own `y`.
struct Latents {
  torch::Tensor z, image, y;
};

// The latents of a batch of rows with latent files (the loader read them).
Latents file_latents(const data::Batch& batch) { return {batch.latents, torch::Tensor(), batch.y}; }

class Trainer {
 public:
  Trainer(io::Config& cfg, ExpertsSetup setup) : cfg_(cfg), setup_(std::move(setup)) {}
  int run();
  int64_t global_step() const { return high_ && low_ ? high_->global_step() + low_->global_step() : 0; }

 private:
  void build_loader();
  void check_latent_rows(const std::vector<data::TrainRow>& rows, const std::string& meta_path) const;
  void build_models();
  void resume();
  void build_eval();
  void train_loop();
  Latents latents(const data::Batch& batch);
  Latents encode_batch(const torch::Tensor& x_hr);
  // Conditioning of sample b: i2v's y, ti2v's clean first frame (drawn; always in eval).
  void condition(ExpertStepInput& in, const Latents& z, int64_t b, bool ti2v_image) const;
  torch::Tensor encode(const torch::Tensor& x);
  double weight(double t) const { return cfg_.str("timestep_weighting") == "bsmntw" ? bsmntw_weight(t) : 1.0; }
  void emit_step(bool high, double loss, double lr, const ClipResult& clip, double max_abs_grad,
                 const std::vector<double>& ts, const std::vector<bool>& first_frame, const data::Batch& batch,
                 double secs, int64_t samples);
  void evaluate();
  void checkpoint();

  io::Config& cfg_;
  ExpertsSetup setup_;
  std::unique_ptr<run::RunDir> run_;
  std::unique_ptr<run::Heartbeat> heartbeat_;
  std::unique_ptr<io::TfEventsWriter> tb_;
  std::unique_ptr<models::Wan22Vae> vae_;
  std::unique_ptr<ExpertStep> high_, low_;
  ImageConditioning cond_ = ImageConditioning::None;
  torch::Device device_{torch::kCPU};
  bool swap_experts_ = false;  // low_vram on a GPU: only the routed expert is resident
  // Brings the expert about to run onto the device, the other one off it (low_vram).
  void activate(bool high);
  LrSchedule sched_high_, sched_low_;
  double lr_high_ = 0, lr_low_ = 0;
  data::Metadata meta_;
  std::unique_ptr<TextEmbeddings> texts_;
  std::unique_ptr<data::ClipLoader> loader_;
  std::unique_ptr<LatentCache> cache_;  // names the entries; the experts store `latents` only
  std::string vae_sha_;
  int64_t cache_hits_ = 0, cache_misses_ = 0;
  std::vector<EvalItem> eval_;
  int64_t last_eval_step_ = -1;
  data::LoaderCursor last_cursor_;
  int64_t epoch_ = 0, resume_step_ = 0, max_steps_ = 0, num_epochs_ = 0;
  int rank_ = 0, world_ = 1;
  std::unique_ptr<dist::DataParallel> dp_;  // null with one process
  bool cancelled_ = false;
  // Every rank stops at the same step: true when any rank asks.
  bool any_rank(bool v) { return dp_ ? dp_->any(v) : v; }
  // The random streams of micro-batch `micro` on this rank: keyed by the global micro index
  // micro·P + rank, so P ranks × A micro-batches draw what one process with A·P would.
  int64_t global_micro(int64_t micro) const { return micro * world_ + rank_; }
  uint64_t seed_ = 42;
  std::deque<std::pair<double, int64_t>> recent_;
  std::string options_sha_;
  json options_;
};

void Trainer::check_latent_rows(const std::vector<data::TrainRow>& rows, const std::string& meta_path) const {
  const models::WanConfig& c = setup_.high.config;
  for (const auto& r : rows) {
    if (r.latent_path.empty()) continue;
    const auto& s = r.latent_shape;
    if (s[0] != c.out_dim || s[2] % 2 || s[3] % 2)
      throw Error(meta_path + " row " + std::to_string(r.meta_index) + ": " + r.latent_path + " holds latents [" +
                  std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]) + ", " +
                  std::to_string(s[3]) + "]; the experts need " + std::to_string(c.out_dim) + " channels and even h, w");
  }
}

void Trainer::build_loader() {
  meta_ = data::read_metadata(setup_.meta_path, setup_.data_dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows_with_latents(meta_, cfg_.integer("video_sample_stride"), &dropped);
  for (const auto& d : dropped) spdlog::warn("dataset row {} ({}) skipped: {}", d.meta_index, d.file, d.reason);
  if (rows.empty()) throw Error(setup_.meta_path + ": no usable rows (every row was skipped)");
  check_latent_rows(rows, setup_.meta_path);
  data::LoaderOptions lo;
  lo.seed = seed_;
  lo.sample_size = cfg_.integer("video_sample_size");
  lo.n_frames = cfg_.integer("video_sample_n_frames");
  lo.stride = cfg_.integer("video_sample_stride");
  lo.scale = kLoaderScale;
  lo.batch_size = cfg_.integer("train_batch_size");
  lo.enable_bucket = cfg_.boolean("enable_bucket");
  lo.random_hw_adapt = cfg_.boolean("random_hw_adapt");
  lo.frames_per_row = setup_.latent_cache_dir.has_value();  // a cached row always has the same frames
  lo.workers = static_cast<int>(cfg_.integer("dataloader_num_workers"));
  lo.rank = rank_;
  lo.world = world_;
  const int64_t n = static_cast<int64_t>(rows.size());
  loader_ = std::make_unique<data::ClipLoader>(std::move(rows), lo, [](const std::string& file, const std::string& reason) {
    spdlog::warn("{}: skipped, a random other row trains instead ({})", file, reason);
  });
  const int64_t batches = std::max<int64_t>(1, n / lo.batch_size);
  const int64_t A = cfg_.integer("gradient_accumulation_steps");
  const int64_t steps_per_epoch = std::max<int64_t>(1, ((batches + world_ - 1) / world_ + A - 1) / A);
  if (cfg_.is_set("max_train_steps")) {
    max_steps_ = cfg_.integer("max_train_steps");
    num_epochs_ = std::numeric_limits<int64_t>::max();  // the step count alone ends the run
  } else {
    num_epochs_ = cfg_.integer("num_train_epochs");
    max_steps_ = num_epochs_ * steps_per_epoch;
    cfg_.set("max_train_steps", max_steps_, "num_train_epochs × steps per epoch");
  }
  spdlog::info("{} usable rows, about {} steps per epoch, {} steps", n, steps_per_epoch, max_steps_);
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
    spdlog::info("loading the VAE from {}", setup_.vae_file);
    models::Wan22VaeOptions vo;
    if (device_.is_cuda()) {
      vo.device = "cuda:" + std::to_string(device_.index());
      vo.bf16 = cfg_.str("mixed_precision") == "bf16";
      vo.low_vram = cfg_.boolean("low_vram");
    }
    vae_ = models::Wan22Vae::load(setup_.vae_file, setup_.vae_config, vo);
  } else {
    spdlog::info("every row brings its latent file: no VAE");
  }
  if (setup_.latent_cache_dir && vae_) {
    vae_sha_ = sha256_file(setup_.vae_file);
    cache_ = std::make_unique<LatentCache>(*setup_.latent_cache_dir, vae_sha_);
  }
  texts_ = std::make_unique<TextEmbeddings>(setup_.text_dir, setup_.high.config.text_len, setup_.high.config.text_dim);

  const double lr = cfg_.real("learning_rate");
  lr_high_ = cfg_.opt_real("learning_rate_high").value_or(lr);
  lr_low_ = cfg_.opt_real("learning_rate_low").value_or(lr);
  auto make = [&](const ExpertSource& src, const char* tag, double expert_lr) {
    models::WanModel m{nullptr};
    if (src.weights) {
      spdlog::info("loading the {} expert from {}", tag, *src.weights);
      m = models::load_wan_model(src.config, *src.weights);
    } else {
      // Fresh experts (the tiny demo): each one's initial weights follow the seed and its name.
      torch::manual_seed(data::Rng::keyed(seed_, "init", tag[0] == 'h' ? 1 : 0).derive_seed());
      m = models::WanModel(src.config);
    }
    m->set_gradient_checkpointing(cfg_.boolean("gradient_checkpointing"));
    m->set_fp8(cfg_.str("fp8") == "e4m3");
    // bf16 matmuls and attention from fp32 master weights (docs/design/wan-dit.md §8), on the GPU only.
    if (device_.is_cuda() && cfg_.str("mixed_precision") == "bf16") m->set_compute_dtype(torch::kBFloat16);
    ExpertStepOptions o;
    o.learning_rate = expert_lr;
    o.adam = {cfg_.real("adam_beta1"), cfg_.real("adam_beta2"), cfg_.real("adam_epsilon"), cfg_.real("adam_weight_decay")};
    o.clip.max_grad_norm = cfg_.opt_real("max_grad_norm").value_or(0.0);
    o.clip.abnormal_norm_clip_start = cfg_.real("abnormal_norm_clip_start");
    o.clip.initial_grad_norm_ratio = cfg_.real("initial_grad_norm_ratio");
    return std::make_unique<ExpertStep>(m, o);
  };
  cond_ = image_conditioning(setup_.high.config.model_type);
  high_ = make(setup_.high, "high", lr_high_);
  low_ = make(setup_.low, "low", lr_low_);
  if (dp_) {
    // Every rank starts from rank 0's weights (fresh ones differ only if a seed was changed).
    for (auto* e : {high_.get(), low_.get()}) {
      dp_->broadcast(e->parameters());
      if (e->model()->fp8()) e->model()->refresh_fp8();
    }
  }
  // Both experts on the GPU, or (low_vram) each in turn with the idle one in CPU memory (docs/design/dual-expert-training.md §5).
  swap_experts_ = device_.is_cuda() && cfg_.boolean("low_vram");
  if (device_.is_cuda() && !swap_experts_) {
    high_->to(device_);
    low_->to(device_);
  }

  // docs/design/dual-expert-training.md §4: per-expert schedules over each expert's expected share of the steps (or the global count).
  const bool expert_basis = cfg_.str("lr_schedule_basis") == "expert_steps";
  const int64_t n_high = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(setup_.routing.p_high() * static_cast<double>(max_steps_))));
  const int64_t n_low = std::max<int64_t>(1, max_steps_ - n_high);
  const int64_t warm = cfg_.integer("lr_warmup_steps");
  for (auto* s : {&sched_high_, &sched_low_}) {
    const bool h = s == &sched_high_;
    s->name = cfg_.str("lr_scheduler");
    s->warmup_steps = cfg_.opt_integer(h ? "lr_warmup_steps_high" : "lr_warmup_steps_low").value_or(warm);
    s->training_steps = expert_basis ? (h ? n_high : n_low) : max_steps_;
    s->base_lr = h ? lr_high_ : lr_low_;
    s->validate();
  }
}

void Trainer::resume() {
  if (!setup_.resume_dir) return;
  const std::string dir = *setup_.resume_dir;
  LoadedExperts ck = read_experts_checkpoint(dir);
  const ExpertsState& st = ck.state;
  if (st.seed != static_cast<int64_t>(seed_))
    throw Error(dir + ": the checkpoint was trained with seed " + std::to_string(st.seed) + ", this run has seed " +
                std::to_string(seed_) + " (the random streams would change; use the same seed)");
  if (st.boundary != setup_.routing.boundary() || st.routing_mode != setup_.routing.mode)
    throw Error(dir + ": the checkpoint routes with boundary " + std::to_string(st.boundary) + " (" + st.routing_mode +
                "), this run with " + std::to_string(setup_.routing.boundary()) + " (" + setup_.routing.mode + ")");
  for (auto* e : {high_.get(), low_.get()}) {
    const bool h = e == high_.get();
    const std::string name = h ? "high_noise_transformer" : "low_noise_transformer";
    json a = models::WanConfig::from_json(h ? ck.high_config : ck.low_config, dir + "/" + name + "/config.json").to_json();
    json b = e->model()->config().to_json();
    if (a != b) throw Error(dir + ": " + name + "'s config " + a.dump() + " differs from this run's " + b.dump());
    io::load_state_dict(*e->model(), h ? ck.high_weights : ck.low_weights, io::LoadMode::Strict, dir + "/" + name);
    e->model()->refresh_fp8();
    e->optimizer().load_state_dict(h ? ck.high_optimizer : ck.low_optimizer,
                                   dir + "/trainer_state/optimizer_" + (h ? "high" : "low") + ".safetensors");
    const int64_t steps = h ? st.steps_high : st.steps_low;
    if (e->optimizer().step_count() != steps)
      throw Error(dir + ": optimizer_" + std::string(h ? "high" : "low") + " has step " +
                  std::to_string(e->optimizer().step_count()) + ", state.json says " + std::to_string(steps));
    e->set_global_step(steps);
  }
  loader_->restore(st.cursor);
  last_cursor_ = st.cursor;
  epoch_ = st.epoch;
  resume_step_ = st.global_step;
  if (!st.options_sha256.empty() && st.options_sha256 != options_sha_) {
    std::string changed;
    for (auto& [k, v] : options_.items())
      if (!st.options.contains(k) || st.options[k] != v) changed += (changed.empty() ? "" : ", ") + k;
    spdlog::warn("resuming with changed options: {}", changed.empty() ? std::string("(unknown)") : changed);
  }
  spdlog::info("resumed from {} at step {} (high {}, low {})", dir, st.global_step, st.steps_high, st.steps_low);
}

torch::Tensor Trainer::encode(const torch::Tensor& x) {
  if (!vae_) throw Error("a video row without latent_path, and no VAE to encode it");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < x.size(0); ++i) parts.push_back(vae_->encode(x.narrow(0, i, 1)));
  return torch::cat(parts, 0).to(torch::kFloat);
}

Latents Trainer::encode_batch(const torch::Tensor& x_hr) {
  Latents l;
  l.z = encode(x_hr);
  if (cond_ == ImageConditioning::I2V) l.image = encode(first_frame_clip(x_hr));
  return l;
}

void Trainer::condition(ExpertStepInput& in, const Latents& z, int64_t b, bool ti2v_image) const {
  if (cond_ == ImageConditioning::I2V) {
    if (z.y.defined())
      in.y = z.y[b];
    else if (z.image.defined())
      in.y = i2v_y(z.image[b]);
    else
      throw Error("i2v experts: a latent file without 'y' (the mask and image latent, [in_dim − C, F, h, w])");
    const int64_t want = high_->model()->config().in_dim - high_->model()->config().out_dim;
    if (in.y.size(0) != want)
      throw Error("i2v experts: 'y' has " + std::to_string(in.y.size(0)) + " channels, the experts need " + std::to_string(want));
  }
  if (cond_ == ImageConditioning::TI2V) in.clean_first_frame = ti2v_image;
}

// [B, C, F, H/16, W/16] normalised latents (and i2v's image latents): from the cache
// (`latents`, `image_latents` per clip) or the VAE.
Latents Trainer::latents(const data::Batch& batch) {
  if (batch.latents.defined()) return file_latents(batch);
  if (!cache_) return encode_batch(batch.x_hr);
  const bool i2v = cond_ == ImageConditioning::I2V;
  const int64_t L = batch.x_hr.size(2), F = 1 + (L - 1) / 4;
  std::vector<torch::Tensor> out, images;
  std::vector<std::string> paths;
  bool all = true;
  for (const auto& c : batch.clips) {
    std::vector<int64_t> frames(c.frames.begin(), c.frames.begin() + std::min<int64_t>(L, static_cast<int64_t>(c.frames.size())));
    const std::string key = cache_->key(c.file, frames, batch.size.H, batch.size.W, 0, 0);
    paths.push_back(fs::join(cache_->dir(), key + ".safetensors"));
    if (!all || !fs::exists(paths.back())) {
      all = false;
      continue;
    }
    try {
      auto sd = io::read_safetensors(paths.back());
      auto it = sd.find("latents");
      if (it == sd.end() || it->second.dim() != 4 || it->second.size(1) != F || it->second.size(2) != batch.size.H / 16)
        throw Error(paths.back() + ": not a latent cache entry of this clip");
      out.push_back(it->second.to(torch::kFloat));
      if (i2v) {
        auto im = sd.find("image_latents");
        if (im == sd.end() || im->second.sizes() != it->second.sizes()) {
          all = false;  // an entry a t2v run wrote: encode the image latent and rewrite it
          continue;
        }
        images.push_back(im->second.to(torch::kFloat));
      }
    } catch (const std::exception& e) {
      spdlog::warn("latent cache entry unusable, recomputing: {}", e.what());
      all = false;
    }
  }
  if (all) {
    ++cache_hits_;
    return {torch::stack(out), i2v ? torch::stack(images) : torch::Tensor(), torch::Tensor()};
  }
  ++cache_misses_;
  Latents z = encode_batch(batch.x_hr);
  for (size_t i = 0; i < paths.size(); ++i) {
    io::StateDict sd;
    sd["latents"] = z.z[static_cast<int64_t>(i)].contiguous();
    if (i2v) sd["image_latents"] = z.image[static_cast<int64_t>(i)].contiguous();
    io::write_safetensors(paths[i], sd,
                          {{"vae_sha256", vae_sha_},
                           {"pixel_size", std::to_string(batch.size.H) + "x" + std::to_string(batch.size.W)}});
  }
  return z;
}

void Trainer::build_eval() {
  if (!setup_.eval_meta || rank_ != 0) return;  // eval runs on rank 0 alone
  data::Metadata meta = data::read_metadata(*setup_.eval_meta, setup_.data_dir);
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows_with_latents(meta, cfg_.integer("video_sample_stride"), &dropped);
  for (const auto& d : dropped) spdlog::warn("eval row {} ({}) skipped: {}", d.meta_index, d.file, d.reason);
  check_latent_rows(rows, *setup_.eval_meta);
  const auto ts = cfg_.integers("eval_timesteps");
  const int64_t per_t = cfg_.integer("eval_max_samples_per_t");
  std::map<int64_t, int64_t> count;
  std::vector<data::TrainRow> kept;
  std::vector<double> kept_t;
  for (const auto& r : rows) {
    const int64_t t = ts[r.meta_index % ts.size()];
    if (count[t]++ >= per_t) continue;
    kept.push_back(r);
    kept_t.push_back(static_cast<double>(t));
  }
  if (kept.empty()) throw Error(*setup_.eval_meta + ": no usable eval rows");
  data::LoaderOptions lo;
  lo.seed = static_cast<uint64_t>(setup_.eval_seed);
  lo.sample_size = cfg_.integer("video_sample_size");
  lo.n_frames = cfg_.integer("video_sample_n_frames");
  lo.stride = cfg_.integer("video_sample_stride");
  lo.scale = kLoaderScale;
  lo.enable_bucket = cfg_.boolean("enable_bucket");
  lo.random_hw_adapt = false;
  lo.frames_per_row = true;  // fixed frames per row: every eval sees the same inputs
  lo.start_at_zero = true;   // from each clip's first frame (docs/design/dual-expert-training.md §6)
  lo.workers = 0;
  data::ClipLoader loader(kept, lo);
  spdlog::info("encoding {} eval clips", kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    data::BatchPlan plan;
    plan.seq = static_cast<int64_t>(i);
    plan.items = {data::SampleRef{static_cast<int64_t>(i), 0, static_cast<int64_t>(i)}};
    data::Batch b = loader.make_batch(plan);
    EvalItem it;
    it.row = b.clips.front().meta_index;
    const Latents z = b.latents.defined() ? file_latents(b) : encode_batch(b.x_hr);
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
  if (eval_.empty() || rank_ != 0 || last_eval_step_ == global_step()) return;
  const int64_t step = global_step(), boundary = setup_.routing.boundary();
  last_eval_step_ = step;
  torch::NoGradGuard no_grad;
  high_->model()->eval();
  low_->model()->eval();
  std::map<int64_t, std::pair<double, int64_t>> by_t;  // t -> (sum, n)
  const size_t chunk = 8;
  for (size_t i0 = 0; i0 < eval_.size(); i0 += chunk) {
    std::vector<ExpertStepInput> samples;
    for (size_t i = i0; i < std::min(eval_.size(), i0 + chunk); ++i) samples.push_back(eval_[i].in);
    auto pred = routed_predict(high_->model(), low_->model(), boundary, samples, [this](bool h) { activate(h); });
    for (size_t k = 0; k < pred.size(); ++k) {
      const ExpertStepInput& e = samples[k];
      const double l = expert_loss(pred[k], e).item<double>() * weight(e.t);
      auto& acc = by_t[static_cast<int64_t>(e.t)];
      acc.first += l, acc.second += 1;
    }
  }
  high_->model()->train();
  low_->model()->train();
  double all = 0, hi = 0, lo = 0;
  int64_t n_hi = 0, n_lo = 0;
  json loss_by_t = json::object();
  std::vector<std::pair<std::string, float>> tb;
  for (auto& [t, acc] : by_t) {
    const double m = acc.first / static_cast<double>(acc.second);
    loss_by_t[std::to_string(t)] = m;
    tb.emplace_back("eval/loss_t" + std::to_string(t), static_cast<float>(m));
    all += m;
    if (routes_high(static_cast<double>(t), boundary))
      hi += m, ++n_hi;
    else
      lo += m, ++n_lo;
  }
  json ev = {{"step", step}, {"expert", "all"}, {"loss", all / static_cast<double>(by_t.size())},
             {"loss_high", n_hi ? json(hi / static_cast<double>(n_hi)) : json(nullptr)},
             {"loss_low", n_lo ? json(lo / static_cast<double>(n_lo)) : json(nullptr)},
             {"loss_by_t", loss_by_t}, {"samples", eval_.size()}};
  run::EventStream::global().emit("eval", ev);
  if (tb_) {
    tb.emplace_back("eval/loss", static_cast<float>(all / static_cast<double>(by_t.size())));
    if (n_hi) tb.emplace_back("eval/high/loss", static_cast<float>(hi / static_cast<double>(n_hi)));
    if (n_lo) tb.emplace_back("eval/low/loss", static_cast<float>(lo / static_cast<double>(n_lo)));
    tb_->add_scalars(tb, step);
  }
}

void Trainer::checkpoint() {
  if (!run_) return;  // rank 0 writes for everyone
  ExpertsState st;
  st.global_step = global_step();
  st.steps_high = high_->global_step();
  st.steps_low = low_->global_step();
  st.epoch = epoch_;
  st.cursor = last_cursor_;
  st.seed = static_cast<int64_t>(seed_);
  st.eval_seed = setup_.eval_seed;
  st.boundary_ratio = setup_.routing.boundary_ratio;
  st.boundary = setup_.routing.boundary();
  st.routing_mode = setup_.routing.mode;
  st.shift = setup_.routing.shift;
  st.extra["lr"] = {{"high", {{"learning_rate", lr_high_}, {"warmup", sched_high_.warmup_steps}, {"training_steps", sched_high_.training_steps}}},
                    {"low", {{"learning_rate", lr_low_}, {"warmup", sched_low_.warmup_steps}, {"training_steps", sched_low_.training_steps}}},
                    {"scheduler", sched_high_.name},
                    {"basis", cfg_.str("lr_schedule_basis")}};
  st.extra["dtypes"] = {{"master", "F32"}, {"adam", "F32"}};
  st.extra["fp8"] = cfg_.str("fp8");
  st.extra["sources"] = {{"high", setup_.high.weights ? json(*setup_.high.weights) : json("fresh")},
                         {"low", setup_.low.weights ? json(*setup_.low.weights) : json("fresh")}};
  st.options_sha256 = options_sha_;
  st.options = options_;
  run::CheckpointWriter w = run_->begin_checkpoint(st.global_step);
  write_experts_checkpoint(w.dir(), *high_, *low_, st);
  run_->commit_checkpoint(w, cfg_.opt_integer("checkpoints_total_limit"));
}

void Trainer::emit_step(bool high, double loss, double lr, const ClipResult& clip, double max_abs_grad,
                        const std::vector<double>& ts, const std::vector<bool>& first_frame, const data::Batch& batch,
                        double secs, int64_t samples) {
  const int64_t step = global_step();
  ExpertStep& e = high ? *high_ : *low_;
  recent_.emplace_back(secs, samples);
  while (recent_.size() > 10) recent_.pop_front();
  double s = 0, n = 0;
  for (auto& [a, b] : recent_) s += a, n += static_cast<double>(b);
  const double sps = s > 0 ? n * world_ / s : 0;
  const double eta = s / static_cast<double>(recent_.size()) * static_cast<double>(max_steps_ - step);
  const double share = static_cast<double>(high_->global_step()) / static_cast<double>(step);
  json clips = json::array();
  for (const auto& c : batch.clips)
    clips.push_back({{"row", c.meta_index}, {"file", c.file}, {"start", c.frames.empty() ? 0 : c.frames.front()}});
  json ev = {{"step", step},
             {"expert", high ? "high" : "low"},
             {"expert_step", e.global_step()},
             {"loss", static_cast<float>(loss)},
             {"lr", lr},
             {"grad_norm", clip.grad_norm},
             {"grad_clip", clip.max_norm},
             {"max_abs_grad", max_abs_grad},
             {"samples_per_s", sps},
             {"eta_s", eta},
             {"steps_high", high_->global_step()},
             {"steps_low", low_->global_step()},
             {"share_high", share},
             {"timesteps", ts},
             {"epoch", batch.plan.epoch},
             {"size", batch.latents.defined() ? json(nullptr) : json{batch.size.H, batch.size.W}},
             {"frames", batch.x_hr.defined() ? batch.x_hr.size(2) : 4 * (batch.latents.size(2) - 1) + 1},
             {"clips", clips},
             {"data_wait_s", loader_->wait_seconds()}};
  if (cache_) ev["cache_hits"] = cache_hits_, ev["cache_misses"] = cache_misses_;
  if (batch.latents.defined()) ev["latent_size"] = batch.latents.sizes().slice(2).vec();  // F, h, w of the files
  if (cond_ != ImageConditioning::None) ev["conditioning"] = cond_ == ImageConditioning::I2V ? "i2v" : "ti2v";
  if (!first_frame.empty()) ev["image_conditioned"] = first_frame;
  run::EventStream::global().emit("step", ev);
  if (!tb_) return;
  // Per-expert series at that expert's own step, so they never go backwards (docs/design/dual-expert-training.md §11).
  const std::string p = high ? "high/" : "low/";
  tb_->add_scalars({{p + "loss", static_cast<float>(loss)},
                    {p + "lr", static_cast<float>(lr)},
                    {p + "grad_norm", static_cast<float>(clip.grad_norm)},
                    {p + "max_abs_grad", static_cast<float>(max_abs_grad)}},
                   e.global_step());
  tb_->add_scalars({{"train/loss", static_cast<float>(loss)},
                    {"train/routed_high", high ? 1.0f : 0.0f},
                    {"train/share_high", static_cast<float>(share)},
                    {"perf/samples_per_s", static_cast<float>(sps)},
                    {"perf/step_time_s", static_cast<float>(secs)}},
                   step);
}

void Trainer::train_loop() {
  const int64_t A = cfg_.integer("gradient_accumulation_steps");
  const int64_t ckpt_every = cfg_.integer("checkpointing_steps");
  const int64_t eval_every = cfg_.integer("eval_steps");
  const bool expert_basis = cfg_.str("lr_schedule_basis") == "expert_steps";
  auto t0 = std::chrono::steady_clock::now();
  while (global_step() < max_steps_) {
    const int64_t gs = global_step();
    const bool high = draw_route(setup_.routing, seed_, gs);
    ExpertStep& e = high ? *high_ : *low_;
    activate(high);
    e.begin_accumulation();
    double loss = 0;
    int64_t samples = 0;
    std::vector<double> ts;
    std::vector<bool> first_frame;  // ti2v: which samples were image-conditioned
    data::Batch batch;
    bool ended = false;
    for (int64_t micro = 0; micro < A; ++micro) {
      batch = loader_->next();
      if (batch.plan.epoch != epoch_) {
        epoch_ = batch.plan.epoch;
        if (epoch_ >= num_epochs_) {
          ended = true;
          break;
        }
      }
      const Latents z = latents(batch);
      const int64_t B = z.z.size(0), F = z.z.size(2);
      const int64_t gm = global_micro(micro);
      StepDraw d = draw_step(setup_.routing, seed_, gs, gm, 0, B);
      auto noise = draw_noise(seed_, gs, gm, 0, B, z.z[0].sizes().vec());
      for (int64_t b = 0; b < B; ++b) {
        ExpertStepInput in;
        in.x0 = z.z[b];
        condition(in, z, b, cond_ == ImageConditioning::TI2V && draw_ti2v_image(seed_, gs, gm, 0, b, F));
        if (cond_ == ImageConditioning::TI2V) first_frame.push_back(in.clean_first_frame);
        in.noise = noise[static_cast<size_t>(b)];
        in.sigma = d.sigma[static_cast<size_t>(b)];
        in.t = d.t[static_cast<size_t>(b)];
        in.context = texts_->get(meta_, meta_.rows[batch.clips[static_cast<size_t>(b)].meta_index]);
        const double w = weight(in.t);
        loss += w * e.accumulate(in, w / static_cast<double>(B * A)) / static_cast<double>(B * A);
        ts.push_back(in.t);
      }
      samples += B;
    }
    if (any_rank(ended)) {  // the ranks' last batches fall in different steps: stop together
      e.release_gradients();
      break;
    }
    if (dp_) {
      dp_->average_gradients(e.parameters());
      loss = dp_->mean(loss);
    }
    double max_abs = 0;
    for (const auto& p : e.parameters())
      if (p.grad().defined()) max_abs = std::max(max_abs, p.grad().abs().max().item<double>());
    const ClipResult clip = e.finish_gradients();
    const int64_t k = expert_basis ? e.global_step() : gs;
    const double lr = (high ? sched_high_ : sched_low_).lr(k, high ? lr_high_ : lr_low_);
    e.set_learning_rate(lr);
    e.update();
    e.release_gradients();  // the idle expert keeps no gradient buffers
    last_cursor_ = batch.plan.cursor;
    const auto now = std::chrono::steady_clock::now();
    emit_step(high, loss, lr, clip, max_abs, ts, first_frame, batch, std::chrono::duration<double>(now - t0).count(), samples);
    const int64_t step = global_step();
    if (step % ckpt_every == 0 && step < max_steps_) checkpoint();
    if (step % eval_every == 0) evaluate();
    t0 = std::chrono::steady_clock::now();
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
  run_ = dist::open_run_for_rank(setup_.output_dir, rank_);
  if (run_) heartbeat_ = std::make_unique<run::Heartbeat>(5.0);
  dp_ = dist::DataParallel::connect(env);
  if (dp_) spdlog::info("data parallel: rank {} of {}", rank_, world_);
  for (const auto& w : setup_.warnings) spdlog::warn("{}", w);
  device_ = open_training_device(env.local_rank, cfg_.str("mixed_precision") == "bf16" && !cfg_.is_default("mixed_precision"),
                                 cfg_.boolean("low_vram") && !cfg_.is_default("low_vram"),
                                 "both experts stay in CPU memory");

  build_loader();
  options_ = experts_maths_options(cfg_);
  options_sha_ = sha256_hex(options_.dump());
  build_models();
  resume();
  build_eval();
  if (run_) run_->write_run_yaml(cfg_.to_yaml());
  if (run_ && cfg_.str("report_to") == "tensorboard")
    tb_ = std::make_unique<io::TfEventsWriter>(fs::join(run_->path(), cfg_.str("logging_dir")));
  run::EventStream::global().emit("started", {{"job", "experts"},
                                              {"config", cfg_.to_json()},
                                              {"world_size", world_},
                                              {"resume_step", resume_step_},
                                              {"max_train_steps", max_steps_},
                                              {"boundary", setup_.routing.boundary()},
                                              {"p_high", setup_.routing.p_high()},
                                              {"dataset_rows", loader_->rows().size()},
                                              {"eval_samples", eval_.size()},
                                              {"parameters_high", setup_.high.config.parameter_count()},
                                              {"parameters_low", setup_.low.config.parameter_count()},
                                              {"conditioning", setup_.high.config.model_type},
                                              {"fp8_bytes_per_expert", high_->model()->fp8_bytes()}});
  train_loop();
  const int64_t step = global_step();
  if (cancelled_ || run::cancel_requested()) {
    if (run_ && !run_->has_checkpoint(step) && step > resume_step_) checkpoint();
    run::EventStream::global().finished("cancelled", step);
    return 130;
  }
  evaluate();
  spdlog::info("done: {} steps, high {} ({:.1f} %), low {}", step, high_->global_step(),
               step ? 100.0 * static_cast<double>(high_->global_step()) / static_cast<double>(step) : 0.0, low_->global_step());
  checkpoint();
  run::EventStream::global().finished("completed", step);
  return 0;
}

}  // namespace

int run_train_experts(const std::vector<std::string>& argv) {
  return run_training_verb<Trainer>(experts_option_schema(), argv, [](io::Config& cfg) { return resolve_experts_setup(cfg); });
}

}  // namespace ws::train
