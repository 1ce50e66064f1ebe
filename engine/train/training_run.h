// SPDX-License-Identifier: Apache-2.0
// The training-run shell (docs/design/architecture.md §3–§4): what every trainer's run has in
// common, written once. A trainer supplies hooks (prepare, one optimizer step, checkpoint,
// validation); the shell owns the rest:
//
//   rank and world size ─ run folder, logging and heartbeat (rank 0) ─ data parallel ─ device
//   ─ prepare() ─ run.yaml ─ TensorBoard ─ `started`
//   ─ { train_step() ─ `step` with throughput and ETA ─ checkpoint / validation cadence ─ cancel? }
//   ─ complete() + final checkpoint, or the cancel checkpoint ─ `finished` ─ exit code
//
// and a failure anywhere after the config was accepted becomes `error` + `finished failed` at
// the step reached (the run folder stays open for it).
#pragma once
#include <cstddef>
#include <torch/torch.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/best_checkpoint.h"
#include "train/run_options.h"

namespace ws::io {
class Config;
class TfEventsWriter;
}  // namespace ws::io
namespace ws::runtime {
class RunDir;
class Heartbeat;
}  // namespace ws::runtime
namespace ws::parallel {
class DataParallel;
}  // namespace ws::parallel

namespace ws::train {

// What one optimizer step reports; the shell adds the step number, throughput and ETA.
struct StepReport {
  std::string expert;  // "upsampler" | "high" | "low" | "vae"
  int64_t expert_step = 0;
  double loss = 0, lr = 0, grad_norm = 0;
  std::optional<double> grad_clip;
  int64_t samples = 0;                              // clips this rank trained on in the step
  nlohmann::json extra = nlohmann::json::object();  // the job's own `step` fields
};

// Throughput over the last steps: samples/s of all ranks together and the time left.
struct StepRate {
  double samples_per_s = 0, eta_s = 0, step_seconds = 0;
};

class TrainingRun;

class TrainerHooks {
 public:
  virtual ~TrainerHooks() = default;
  // Loader, models, resume: the run folder is open and the device chosen.
  virtual void prepare(TrainingRun& run) = 0;
  virtual int64_t global_step() const = 0;
  virtual int64_t resume_step() const = 0;
  virtual int64_t max_steps() const = 0;
  virtual nlohmann::json started_fields() const { return nlohmann::json::object(); }
  // Freed heap blocks up to this size stay for the next step (runtime::keep_large_blocks_for_reuse);
  // larger ones go back to the system. The upsampler's oneDNN reorders (28–81 MB) want them kept; the
  // DiT's do not (glibc's own 32 MB: the same speed, and at the 5B width and 4096 tokens 8.8 GB
  // instead of 11.3 GB, its 235 MB FFN tensors no longer left beside one another).
  virtual std::size_t kept_block_bytes() const { return std::size_t{256} << 20; }
  // One optimizer step, or nullopt when the data ended (every rank agreed).
  virtual std::optional<StepReport> train_step() = 0;
  // Rank 0 writes; `final_save` is the completed run's last one.
  virtual void checkpoint(bool final_save) = 0;
  // Every `validation_steps` (TrainingRun::set_validation_steps).
  virtual void validate(int64_t step) {}
  // The run completed its steps: before the final checkpoint.
  virtual void complete() {}
  // TensorBoard scalars of a step (rank 0 with report_to: tensorboard).
  virtual void log_scalars(io::TfEventsWriter& tb, const StepReport& report, const StepRate& rate) {}
};

struct DeviceWishes {
  bool gpu = true;              // false: the job trains on the CPU only
  std::string low_vram_effect;  // what low_vram does on a GPU, for the CPU warning
};

class TrainingRun {
 public:
  // `warnings` are the config's notes, logged once the run folder is open.
  TrainingRun(io::Config& cfg, RunOptions options, std::vector<std::string> warnings = {});
  ~TrainingRun();
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  // The whole run; returns the worker's exit code (0 completed, 1 failed, 130 cancelled).
  int execute(TrainerHooks& trainer, const DeviceWishes& device = {});

  const RunOptions& options() const { return options_; }
  int rank() const { return rank_; }
  int world() const { return world_; }
  bool is_rank_zero() const { return rank_ == 0; }
  const torch::Device& device() const { return device_; }
  parallel::DataParallel* data_parallel() const { return dp_.get(); }
  runtime::RunDir* run_dir() const { return run_.get(); }        // null on ranks other than 0
  io::TfEventsWriter* tensorboard() const { return tb_.get(); }  // null unless rank 0 reports to it
  // Whether any rank says yes (stop requests, the end of the data); `v` with one process.
  bool any_rank(bool v) const;
  // The global micro-batch index of this rank's micro-batch `micro`: the key of its random
  // streams, so P ranks × A micro-batches draw what one process with A·P would.
  int64_t global_micro(int64_t micro) const { return micro * world_ + rank_; }
  // A value the trainer derived (max_train_steps from the epochs): recorded in run.yaml.
  void set_derived(const std::string& option, const nlohmann::json& value, const std::string& note);
  void set_validation_steps(int64_t every) { validation_steps_ = every; }
  // keep_best (rank 0): a validation or eval figure of the weights at `step`. One that beats the
  // best so far is kept at the next settle_best(): the shell settles after validate() and after
  // the final checkpoint; a trainer that validates inside train_step() settles there itself.
  void offer_best(int64_t step, const std::string& metric, double value, bool higher_is_better);
  // Every rank (a checkpoint may be a collective), at the step of the offer: writes the
  // step's checkpoint if it has none and records it in best.json.
  void settle_best(TrainerHooks& t);

 private:
  void open(const DeviceWishes& wishes);
  StepRate rate(double seconds, int64_t samples, int64_t step, int64_t max_steps);
  void emit_step(int64_t step, const StepReport& r, const StepRate& rate);
  // Saves `step` unless rank 0 already holds its checkpoint; every rank takes part.
  void ensure_checkpoint(TrainerHooks& t, int64_t step);
  // settle_best() once the ranks agreed whether there is an offer and whether its step is unsaved.
  void settle_agreed_best(TrainerHooks& t, bool offered, bool unsaved);

  io::Config& cfg_;
  RunOptions options_;
  std::vector<std::string> warnings_;
  int rank_ = 0, world_ = 1, local_rank_ = 0;
  torch::Device device_{torch::kCPU};
  std::unique_ptr<runtime::RunDir> run_;
  std::unique_ptr<runtime::Heartbeat> heartbeat_;
  std::unique_ptr<parallel::DataParallel> dp_;
  std::unique_ptr<io::TfEventsWriter> tb_;
  int64_t validation_steps_ = 0;
  std::optional<contract::BestCheckpoint> best_offer_;  // rank 0: beats the best, not yet saved
  std::deque<std::pair<double, int64_t>> window_;       // (seconds, samples) of the last 10 steps
};

}  // namespace ws::train
