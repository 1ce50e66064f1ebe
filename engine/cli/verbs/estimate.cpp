// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine estimate --config RUN.yaml [run flags] [--nproc P] [--time_steps N]`: the
// memory a training run will need, by formula from its models' configs, sizes and options
// (train/memory_estimate.h, docs/design/estimate.md), checked against this machine's memory
// before anything is loaded. `--time_steps N` then trains N real steps in a scratch folder (a
// child worker, stopped after its N-th step without a checkpoint) and reports their time and
// the child's measured peak. Human table on stderr; the last stdout line is JSON.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/verb.h"
#include "core/error.h"
#include "core/fs.h"
#include "models/packed_conv.h"
#include "models/umt5.h"
#include "models/wan_vae.h"
#include "io/weights.h"
#include "train/experts/experts_options.h"
#include "train/experts/experts_setup.h"
#include "train/experts/experts_fit.h"
#include "train/experts/experts_memory.h"
#include "train/memory_estimate.h"
#include "train/upsampler/upsampler_memory.h"
#include "train/training_verb.h"
#include "train/upsampler/upsampler_options.h"
#include "train/upsampler/upsampler_setup.h"
#include "runtime/signal_thread.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;
namespace stdfs = std::filesystem;

constexpr const char* kUsage =
    "usage: wanstudio-engine estimate --config RUN.yaml [RUN FLAGS...] [--nproc P] [--time_steps N]\n"
    "                                 [--device cpu|cuda] [--device_memory GIB]\n"
    "\n"
    "The memory a training run will need (job upsampler or experts), by formula from its models'\n"
    "configs, sizes and options: weights, gradients, optimizer state, EMA, activations (gradient\n"
    "checkpointing), the VAE and the text encoder, LoRA, fp8, bf16 weights, ZeRO-2 over P ranks;\n"
    "and whether it fits this machine. --time_steps N also trains N real steps in a scratch\n"
    "folder and reports their seconds and the measured peak (2 is enough: the first step warms\n"
    "up). --device cuda estimates a GPU's memory instead (bf16 activations and VAE with mixed\n"
    "precision, low_vram's idle expert in host memory, a usual CUDA context), against\n"
    "--device_memory. Flags after the config override it, as for the training verbs. Last stdout\n"
    "line: JSON.\n";

