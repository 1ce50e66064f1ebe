// SPDX-License-Identifier: Apache-2.0
#include "train/training_run.h"

#include <cstddef>

#include <chrono>
#include <cmath>

#include "contract/events.h"
#include "contract/run_layout.h"
#include "core/fs.h"
#include "io/tfevents.h"
#include "io/yaml_config.h"
#include "models/grad_checkpoint.h"
#include "parallel/data_parallel.h"
#include "runtime/allocator.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/logging.h"
#include "runtime/run_dir.h"
#include "train/training_device.h"
#include "train/training_verb.h"

namespace ws::train {
namespace {

constexpr size_t kRateWindow = 10;  // steps the throughput and ETA are averaged over

// Rank 0 owns the run folder (logs, events, checkpoints); the other ranks log to stderr only,
// tagged with their rank, and emit no events.
std::unique_ptr<runtime::RunDir> open_run_for_rank(const std::string& output_dir, int rank) {
  if (rank == 0) {
    auto dir = std::make_unique<runtime::RunDir>(output_dir);
    dir->setup_logging();
    dir->open_events();
    return dir;
  }
  runtime::LogOptions opts;
  opts.rank = rank;
  runtime::setup_logging(opts);
  runtime::EventStream::global().set_stdout(false);
  return nullptr;
}

}  // namespace

TrainingRun::TrainingRun(io::Config& cfg, RunOptions options, std::vector<std::string> warnings)
    : cfg_(cfg), options_(std::move(options)), warnings_(std::move(warnings)) {}

TrainingRun::~TrainingRun() = default;

bool TrainingRun::any_rank(bool v) const { return dp_ ? dp_->any(v) : v; }

void TrainingRun::set_derived(const std::string& option, const nlohmann::json& value, const std::string& note) {
  cfg_.set(option, value, note);
}

void TrainingRun::open(const DeviceWishes& wishes) {
  const parallel::DistEnv env = parallel::DistEnv::from_environment();
  rank_ = env.rank;
  world_ = env.world;
  local_rank_ = env.local_rank;
  run_ = open_run_for_rank(options_.output_dir, rank_);
  if (run_) heartbeat_ = std::make_unique<runtime::Heartbeat>(5.0);
  for (const auto& w : warnings_) ws::log::warn("{}", w);
  if (!wishes.gpu) {
    device_ = torch::kCPU;
    ws::log::info("training on the CPU");
  } else {
    device_ = open_training_device(local_rank_, options_.bf16_asked, options_.low_vram_asked, wishes.low_vram_effect);
  }
  // The device decides the backend (NCCL for GPUs where built).
  dp_ = parallel::DataParallel::connect(env, device_);
  if (dp_) ws::log::info("data parallel: rank {} of {} over {}", rank_, world_, dp_->backend());
  if (options_.allow_tf32) {
    if (device_.is_cuda()) {
      at::globalContext().setAllowTF32CuBLAS(true);
      at::globalContext().setAllowTF32CuDNN(true);
    } else {
      ws::log::info("allow_tf32 has no effect on the CPU");
    }
  }
}

StepRate TrainingRun::rate(double seconds, int64_t samples, int64_t step, int64_t max_steps) {
  window_.emplace_back(seconds, samples);
  while (window_.size() > kRateWindow) window_.pop_front();
  double secs = 0, n = 0;
  for (const auto& [s, k] : window_) secs += s, n += static_cast<double>(k);
  StepRate r;
  r.step_seconds = seconds;
  r.samples_per_s = secs > 0 ? n * world_ / secs : 0;
  r.eta_s = secs / static_cast<double>(window_.size()) * static_cast<double>(max_steps - step);
  return r;
}

void TrainingRun::emit_step(int64_t step, const StepReport& r, const StepRate& rate) {
  contract::StepEvent ev;
  ev.step = step;
  ev.expert = r.expert;
  ev.expert_step = r.expert_step;
  ev.loss = r.loss;
  ev.lr = r.lr;
  ev.grad_norm = r.grad_norm;
  ev.grad_clip = r.grad_clip;
  ev.samples_per_s = rate.samples_per_s;
  ev.eta_s = rate.eta_s;
  ev.extra = r.extra;
  ev.extra["step_s"] = rate.step_seconds;  // this update's wall time (data_wait_s, vae_s, model_s are parts of it)
  runtime::EventStream::global().emit(ev);
}

void TrainingRun::ensure_checkpoint(TrainerHooks& t, int64_t step) {
  if (any_rank(run_ && !run_->committed(step))) t.checkpoint(false);
}

void TrainingRun::offer_best(int64_t step, const std::string& metric, double value, bool higher_is_better) {
  if (!options_.keep_best || !run_ || !std::isfinite(value)) return;
  const auto& best = run_->best();
  if (best_offer_ && best_offer_->step == step && !best_offer_->beaten_by(value)) return;
  if (!best_offer_ && best && best->metric == metric && !best->beaten_by(value)) return;
  contract::BestCheckpoint b;
  b.step = step;
  b.path = contract::checkpoint_name(step);
  b.metric = metric;
  b.value = value;
  b.higher_is_better = higher_is_better;
  best_offer_ = b;
}

void TrainingRun::settle_best(TrainerHooks& t) {
  if (!options_.keep_best) return;
  // Only rank 0 offers and only it knows whether the step is saved: one all-reduce tells every rank both.
  const std::vector<bool> mine{best_offer_.has_value(), run_ && !run_->committed(t.global_step())};
  const std::vector<bool> agreed = dp_ ? dp_->any_of(mine) : mine;
  settle_agreed_best(t, agreed[0], agreed[1]);
}

void TrainingRun::settle_agreed_best(TrainerHooks& t, bool offered, bool unsaved) {
  if (!offered) return;
  if (unsaved) t.checkpoint(false);
  if (run_ && best_offer_) run_->set_best(*best_offer_, options_.checkpoints_total_limit);
  best_offer_.reset();
}

int TrainingRun::execute(TrainerHooks& t, const DeviceWishes& wishes) {
  auto& events = runtime::EventStream::global();
  // Loading is one-shot (a kernel's dense copy is freed once it is packed): large blocks go back
  // as they are freed. The steps then allocate the same sizes again and again: keep them.
  runtime::return_large_blocks_to_system();
  try {
    open(wishes);
    t.prepare(*this);
    runtime::release_free_heap();
    const std::size_t kept = t.kept_block_bytes();
    // The heap's top is kept up to 1 GB with the large policy, twice the threshold (glibc's rule) below.
    runtime::keep_large_blocks_for_reuse(kept, kept >= (std::size_t{256} << 20) ? std::size_t{1} << 30 : 2 * kept);
    if (run_ && run_->best() && (!options_.keep_best || run_->best()->step > t.resume_step())) {
      if (options_.keep_best)
        ws::log::info("keep_best: {} is past the resume point; the best starts afresh", run_->best()->path);
      run_->clear_best();  // without keep_best the old best is pruned like any checkpoint
    }
    if (any_rank(runtime::cancel_requested())) {  // asked to stop while preparing (encoding captions, ...)
      events.finished("cancelled", t.global_step());
      return 130;
    }
    if (run_) run_->write_run_yaml(cfg_.to_yaml());
    if (run_ && options_.tensorboard)
      tb_ = std::make_unique<io::TfEventsWriter>(fs::join(run_->path(), options_.logging_dir));
    contract::StartedEvent started;
    started.job = options_.job;
    started.config = cfg_.to_json();
    started.world_size = world_;
    started.resume_step = t.resume_step();
    started.max_train_steps = t.max_steps();
    started.extra = t.started_fields();
    events.emit(started);

    const int64_t max_steps = t.max_steps();
    const int64_t recomputes_at_start = models::checkpoint_recomputations();
    bool cancelled = false;
    while (t.global_step() < max_steps) {
      const auto t0 = std::chrono::steady_clock::now();
      std::optional<StepReport> report = t.train_step();
      if (!report) break;  // the data ended on every rank
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const int64_t step = t.global_step();
      const StepRate r = rate(secs, report->samples, step, max_steps);
      emit_step(step, *report, r);
      if (tb_) t.log_scalars(*tb_, *report, r);
      if (step % options_.checkpointing_steps == 0 && step < max_steps) t.checkpoint(false);
      if (validation_steps_ > 0 && step % validation_steps_ == 0) t.validate(step);
      // One agreement per step: keep_best's offer (and whether its step is saved), then the stdin
      // requests: `cancel` stops, `save` checkpoints and goes on.
      const std::vector<bool> mine{options_.keep_best && best_offer_.has_value(), run_ && !run_->committed(step),
                                   runtime::cancel_requested(), runtime::take_save_request()};
      const std::vector<bool> asked = dp_ ? dp_->any_of(mine) : mine;
      settle_agreed_best(t, asked[0], asked[1]);
      if (asked[2]) {
        cancelled = true;
        break;
      }
      if (asked[3]) {
        if (run_ && run_->committed(step))
          events.log("info", "save: " + contract::checkpoint_name(step) + " is already saved");
        ensure_checkpoint(t, step);
        // Asked for by a person: rotation must not take it away minutes later.
        if (run_) run_->keep_checkpoint(step, "saved on request at step " + std::to_string(step));
      }
    }
    const int64_t step = t.global_step();
    // Evidence that gradient_checkpointing acted: blocks recomputed in backward this run.
    if (const int64_t n = models::checkpoint_recomputations() - recomputes_at_start; n > 0)
      events.log("info", "gradient checkpointing: " + std::to_string(n) + " block activations recomputed in backward");
    if (cancelled || runtime::cancel_requested()) {
      // The contract: the step is done, a checkpoint holds it, exit 130.
      // Rank 0 knows whether the step is saved; every rank takes part (ZeRO gathers state).
      if (any_rank(run_ && !run_->committed(step) && step > t.resume_step())) t.checkpoint(false);
      events.finished("cancelled", step);
      return 130;
    }
    t.complete();
    t.checkpoint(true);
    settle_best(t);  // an eval in complete() may have found the best
    events.finished("completed", step);
    return 0;
  } catch (...) {
    return report_run_failure(std::current_exception(), t.global_step());
  }
}

}  // namespace ws::train
