// SPDX-License-Identifier: Apache-2.0
// The frame every training verb shares (docs/design/architecture.md, Processes and Event stream): --help,
// cancel handlers, config + demo data, every config problem as an `error` event before any
// `started`, and a failure during the run as `error` + `finished failed` at the step reached.
//
//   int run_train_x(argv) { return run_training_verb<Trainer>(x_option_schema(), argv, resolve_x_setup); }
#pragma once
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/yaml_config.h"
#include "train/memory_plan.h"
#include "train/run_options.h"
#include "train/training_run.h"

namespace ws::train {

bool print_help_if_asked(const io::OptionSchema& schema, const std::vector<std::string>& argv);
// load_config, then the demo dataset when `demo_data: auto` asks for it (a failure is a config error).
io::Config load_training_config(const io::OptionSchema& schema, const std::vector<std::string>& argv);
// A fresh run (no resume) into an output_dir that already holds a run would prune that run's
// checkpoints and append to its events: a config error with the way out, unless
// `overwrite_output_dir` asks for it, in which case the old run's checkpoints, events and run.yaml
// are removed before the new run starts (clear_previous_run, once the whole config is valid).
void check_output_dir_free(io::Config& cfg, const RunOptions& run);
void clear_previous_run(const RunOptions& run);
// train_data_meta and train_data_dir exist (unless demo_data: auto will write them), demo_data is 'auto'.
void check_data_options(io::Config& cfg, const DataOptions& data);
bool is_rank_zero();  // from RANK; true without data parallel
// train_batch_size against the machine (one batch of decoded frames in half the memory) and
// the data (no more than the metadata's rows): a config error instead of a run that grows until
// it is killed or never fills a batch.
void check_batch_fits(io::Config& cfg, const DataOptions& data);
// One `error` event per problem (also into <output_dir>/events.jsonl when the folder can be made),
// `finished failed` at step 0; returns the exit code 1.
int report_config_errors(const io::Config& cfg);
// Before anything is allocated, on the CPU: the run's memory by formula (`estimate(ranks, target)`,
// train/memory_plan.h; per rank, times the ranks on this machine) against host_memory_bytes(). A
// config error with the figures when it does not fit, unless the config's `force` is set; nothing
// on a GPU (`estimate --device cuda` compares with a card) or when the estimate cannot be made.
void check_memory_fits(io::Config& cfg,
                       const std::function<TrainingMemory(int64_t ranks, const MemoryTarget&)>& estimate);
// The trainers without a memory formula (the demo VAE) pass this.
struct NoMemoryCheck {
  template <class Setup>
  void operator()(io::Config&, const Setup&) const {}
};

// `error` (first line of a LibTorch message) + `finished failed` at `step`; returns 1.
int report_run_failure(std::exception_ptr error, int64_t step);

// Trainer: a TrainerHooks constructible from its Setup; Setup has `run` (RunOptions) and
// `warnings`. Every problem of the config is reported before anything starts; then the shell runs.
template <class Trainer, class Resolve, class MemoryCheck = NoMemoryCheck>
int run_training_verb(const io::OptionSchema& schema, const std::vector<std::string>& argv, Resolve resolve,
                      const DeviceWishes& device = {}, MemoryCheck memory_check = {}) {
  if (print_help_if_asked(schema, argv)) return 0;
  io::Config cfg = load_training_config(schema, argv);
  decltype(resolve(cfg)) setup;
  // The checks of the whole config run even after the file had problems (a mistyped key must not
  // hide a missing VAE): a run reports everything wrong with it at once.
  const bool loaded = cfg.ok();
  try {
    setup = resolve(cfg);
  } catch (const std::exception&) {
    if (loaded) throw;  // otherwise a consequence of problems already reported
  }
  if (!cfg.ok()) return report_config_errors(cfg);
  memory_check(cfg, setup);
  if (!cfg.ok()) return report_config_errors(cfg);
  clear_previous_run(setup.run);
  TrainingRun run(cfg, setup.run, setup.warnings);
  Trainer trainer(std::move(setup));
  return run.execute(trainer, device);
}

}  // namespace ws::train
