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
#include "train/memory_estimate.h"
#include "train/training_verb.h"
#include "train/upsampler/upsampler_options.h"
#include "train/upsampler/upsampler_setup.h"

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

// Parameters in a weights file without reading its data: a safetensors header, else the file's
// size over the bytes per value the name says (`bf16`, else fp32).
double weights_parameters(const std::string& path) {
  if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) {
    double n = 0;
    for (const auto& [k, t] : io::load_weights(path)) n += static_cast<double>(t.numel());
    return n;
  }
  std::error_code ec;
  const double size = static_cast<double>(stdfs::file_size(path, ec));
  return path.find("bf16") != std::string::npos ? size / 2 : size / 4;
}

// The VAE a run loads: its parameters (fp32 on the CPU, bf16 with mixed precision on a GPU)
// and one encode's working set at the run's pixel size.
void add_vae(train::MemoryEstimate& m, const std::string& file, const json& vae_config, int64_t size, bool bf16) {
  const models::WanVaeConfig c = models::WanVae::resolve_config(file, vae_config);
  const int elem = bf16 ? 2 : 4;
  m.add("vae weights", static_cast<double>(c.parameter_count()) * elem,
        std::string(c.wan21() ? "Wan2.1" : "Wan2.2") + " VAE, frozen");
  m.add("vae activations", train::vae_call_bytes(c.dim, size, size, c.wan21() ? 1 : 2) * elem / 4,
        "one encode call's widest stage (4 frames at a time)");
}

// One batch of decoded clips, fp32.
double clip_bytes(const train::DataOptions& d) {
  return static_cast<double>(d.batch_size * d.n_frames * d.sample_size * d.sample_size * 3) * 4;
}

// Where the estimate is for: this machine's memory, or a GPU's (`--device cuda`, from any build).
struct Target {
  bool gpu = false;
  double runtime = 0;  // measured here on the CPU; the CUDA context's usual size on a GPU
};
constexpr double kCudaContextBytes = 0.6 * 1024 * 1024 * 1024;  // context, cuBLAS/cuDNN workspaces

struct Estimate {
  train::MemoryEstimate parts;
  train::MemoryEstimate host;        // on a GPU with low_vram: what waits in host memory meanwhile
  train::MemoryEstimate text_phase;  // before training: the text encoder (experts), empty otherwise
  json shape = json::object();
};

void add_runtime(train::MemoryEstimate& m, const Target& target) {
  if (target.gpu)
    m.add("runtime", kCudaContextBytes, "the CUDA context and library workspaces (a usual size, not measured here)");
  else
    m.add("runtime", target.runtime, "LibTorch, its threads and kernels before any model (measured in this process)");
}

Estimate estimate_upsampler(const train::UpsamplerSetup& s, int64_t ranks, const Target& target) {
  Estimate e;
  const auto& c = s.model;
  const double P = static_cast<double>(c.parameter_count());
  auto& m = e.parts;
  add_runtime(m, target);
  m.add("weights", P * 4, "latent upsampler, fp32");
  m.add("gradients", P * 4, "fp32");
  m.add("optimizer", P * 8, "AdamW moments");
  if (s.use_ema) m.add("ema", P * 4, "EMA shadow weights");
  const bool bf16 = s.run.bf16 && target.gpu;  // mixed precision is fp32 on the CPU
  add_vae(m, s.vae_file, s.vae_config, s.data.sample_size, bf16);
  // Latents of the largest bucket: the low-res side is 1/scale of the high-res one.
  const int64_t t = (s.data.n_frames - 1) / 4 + 1, hr = s.data.sample_size / 16;
  auto [num, den] = c.use_rational_resampler ? c.ratio() : std::make_pair<int64_t, int64_t>(2, 1);
  const int64_t lr = std::max<int64_t>(1, hr * den / num);
  m.add("activations",
        train::upsampler_activation_bytes(c, s.data.batch_size, t, lr, lr, s.optimizer.gradient_checkpointing),
        s.optimizer.gradient_checkpointing ? "one micro-batch, ResBlocks recomputed in backward" : "one micro-batch");
  const double clip = clip_bytes(s.data);
  if (!target.gpu) {
    const double conv = train::upsampler_conv_backward_bytes(c, s.data.batch_size, t, lr, false, s.winograd_convs);
    const double copy = train::upsampler_conv_backward_bytes(c, s.data.batch_size, t, lr, false, false);
    m.add("conv backward", conv,
          !models::packed_conv_supported() ? "weight-sized copies in each 3-D conv's backward, kept by the allocator"
          : conv > copy ? "backward-data's copy of one packed kernel at a time, and the Winograd convs' scratch"
                        : "backward-data's copy of one packed kernel at a time");
    const int64_t workers = std::max<int64_t>(1, s.data.workers);
    m.add("data", clip * static_cast<double>(2 * workers + 1),
          "decoded batches in flight (2 per decode worker, and the current one)");
  }
  if (s.overlap_vae_encode)
    m.add("batch ahead", clip, "the next batch, taken and encoded while this one trains (overlap_vae_encode)");
  e.shape = {{"latent_low", {t, lr, lr}}, {"latent_high", {t, hr, hr}}, {"parameters", P}, {"ranks", ranks}};
  return e;
}