std::string gib(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Trains `steps` steps in a child worker and stops it after the last one (SIGKILL: no checkpoint
// is written); its step times and measured peak RSS.
json time_steps(const std::string& verb, const std::vector<std::string>& run_args, int64_t steps) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw Error("estimate: cannot find this program to run the timed steps");
  exe[n] = 0;
  // A new private folder (mkdtemp): a predictable name in a shared /tmp could be a link to a run.
  const std::string dir = fs::make_temp_dir(stdfs::temp_directory_path().string(), "wanstudio-estimate-");
  std::vector<std::string> args{exe, verb};
  args.insert(args.end(), run_args.begin(), run_args.end());
  args.insert(args.end(),
              {"--output_dir", dir, "--overwrite_output_dir", "--max_train_steps", std::to_string(steps + 1),
               "--checkpointing_steps", "1000000000", "--report_to", "none", "--validation_steps", "1000000000"});
  if (verb == "train-upsampler") args.insert(args.end(), {"--validation_epochs", "1000000"});
  if (verb == "train-experts") args.insert(args.end(), {"--eval_steps", "1000000000"});
  int out[2];
  if (::pipe(out) != 0) throw Error("estimate: pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("estimate: fork failed");
  if (pid == 0) {
    runtime::unblock_routed_signals();  // the mask survives exec
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    // No control lines on its stdin, and its human log kept out of the estimate's.
    const int null_in = ::open("/dev/null", O_RDONLY), null_out = ::open("/dev/null", O_WRONLY);
    if (null_in >= 0) ::dup2(null_in, STDIN_FILENO);
    if (null_out >= 0) ::dup2(null_out, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  FILE* f = ::fdopen(out[0], "r");
  std::vector<double> secs;
  std::string error;
  char* line = nullptr;
  size_t cap = 0;
  while (::getline(&line, &cap, f) > 0) {
    const json ev = json::parse(line, nullptr, false);
    if (!ev.is_object()) continue;
    const std::string type = ev.value("type", "");
    if (type == "error" && error.empty()) error = ev.value("message", "");
    if (type == "step") {
      secs.push_back(ev.value("step_s", 0.0));
      std::fprintf(stderr, "estimate: timed step %zu: %.3f s\n", secs.size(), secs.back());
      if (static_cast<int64_t>(secs.size()) >= steps) {
        ::kill(pid, SIGKILL);  // no checkpoint, no final validation
        break;
      }
    }
  }
  std::free(line);
  std::fclose(f);
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  std::error_code ec;
  stdfs::remove_all(dir, ec);
  if (static_cast<int64_t>(secs.size()) < steps)
    throw Error("estimate: the timed run ended after " + std::to_string(secs.size()) + " of " + std::to_string(steps) +
                " steps" + (error.empty() ? "" : ": " + error));
  json j = {
      {"steps", steps}, {"step_seconds", secs}, {"measured_peak_bytes", static_cast<double>(ru.ru_maxrss) * 1024.0}};
  if (steps > 1) {
    double sum = 0;
    for (size_t i = 1; i < secs.size(); ++i) sum += secs[i];
    j["seconds_per_step"] = sum / static_cast<double>(secs.size() - 1);  // past the warm-up step
  } else {
    j["seconds_per_step"] = secs[0];
  }
  return j;
}

// --device_memory: a number of GiB, with an optional unit (GiB, G: 2^30 bytes; GB: 10^9 bytes).
double parse_device_memory(const std::string& text) {
  if (text.empty()) return 0;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  const double scale = unit.empty() || unit == "GiB" || unit == "G" ? 1024.0 * 1024 * 1024 : unit == "GB" ? 1e9 : 0;
  if (used == 0 || scale == 0 || !(v >= 1 && v <= 65536))
    throw UsageError("--device_memory: a size from 1 to 65536 GiB such as 24, 24GiB or 80GB, got '" + text + "'");
  return v * scale;
}

std::string read_job(const std::string& path) {
  try {
    // read_file refuses a FIFO, folder or device with a one-line error instead of blocking on it.
    const YAML::Node y = YAML::Load(fs::read_file(path));
    if (y.IsMap() && y["job"] && y["job"].IsScalar()) return y["job"].as<std::string>();
  } catch (const YAML::Exception& e) {
    throw Error(path + ": " + e.what());
  }
  throw Error(path + ": no `job:` key (expected upsampler or experts)");
}

// The run file resolved as its training verb resolves it (every check, the same messages),
// then `estimate` on the setup. Returns the problems; where the run would write is not one.
template <class Resolve, class Estimate>
std::vector<std::string> resolve_and_estimate(const io::OptionSchema& schema, const std::vector<std::string>& args,
                                              Resolve resolve, Estimate estimate) {
  io::Config cfg = train::load_training_config(schema, args);
  decltype(resolve(cfg)) setup;
  try {
    setup = resolve(cfg);
  } catch (const std::exception& ex) {
    cfg.add_error(ex.what());
  }
  std::vector<std::string> problems;
  for (const auto& err : cfg.errors())
    if (err.find("output_dir") == std::string::npos && err.find("resume_from_checkpoint") == std::string::npos)
      problems.push_back(err);
  if (problems.empty()) estimate(setup);
  return problems;
}

int run_estimate(const std::vector<std::string>& argv) {
  // The usage text says it all; the declared options carry their ranges (--help lists them).
  Args a("estimate", std::string(kUsage).substr(24), "");
  a.value("config", "RUN.yaml", "the run (required); flags after it override it, as for the training verbs")
      .value("nproc", "P", "data-parallel ranks (ZeRO-2 shards over them)", int_range(1, 65536))
      .value("time_steps", "N", "also train N real steps in a scratch folder and time them", int_range(1, 1000))
      .value("device", "cpu|cuda", "estimate this machine's memory (cpu) or a GPU's", one_of({"cpu", "cuda"}))
      .value(
          "device_memory", "SIZE",
          "the GPU's memory (with --device cuda): 24, 24GiB or 24G in GiB, 24GB in 10^9 bytes; when the run does "
          "not fit, the smallest blocks_to_swap (then fp8, block inputs in host memory, blocks recomputed a part at a "
          "time, frames, size) that makes it fit")
      .forward_unknown_options();
  if (!a.parse(argv)) return 0;
  const int64_t ranks = a.integer("nproc", 1), steps = a.integer("time_steps", 0);
  const double device_memory = parse_device_memory(a.str("device_memory"));
  const std::string config = a.str("config"), device = a.str("device", "cpu");
  std::vector<std::string> run_args = a.rest();
  if (!config.empty()) run_args.insert(run_args.begin(), {"--config", config});
  if (config.empty()) throw UsageError("estimate needs --config RUN.yaml (see --help)");
  const std::string job = read_job(config);
  train::MemoryTarget target;
  target.gpu = device == "cuda";
  target.runtime = train::training_runtime_bytes();  // before this process maps anything of the run
  if (target.gpu && steps > 0)
    throw UsageError("--time_steps times steps on this machine's CPU; leave out --device cuda");
  std::string verb;
  train::TrainingMemory e;
  std::vector<train::FitChoice> fit;
  std::vector<std::string> problems;
  if (job == "upsampler") {
    verb = "train-upsampler";
    problems = resolve_and_estimate(
        train::upsampler_option_schema(), run_args, train::resolve_upsampler_setup,
        [&](const train::UpsamplerSetup& s) { e = train::upsampler_training_memory(s, ranks, target); });
  } else if (job == "experts") {
    verb = "train-experts";
    problems = resolve_and_estimate(train::experts_option_schema(), run_args, train::resolve_experts_setup,
                                    [&](const train::ExpertsSetup& s) {
                                      e = train::experts_training_memory(s, ranks, target);
                                      if (target.gpu && device_memory > 0)
                                        fit = train::experts_fit_choices(s, ranks, target, device_memory);
                                    });
  } else {
    throw Error(config + ": estimate knows the jobs upsampler and experts, not '" + job + "'");
  }
  if (!problems.empty()) {
    for (const auto& p : problems) std::fprintf(stderr, "error: %s\n", p.c_str());
    std::cout << json{{"error", problems.front()}, {"problems", problems}}.dump() << std::endl;
    return 1;
  }

  const double training = e.parts.total(), text = e.text_phase.total(), peak = std::max(training, text);
  // A GPU's memory: --device_memory, or unknown (nothing to compare with) on a CPU build.
  const double machine = target.gpu ? device_memory : train::host_memory_bytes();
  std::fprintf(stderr, "%-24s %12s  %s\n", "part", "memory", "how");
  for (const auto& p : e.parts.parts)
    std::fprintf(stderr, "%-24s %12s  %s\n", p.name.c_str(), gib(p.bytes).c_str(), p.note.c_str());
  std::fprintf(stderr, "%-24s %12s\n", "total (training)", gib(training).c_str());
  if (text > 0)
    std::fprintf(stderr, "%-24s %12s  the text encoder alone, before training\n", "total (captions)",
                 gib(text).c_str());
  const bool fits = machine <= 0 || peak <= machine;
  if (!e.host.parts.empty())
    std::fprintf(stderr,
                 "%-24s %12s  what waits in host memory (low_vram's idle expert, swapped blocks, offloaded inputs)\n",
                 "host", gib(e.host.total()).c_str());
  if (machine > 0)
    std::fprintf(stderr, "%s: the run needs about %s of %s's %s\n", fits ? "fits" : "does not fit", gib(peak).c_str(),
                 target.gpu ? "the GPU" : "this machine", gib(machine).c_str());
  else
    std::fprintf(stderr, "the run needs about %s of GPU memory (--device_memory GIB compares it)\n", gib(peak).c_str());
  json out = {{"job", job},
              {"device", device},
              {"estimate", e.parts.to_json()},
              {"total_bytes", peak},
              {"machine_bytes", machine > 0 ? json(machine) : json(nullptr)},
              {"fits", fits},
              {"shape", e.shape}};
  if (!e.host.parts.empty()) out["host"] = e.host.to_json();
  if (fit.size() > 1) {
    // What makes it fit: each way's first fitting choice (or the most it can do).
    json ways = json::array();
    for (size_t i = 1; i < fit.size(); ++i) {
      const auto& f = fit[i];
      std::string what;
      for (const auto& [k, v] : f.changes.items()) what += (what.empty() ? "" : ", ") + k + " " + v.dump();
      std::fprintf(stderr, "%s with %s: device %s, host %s\n", f.fits ? "fits" : "still does not fit", what.c_str(),
                   gib(f.device_bytes).c_str(), gib(f.host_bytes).c_str());
      ways.push_back(
          {{"changes", f.changes}, {"device_bytes", f.device_bytes}, {"host_bytes", f.host_bytes}, {"fits", f.fits}});
    }
    out["to_fit"] = ways;
  }
  if (text > 0) out["text_encoding"] = e.text_phase.to_json();
  if (steps > 0) {
    json timed = time_steps(verb, run_args, steps);
    const double measured = timed["measured_peak_bytes"].get<double>();
    timed["estimate_error"] = measured > 0 ? (peak - measured) / measured : 0.0;
    std::fprintf(stderr, "timed: %.3f s per step, measured peak %s (the estimate is %+.1f %%)\n",
                 timed["seconds_per_step"].get<double>(), gib(measured).c_str(),
                 100 * timed["estimate_error"].get<double>());
    out["timed"] = timed;
  }
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace

WS_VERB("estimate", "memory a training run will need (by formula; --time_steps N also times real steps)",
        &run_estimate);

}  // namespace ws::cli
