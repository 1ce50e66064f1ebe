// SPDX-License-Identifier: Apache-2.0
#include "train/training_verb.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "contract/best_checkpoint.h"
#include "contract/run_layout.h"
#include "core/fs.h"
#include "core/log.h"
#include "dataset/metadata.h"
#include "parallel/data_parallel.h"
#include "parallel/dist_env.h"
#include "train/training_device.h"
#include "io/printable.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/run_dir.h"
#include "train/run_setup.h"

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
  runtime::install_cancel_handlers();
  io::Config cfg = io::load_config(schema, argv);
  try {
    if (make_demo_data_if_asked(cfg)) ws::log::info("wrote the demo dataset for {}", cfg.str("train_data_meta"));
  } catch (const std::exception& e) {
    cfg.error("demo_data", e.what());
  }
  return cfg;
}

namespace {

// What marks a folder as holding a run: its event stream or a complete checkpoint.
bool holds_run(const std::string& dir) {
  return fs::exists(fs::join(dir, contract::kEventsFile)) || !runtime::list_checkpoints(dir).empty();
}

}  // namespace

bool is_rank_zero() {
  try {
    return parallel::DistEnv::from_environment().rank == 0;
  } catch (const std::exception&) {
    return true;  // a bad environment is reported where the ranks connect
  }
}

void check_output_dir_free(io::Config& cfg, const RunOptions& run) {
  // Any resume_from_checkpoint (even `latest` with no checkpoint yet) continues the run there.
  // Rank 0 alone owns the folder; the others would race with its first writes.
  const std::string& output_dir = run.output_dir;
  if (run.resume_from_checkpoint || !is_rank_zero() || !fs::is_dir(output_dir) || !holds_run(output_dir)) return;
  if (run.overwrite_output_dir) return;
  const auto latest = runtime::latest_checkpoint(output_dir);
  cfg.error("output_dir", output_dir + " already holds a run" +
                              (latest ? " (latest " + latest->name + ")" : std::string()) +
                              "; continue it with --resume_from_checkpoint latest, pick a new output_dir, or "
                              "set overwrite_output_dir: true to replace it");
}

void clear_previous_run(const RunOptions& run) {
  const std::string& output_dir = run.output_dir;
  if (!run.overwrite_output_dir || run.resume_from_checkpoint || !is_rank_zero() || !fs::is_dir(output_dir) ||
      !holds_run(output_dir))
    return;
  std::error_code ec;
  for (const auto& c : runtime::list_checkpoints(output_dir)) std::filesystem::remove_all(c.path, ec);
  for (const char* name : {contract::kEventsFile, contract::kRunYaml, contract::kBestFile})
    std::filesystem::remove(fs::join(output_dir, name), ec);
  ws::log::warn("overwrite_output_dir: removed the previous run's checkpoints and events in {}", output_dir);
}

void check_data_options(io::Config& cfg, const DataOptions& data) {
  const bool demo = cfg.opt_str("demo_data").value_or("") == "auto";
  if (!data.meta.empty() && !fs::exists(data.meta))
    cfg.error("train_data_meta",
              "file not found: " + data.meta + (demo ? "" : " (set demo_data: auto to make the demo dataset)"));
  if (!data.dir.empty() && !fs::is_dir(data.dir)) cfg.error("train_data_dir", "folder not found: " + data.dir);
  if (cfg.is_set("demo_data") && !demo) cfg.error("demo_data", "the only value is 'auto'");
}

void check_memory_fits(io::Config& cfg,
                       const std::function<TrainingMemory(int64_t ranks, const MemoryTarget&)>& estimate) {
  if (cfg.schema().find("force") && cfg.boolean("force")) return;
  if (training_device(0).is_cuda()) return;
  parallel::DistEnv env;
  try {
    env = parallel::DistEnv::from_environment();
  } catch (const std::exception&) {
    return;  // bad rank variables: the run reports them as its own error
  }
  // Ranks launched on this machine share its memory (launch, torchrun's LOCAL_WORLD_SIZE).
  const char* local = std::getenv("LOCAL_WORLD_SIZE");
  const int64_t here = local ? std::max<int64_t>(1, std::atoll(local)) : env.world;
  MemoryTarget target;
  target.runtime = runtime_bytes();
  TrainingMemory e;
  try {
    e = estimate(env.world, target);
  } catch (const std::exception&) {
    return;  // a formula that cannot be made is no reason to refuse a run
  }
  const std::string problem = training_memory_problem(e, here);
  if (!problem.empty()) cfg.add_error(problem);
}

void check_batch_fits(io::Config& cfg, const DataOptions& data) {
  const int64_t batch = data.batch_size, size = data.sample_size, frames = data.n_frames;
  // One micro-batch of decoded float pixels must fit in half of this machine's memory, or the
  // run would grow until the kernel kills it.
  const double bytes = static_cast<double>(batch) * static_cast<double>(frames) * static_cast<double>(size) *
                       static_cast<double>(size) * 3.0 * 4.0;
  const double ram = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (ram > 0 && bytes > ram / 2) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "one batch (train_batch_size %lld x %lld frames x %lldx%lld pixels) needs %.1f GB as floats; "
                  "this machine has %.1f GB",
                  static_cast<long long>(batch), static_cast<long long>(frames), static_cast<long long>(size),
                  static_cast<long long>(size), bytes / 1e9, ram / 1e9);
    cfg.error("train_batch_size", buf);
  }
  // A batch needs that many rows of the dataset; more would never fill one.
  if (!data.meta.empty() && fs::exists(data.meta)) {
    try {
      const auto meta = dataset::read_metadata(data.meta, data.dir);
      if (static_cast<int64_t>(meta.rows.size()) < batch)
        cfg.error("train_batch_size", std::to_string(batch) + " is more than the " + std::to_string(meta.rows.size()) +
                                          " rows of " + data.meta);
    } catch (const std::exception&) {
      // An unreadable metadata.json is reported where the data is checked.
    }
  }
}

int report_config_errors(const io::Config& cfg) {
  auto& events = runtime::EventStream::global();
  // Nothing started, so no folder is made for it. A folder that exists but holds no run yet
  // (one the studio prepared) gets the errors in its events.jsonl; another run's file is left
  // alone.
  try {
    if (cfg.is_set("output_dir")) {
      const std::string dir = cfg.str("output_dir"), file = fs::join(dir, contract::kEventsFile);
      if (fs::is_dir(dir) && !fs::exists(file)) events.open_file(file);
    }
  } catch (const std::exception&) {
  }
  // A long bad list can produce thousands of problems: the first few say what is wrong.
  constexpr size_t kShown = 20;
  std::vector<std::string> errors(
      cfg.errors().begin(), cfg.errors().begin() + static_cast<std::ptrdiff_t>(std::min(kShown, cfg.errors().size())));
  if (cfg.errors().size() > kShown)
    errors.push_back("... and " + std::to_string(cfg.errors().size() - kShown) + " more problems like these");
  for (const auto& e : errors) events.error(e);
  events.finished("failed", 0);
  // stdout carries the events; a person reads stderr.
  for (const auto& e : errors) std::fprintf(stderr, "error: %s\n", io::printable(e, 4096).c_str());
  return 1;
}

int report_run_failure(std::exception_ptr error, int64_t step) {
  auto& events = runtime::EventStream::global();
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
  if (!events.to_stdout()) ws::log::error("{}", msg);
  events.finished("failed", step);
  return 1;
}

}  // namespace ws::train