Estimate estimate_experts(const train::ExpertsSetup& s, int64_t ranks, const Target& target) {
  Estimate e;
  auto& m = e.parts;
  add_runtime(m, target);
  const int64_t zero = s.zero2 ? ranks : 1;
  // low_vram on a GPU: only the routed expert is on the device; the other waits in host memory.
  const bool split = target.gpu && s.run.low_vram;
  for (const auto* ex : {&s.high, &s.low}) {
    const bool high = ex == &s.high;
    train::ExpertStateOptions o;
    o.lora_rank = s.lora.on ? (high ? s.lora.high.rank : s.lora.low.rank) : 0;
    o.fp8 = s.fp8;
    o.bf16_weights = s.bf16_weights;
    o.zero_ranks = zero;
    train::add_expert_state(split && !high ? e.host : m, high ? "high: " : "low: ", ex->config, o);
  }
  const auto& c = s.high.config;
  const int64_t factor = s.vae_spatial_factor, t = (s.data.n_frames - 1) / 4 + 1;
  const int64_t side = s.data.sample_size / factor;
  const int64_t tokens = t * (side / 2) * (side / 2);
  const bool bf16 = s.run.bf16 && target.gpu;  // mixed precision is fp32 on the CPU
  m.add("activations",
        train::dit_activation_bytes(c, tokens, c.text_len, s.optimizer.gradient_checkpointing, bf16 ? 2 : 4),
        std::to_string(tokens) + " tokens per sample" +
            (s.optimizer.gradient_checkpointing ? ", blocks recomputed in backward" : ""));
  if (!s.all_latent_files && !s.vae_file.empty()) {
    add_vae(m, s.vae_file, s.vae_config, s.data.sample_size, bf16);
    if (s.overlap_vae_encode)
      m.add("batch ahead", clip_bytes(s.data),
            "the next micro-batch, taken and encoded while this one trains (overlap_vae_encode)");
  }
  if (s.text_encoder) {
    auto& p = e.text_phase;
    add_runtime(p, target);
    const double n = weights_parameters(s.text_encoder->encoder_path);
    p.add("text encoder", n * (s.text_encoder->bf16 ? 2 : 4), "UMT5, freed before the experts load");
  }
  e.shape = {{"tokens", tokens},
             {"text_tokens", c.text_len},
             {"parameters_per_expert", c.parameter_count()},
             {"ranks", ranks},
             {"zero_stage", s.zero2 ? 2 : 0}};
  return e;
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
      .value("device_memory", "GIB", "the GPU's memory in GiB (with --device cuda)", real_range(1, 65536))
      .forward_unknown_options();
  if (!a.parse(argv)) return 0;
  const int64_t ranks = a.integer("nproc", 1), steps = a.integer("time_steps", 0);
  const double device_memory_gib = a.real("device_memory", 0);
  const std::string config = a.str("config"), device = a.str("device", "cpu");
  std::vector<std::string> run_args = a.rest();
  if (!config.empty()) run_args.insert(run_args.begin(), {"--config", config});
  if (config.empty()) throw UsageError("estimate needs --config RUN.yaml (see --help)");
  const std::string job = read_job(config);
  Target target;
  target.gpu = device == "cuda";
  target.runtime = train::training_runtime_bytes();  // before this process maps anything of the run
  if (target.gpu && steps > 0)
    throw UsageError("--time_steps times steps on this machine's CPU; leave out --device cuda");
  std::string verb;
  Estimate e;
  std::vector<std::string> problems;
  if (job == "upsampler") {
    verb = "train-upsampler";
    problems = resolve_and_estimate(train::upsampler_option_schema(), run_args, train::resolve_upsampler_setup,
                                    [&](const train::UpsamplerSetup& s) { e = estimate_upsampler(s, ranks, target); });
  } else if (job == "experts") {
    verb = "train-experts";
    problems = resolve_and_estimate(train::experts_option_schema(), run_args, train::resolve_experts_setup,
                                    [&](const train::ExpertsSetup& s) { e = estimate_experts(s, ranks, target); });
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
  const double machine = target.gpu ? device_memory_gib * 1024 * 1024 * 1024 : train::host_memory_bytes();
  std::fprintf(stderr, "%-24s %12s  %s\n", "part", "memory", "how");
  for (const auto& p : e.parts.parts)
    std::fprintf(stderr, "%-24s %12s  %s\n", p.name.c_str(), gib(p.bytes).c_str(), p.note.c_str());
  std::fprintf(stderr, "%-24s %12s\n", "total (training)", gib(training).c_str());
  if (text > 0)
    std::fprintf(stderr, "%-24s %12s  the text encoder alone, before training\n", "total (captions)",
                 gib(text).c_str());
  const bool fits = machine <= 0 || peak <= machine;
  if (!e.host.parts.empty())
    std::fprintf(stderr, "%-24s %12s  low_vram: the idle expert waits in host memory\n", "host",
                 gib(e.host.total()).c_str());
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
