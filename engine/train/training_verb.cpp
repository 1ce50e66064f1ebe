#include "train/training_verb.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <cstdio>

#include "core/fs.h"
#include "run/cancel.h"
#include "run/events.h"
#include "train/upsampler_setup.h"

namespace ws::train {

bool print_help_if_asked(const io::OptionSchema& schema, const std::vector<std::string>& argv) {
  for (const auto& a : argv)
    if (a == "--help" || a == "-h") {
      std::printf("%s", schema.help_text().c_str());
      return true;
    }
  return false;
}

io::Config load_training_config(const io::OptionSchema& schema, const std::vector<std::string>& argv) {
  run::install_cancel_handlers();
  io::Config cfg = io::load_config(schema, argv);
  if (!cfg.ok()) return cfg;
  try {
    if (make_demo_data_if_asked(cfg)) spdlog::info("wrote the demo dataset for {}", cfg.str("train_data_meta"));
  } catch (const std::exception& e) {
    cfg.error("demo_data", e.what());
  }
  return cfg;
}

int report_config_errors(const io::Config& cfg) {
  auto& events = run::EventStream::global();
  // Config errors reach events.jsonl too when the run folder can be made (architecture.md).
  try {
    if (cfg.is_set("output_dir")) {
      fs::make_dirs(cfg.str("output_dir"));
      events.open_file(fs::join(cfg.str("output_dir"), "events.jsonl"));
    }
  } catch (const std::exception&) {
  }
  for (const auto& e : cfg.errors()) events.error(e);
  events.finished("failed", 0);
  return 1;
}

int report_run_failure(std::exception_ptr error, int64_t step) {
  auto& events = run::EventStream::global();
  std::string msg = "unknown error";
  try {
    std::rethrow_exception(error);
  } catch (const c10::Error& e) {
    msg = e.what_without_backtrace();
    msg = msg.substr(0, msg.find('\n'));
  } catch (const std::exception& e) {
    msg = e.what();
  } catch (...) {
  }
  events.error(msg);
  // Data-parallel ranks other than 0 emit no events: their log line is the only trace.
  if (!events.to_stdout()) spdlog::error("{}", msg);
  events.finished("failed", step);
  return 1;
}

}  // namespace ws::train
