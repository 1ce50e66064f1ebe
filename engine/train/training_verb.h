// The frame every training verb shares (architecture.md, Processes and Event stream): --help,
// cancel handlers, config + demo data, every config problem as an `error` event before any
// `started`, and a failure during the run as `error` + `finished failed` at the step reached.
//
//   int run_train_x(argv) { return run_training_verb<Trainer>(x_option_schema(), argv, resolve_x_setup); }
#pragma once
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "io/yaml_config.h"

namespace ws::train {

bool print_help_if_asked(const io::OptionSchema& schema, const std::vector<std::string>& argv);
// load_config, then the demo dataset when `demo_data: auto` asks for it (a failure is a config error).
io::Config load_training_config(const io::OptionSchema& schema, const std::vector<std::string>& argv);
// One `error` event per problem (also into <output_dir>/events.jsonl when the folder can be made),
// `finished failed` at step 0; returns the exit code 1.
int report_config_errors(const io::Config& cfg);
// `error` (first line of a LibTorch message) + `finished failed` at `step`; returns 1.
int report_run_failure(std::exception_ptr error, int64_t step);

// Trainer: constructible from (io::Config&, Setup), with int run() and int64_t global_step().
template <class Trainer, class Resolve>
int run_training_verb(const io::OptionSchema& schema, const std::vector<std::string>& argv, Resolve resolve) {
  if (print_help_if_asked(schema, argv)) return 0;
  io::Config cfg = load_training_config(schema, argv);
  decltype(resolve(cfg)) setup;
  if (cfg.ok()) setup = resolve(cfg);
  if (!cfg.ok()) return report_config_errors(cfg);
  // The trainer outlives a failure so the `error` still reaches its events.jsonl.
  auto trainer = std::make_unique<Trainer>(cfg, std::move(setup));
  try {
    return trainer->run();
  } catch (...) {
    return report_run_failure(std::current_exception(), trainer->global_step());
  }
}

}  // namespace ws::train
