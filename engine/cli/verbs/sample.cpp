// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine sample` (docs/design/sampling.md §12.1): an expert pair or one model
// (sample_experts.h) + a prompt, or a prompts file → videos.
// Writes OUT.latents.safetensors, the OUT.json record of every setting and, with a VAE of the
// latents' channel count, OUT.mp4 per prompt; each file under a temporary name, renamed when
// whole. Events: started (job sample), sample_step per step, sample per video, finished; SIGTERM
// or `cancel` stops between steps (exit 130): the video under way writes nothing.

#include <chrono>
#include <cstdio>
#include <random>
#include <tuple>

#include "cli/args.h"
#include "cli/device_option.h"
#include "cli/verb.h"
#include "cli/verbs/sample_experts.h"
#include "train/experts/prompts_file.h"
#include "contract/events.h"
#include "core/error.h"
#include "core/format.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/sha256.h"
#include "io/model_yaml.h"
#include "io/state_dict.h"
#include "models/dit_conditioning.h"
#include "models/wan_dit.h"
#include "models/wan_lora.h"
#include "models/wan_vae.h"
#include "runtime/allocator.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/progress.h"
#include "text/prompts.h"
#include "train/experts/expert_lora.h"
#include "train/experts/sample_render.h"
#include "train/memory_estimate.h"
#include "train/training_device.h"
#include "train/experts/text_embeddings.h"
#include "train/experts/text_encoding.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;

// Stops with the figures, before the sampler allocates anything, when the render would need more
// memory than this host offers (--force goes on anyway): absurd sizes end with a clear error, not
// with the allocator's failure or the kernel's OOM killer.
void refuse_what_cannot_fit(const train::SampleSettings& s, const std::vector<int64_t>& shape,
                            const models::WanConfig& c, const models::WanVae* vae) {
  const int64_t tokens = shape[1] * (shape[2] / c.patch_size[1]) * (shape[3] / c.patch_size[2]);
  const double weights = train::runtime_bytes();  // the experts (and VAE) are loaded by now
  const double dit = train::dit_inference_bytes(c, tokens, c.text_len);
  const double latents = 8.0 * static_cast<double>(shape[0] * shape[1] * shape[2] * shape[3]) * 4;
  double decode = 0;
  if (vae) {
    const auto& vc = vae->config();
    decode = train::vae_call_bytes(vc.wan21() ? vc.dim : vc.dec_dim, s.height, s.width, vc.wan21() ? 1 : 2) +
             2.0 * 3 * static_cast<double>(s.frames * s.height * s.width) * 4;  // the clip, float and bytes
  }
  const double need = weights + std::max(dit + latents, decode + latents), have = train::host_memory_bytes();
  if (have <= 0 || need <= have) return;
  auto gib = [](double b) { return ws::format("{:.1f} GiB", b / (1024.0 * 1024 * 1024)); };
  throw Error(ws::format(
      "{}x{}x{} frames needs about {} ({} loaded, {} per denoising step at {} tokens{}); this machine offers {}: "
      "choose a smaller --size or --frame_num (or --force to try anyway)",
      s.width, s.height, s.frames, gib(need), gib(weights), gib(dit + latents), tokens,
      vae ? ", " + gib(decode) + " to decode" : std::string(), gib(have)));
}

// The preset the experts imply (docs/design/sampling.md §12.1) unless --task names one.
train::SampleSettings resolve_settings(const Args& a, const models::WanConfig& c, bool two) {
  std::string task = a.str("task");
  if (task.empty()) {
    if (two && c.in_dim == c.out_dim) task = "t2v-A14B";
    else if (two && c.model_type == "i2v") task = "i2v-A14B";
    else task = "ti2v-5B";  // one model: TI2V-5B's settings (any single model; flags refine them)
  }
  train::SampleSettings s = train::sample_preset(task);
  if (a.boolean("preview")) train::apply_preview(s);
  if (a.has("config_path")) {  // a VideoX-Fun model YAML: boundary and shift win over the preset
    io::ModelYaml y = io::read_model_yaml(a.str("config_path"));
    json tak = y.section("transformer_additional_kwargs"), sched = y.section("scheduler_kwargs");
    if (tak.contains("boundary") && tak["boundary"].is_number()) s.sampler.boundary = tak["boundary"].get<double>();
    if (sched.contains("shift") && sched["shift"].is_number()) s.sampler.shift = sched["shift"].get<double>();
  }
  if (a.has("size")) std::tie(s.height, s.width) = parse_size(a.str("size"));
  s.frames = a.integer("frame_num", s.frames);
  if (a.has("sample_solver")) s.sampler.solver = sampling::parse_solver(a.str("sample_solver"));
  s.sampler.steps = a.integer("sample_steps", s.sampler.steps);
  s.sampler.shift = a.real("sample_shift", s.sampler.shift);
  if (a.has("sample_guide_scale")) {
    auto g = a.strs("sample_guide_scale");
    if (g.empty() || g.size() > 2) throw UsageError("--sample_guide_scale takes one scale, or two: LOW HIGH");
    s.sampler.guide_low = parse_real(g[0], "sample_guide_scale");
    s.sampler.guide_high = parse_real(g.back(), "sample_guide_scale");
  }
  if (a.has("boundary_ratio")) s.sampler.boundary = a.real("boundary_ratio", 0.875);
  if (!two) s.sampler.boundary.reset();
  if (two && !s.sampler.boundary) s.sampler.boundary = 0.875;
  if (s.sampler.steps < 1) throw UsageError("--sample_steps must be at least 1");
  if (s.sampler.boundary && !(*s.sampler.boundary > 0 && *s.sampler.boundary < 1))
    throw UsageError("--boundary_ratio must lie in (0, 1)");
  s.fps = a.integer("fps", s.fps);
  const int64_t seed =
      a.has("base_seed") || a.has("seed") ? a.integer(a.has("base_seed") ? "base_seed" : "seed", -1) : -1;
  if (seed < -1) throw UsageError("--base_seed must be -1 (random) or a seed >= 0");
  // -1, as in generate.py: a random seed, recorded in the outputs.
  s.seed = seed >= 0 ? static_cast<uint64_t>(seed) : (std::random_device{}() & 0x7fffffff);
  s.task = task;
  return s;
}

// Every prompt text's embedding in the folder, the missing ones encoded in one pass (the text
// encoder is loaded once and freed before the experts compute).
void encode_prompt_texts(const Args& a, const std::vector<std::string>& texts, const models::WanConfig& c) {
  if (texts.empty()) return;
  if (!a.has("text_embeddings_dir"))
    throw UsageError(
        "a prompt text needs --text_embeddings_dir (with --text_encoder_path to encode it), or give an embedding file");
  std::vector<train::CaptionJob> jobs;
  for (const auto& t : texts) {
    const std::string path = fs::join(a.str("text_embeddings_dir"), sha256_hex(t) + ".safetensors");
    if (fs::exists(path) && !a.has("text_encoder_path")) continue;
    if (!a.has("text_encoder_path") || !a.has("tokenizer_path"))
      throw Error("no embedding for \"" + t.substr(0, 60) + "\" (" + path +
                  "): give --text_encoder_path and --tokenizer_path to encode it");
    jobs.push_back({t, path, "\"" + t.substr(0, 40) + "\""});
  }
  if (jobs.empty()) return;
  train::TextEncoderOptions o;
  o.encoder_path = a.str("text_encoder_path");
  o.tokenizer_path = a.str("tokenizer_path");
  o.text_len = c.text_len;
  train::encode_captions(jobs, o, {}, {}, c.text_dim);
}

// A prompt's embedding: its file, or the text's in the embeddings folder (by the SHA-256 of its bytes).
torch::Tensor prompt_context(const Args& a, const std::string& text, const std::string& file,
                             const models::WanConfig& c, json* record) {
  if (!file.empty()) {
    (*record)["file"] = file;
    (*record)["sha256"] = sha256_file(file);
    return train::load_text_embedding(file, c.text_len, c.text_dim);
  }
  (*record)["text"] = text;
  (*record)["sha256"] = sha256_hex(text);
  return train::load_text_embedding(fs::join(a.str("text_embeddings_dir"), sha256_hex(text) + ".safetensors"),
                                    c.text_len, c.text_dim);
}

// The prompts of the run: --prompts_file's, or the one of --prompt / --prompt_embedding / --image.
std::vector<train::SamplePrompt> run_prompts(const Args& a) {
  if (a.has("prompts_file")) {
    if (a.has("prompt") || a.has("prompt_embedding"))
      throw UsageError("give --prompts_file or --prompt / --prompt_embedding, not both");
    return train::read_prompts_file(a.str("prompts_file"));
  }
  if (a.has("prompt") == a.has("prompt_embedding"))
    throw UsageError("give --prompt, --prompt_embedding or --prompts_file (one of them)");
  train::SamplePrompt p;
  p.text = a.str("prompt");
  p.embedding = a.str("prompt_embedding");
  return {p};
}

// One prompt's settings: the run's, with the prompt's own seed, size and frames; seed i of a
// prompts file is the base seed + i unless the prompt gives one.
train::SampleSettings prompt_settings(const train::SampleSettings& base, const train::SamplePrompt& p, size_t i) {
  train::SampleSettings s = base;
  if (p.size_hw) std::tie(s.height, s.width) = *p.size_hw;
  if (p.frames) s.frames = *p.frames;
  s.seed = p.seed ? static_cast<uint64_t>(*p.seed) : base.seed + i;
  return s;
}

// Where a prompt's files go: --save_file itself for one prompt; for a prompts file --save_file
// names a folder (default samples/) holding <name>.mp4, .json and .latents.safetensors.
std::string output_base(const Args& a, const train::SamplePrompt& p, const train::SampleSettings& s, bool many) {
  if (many) return fs::join(a.str("save_file", "samples"), p.name);
  std::string base = a.has("save_file") ? a.str("save_file") : "sample_" + std::to_string(s.seed) + ".mp4";
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".mp4") == 0) base.resize(base.size() - 4);
  return base;
}

// Moves the models for a step of `high` (--offload: only the active expert on the device) and
// sets block swap; the idle expert waits in host memory.
struct Placement {
  torch::Device device = torch::kCPU;
  bool offload = false;
  void activate(sampling::SamplerModels& m, bool high) const {
    models::WanModel& on = high && m.high ? m.high : m.low;
    models::WanModel& off = high ? m.low : m.high;
    if (offload && off && off->device() != torch::Device(torch::kCPU)) off->move_to(torch::kCPU);
    if (on->device() != device) on->move_to(device);
  }
};

int run_sample(const std::vector<std::string>& argv) {
  Args a("sample",
         "sample (--ckpt_dir DIR | --high_noise_model P --low_noise_model P | --model P) "
         "(--prompt TEXT | --prompt_embedding FILE | --prompts_file FILE) [options]",
         "Renders videos with the experts: the seed's noise, the flow-matching sampler (UniPC or DPM++,\n"
         "classifier-free guidance with a scale per expert, the switch at the boundary), then the VAE.\n"
         "Defaults come from the preset the experts imply (t2v-A14B, i2v-A14B, ti2v-5B); flags win.");
  a.value("ckpt_dir", "DIR", "a Wan Studio checkpoint-<N>/, an official model folder, or one model folder");
  a.value("high_noise_model", "P", "the high-noise expert's model folder");
  a.value("low_noise_model", "P", "the low-noise expert's model folder");
  a.value("model", "P", "a single model folder (TI2V-5B, 1.3B)");
  a.value("lora_high", "FILE", "LoRA for the high-noise expert (musubi-tuner/ComfyUI or PEFT keys)");
  a.value("lora_low", "FILE", "LoRA for the low-noise expert (or the single model)");
  a.list("lora_scale", "M", "adapter multipliers: one for both, or HIGH LOW (default 1)", real_range(-100, 100));
  a.value("task", "NAME", "preset: t2v-A14B, i2v-A14B or ti2v-5B (default: from the experts)");
  a.value("config_path", "YAML", "VideoX-Fun model YAML: its boundary and scheduler shift");
  a.value("prompt", "TEXT", "the prompt");
  a.value("prompt_embedding", "FILE", "the prompt as an embedding file (`context` [L, text_dim])");
  a.value("prompts_file", "FILE",
          "several videos in one run: one prompt per line, or a JSON list of prompts or objects (prompt or "
          "prompt_embedding, negative_prompt, seed, size, frame_num, image, name); --save_file then names a folder");
  a.value("negative_prompt", "TEXT", "default: Wan's sample_neg_prompt");
  a.value("negative_prompt_embedding", "FILE", "the negative prompt as an embedding file");
  a.value("text_embeddings_dir", "DIR", "embeddings by the SHA-256 of the text (encode-text's folder)");
  a.value("text_encoder_path", "FILE", "UMT5 weights: encode texts whose embedding is missing");
  a.value("tokenizer_path", "PATH", "the UMT5 tokenizer (with --text_encoder_path)");
  a.value("image", "FILE", "i2v / ti2v: an image (needs --vae_path), or a .safetensors with image_latent");
  a.value("size", "WxH", "video size (width x height)");
  a.value("frame_num", "N", "frames, 4k+1", frames_upto(4001));
  a.value("sample_solver", "unipc|dpm++", "solver", one_of({"unipc", "dpm++"}));
  a.value("sample_steps", "N", "denoising steps", int_range(1, 1000));
  a.value("sample_shift", "S", "noise schedule shift", real_range(0.01, 100));
  a.list("sample_guide_scale", "G", "guidance: one scale, or LOW HIGH (the low- and the high-noise expert's)",
         real_range(0, 100));
  a.value("boundary_ratio", "B", "switch to the low-noise expert below t = 1000·B", real_range(0, 1));
  a.value("base_seed", "S", "noise seed (default: a random one, recorded); prompt i of a file: S + i",
          int_range(-1, 9007199254740991.0));
  a.value("seed", "S", "the same as --base_seed", int_range(-1, 9007199254740991.0));
  a.value("vae_path", "FILE", "the VAE for the MP4 (its latent channels must be the experts')");
  a.value("vae_type", "TYPE", "auto (default), wan2.1 or wan2.2", one_of({"auto", "wan2.1", "wan2.2"}));
  a.value("save_file", "OUT.mp4",
          "output name (default sample_<seed>.mp4); OUT.latents.safetensors and OUT.json beside it; with "
          "--prompts_file a folder (default samples)");
  a.value("fps", "N", "frame rate of the MP4 (default: the preset's)", int_range(1, 240));
  a.value("device", "DEV", "auto (a GPU when there is one), cpu, cuda or cuda:N");
  a.value("dtype", "fp32|bf16", "bf16: the block Linears stored in bf16, matmuls and attention in bf16",
          one_of({"fp32", "bf16"}));
  a.flag("offload", "only the active expert on the device; the idle one and the VAE wait in host memory");
  a.value("blocks_to_swap", "N",
          "the last N blocks of each expert wait in host memory and are copied to the device just before they run",
          int_range(0, 1000));
  a.flag("preview", "the cheap preset: 12 steps, 256x256, 17 frames");
  a.flag("force", "render even when the estimate says the memory will not suffice");
  a.value("threads", "N", "CPU threads (default: all cores)", int_range(1, 1024));
  if (!a.parse(argv)) return 0;
  const std::vector<train::SamplePrompt> prompts = run_prompts(a);
  const bool many = a.has("prompts_file");
  if (a.has("threads")) at::set_num_threads(static_cast<int>(a.integer("threads", 1)));

  // Numbers are checked before any weight is read: NaN, inf or text is a usage error at once.
  for (const char* k : {"sample_shift", "boundary_ratio"}) a.real(k, 0.0);
  for (const char* k : {"sample_guide_scale", "lora_scale"})
    for (const auto& v : a.strs(k)) parse_real(v, k);
  Placement place;
  place.device = parse_device_option(a.str("device", "auto"));
  place.offload = a.boolean("offload");
  const bool bf16 = a.str("dtype", "fp32") == "bf16";

  runtime::install_cancel_handlers();
  runtime::stop_inside_computations();  // a render is one long pass: Cancel ends it within a block
  auto& events = runtime::EventStream::global();
  runtime::Heartbeat heartbeat;
  try {
    Experts ex = load_experts(a);
    const models::WanConfig& cfg = ex.models.low->config();
    const bool two = static_cast<bool>(ex.models.high);
    const train::SampleSettings base = resolve_settings(a, cfg, two);
    std::vector<train::SampleSettings> settings;
    for (size_t i = 0; i < prompts.size(); ++i) {
      settings.push_back(prompt_settings(base, prompts[i], i));
      train::sample_latent_shape(settings.back(), cfg.out_dim);  // size and frames checked before any work
    }
    if (two) {
      int64_t high = 0;
      for (int64_t t : sampling::flow_schedule(base.sampler.solver, base.sampler.steps, base.sampler.shift).timesteps)
        high += sampling::choose_expert(base.sampler, true, t).high;
      if (high == 0 || high == base.sampler.steps)
        events.log("warning",
                   std::string("this schedule gives the ") + (high ? "low" : "high") + "-noise expert no step");
    }
    // The prompts' texts (and the negative prompts') are encoded before the experts compute.
    const std::string default_negative =
        a.str("negative_prompt").empty() ? std::string(text::kWanNegativePrompt) : a.str("negative_prompt");
    std::vector<std::string> texts;
    for (const auto& p : prompts) {
      if (p.embedding.empty()) texts.push_back(p.text);
      if (!p.negative_embedding && (p.negative || !a.has("negative_prompt_embedding")))
        texts.push_back(p.negative && !p.negative->empty() ? *p.negative : default_negative);
    }
    encode_prompt_texts(a, texts, cfg);

    bool any_image = a.has("image");
    for (const auto& p : prompts) any_image = any_image || !p.image.empty();
    std::unique_ptr<models::WanVae> vae;
    if (a.has("vae_path")) {
      json vc = json::object();
      if (a.has("vae_type")) vc["vae_type"] = a.str("vae_type");
      models::WanVaeOptions vo;
      vo.decoder_only = !any_image;  // the encoder serves only i2v/ti2v pictures
      if (place.device.is_cuda()) {
        vo.device = place.device.str();
        vo.bf16 = bf16;
        vo.low_vram = place.offload;  // its weights visit the device per call, after the experts left
      }
      vae = models::WanVae::load(a.str("vae_path"), vc, vo);
      if (vae->z_dim() != cfg.out_dim)
        throw Error(a.str("vae_path") + ": the VAE has " + std::to_string(vae->z_dim()) +
                    " latent channels, the experts " + std::to_string(cfg.out_dim));
    }
    for (auto* m : {&ex.models.high, &ex.models.low}) {
      if (!*m) continue;
      if (bf16) {
        train::store_block_linears(**m, torch::kBFloat16);
        (*m)->set_compute_dtype(torch::kBFloat16);
      }
      if (a.has("blocks_to_swap")) {
        const int64_t n = a.integer("blocks_to_swap", 0);
        if (n > (*m)->config().num_layers)
          throw UsageError("--blocks_to_swap " + std::to_string(n) + ": the experts have " +
                           std::to_string((*m)->config().num_layers) + " blocks");
        (*m)->set_blocks_to_swap(n);
      }
    }
    if (!place.offload)
      for (auto* m : {&ex.models.high, &ex.models.low})
        if (*m) (*m)->move_to(place.device);
    ex.models.activate = [&place, &ex](bool high) { place.activate(ex.models, high); };
    if (!a.boolean("force"))
      for (const auto& s : settings)
        refuse_what_cannot_fit(s, train::sample_latent_shape(s, cfg.out_dim), cfg, vae.get());

    json run = base.to_json();
    run["experts"] = ex.record;
    run["dtype"] = bf16 ? "bf16" : "fp32";
    run["device"] = place.device.str();
    run["offload"] = place.offload;
    run["blocks_to_swap"] = ex.models.low->blocks_to_swap();
    if (many) run["prompts_file"] = a.str("prompts_file");
    contract::StartedEvent st;
    st.job = "sample";
    st.config = run;
    events.emit(st);
    int64_t steps_done = 0;
    for (size_t i = 0; i < prompts.size(); ++i) {
      const train::SamplePrompt& p = prompts[i];
      const train::SampleSettings& s = settings[i];
      const auto shape = train::sample_latent_shape(s, cfg.out_dim);
      json record = s.to_json();
      record["experts"] = ex.record;
      record["dtype"] = run["dtype"];
      train::SampleConditioning cond;
      json prompt = json::object(), negative = json::object();
      cond.context = prompt_context(a, p.text, p.embedding, cfg, &prompt);
      // An empty negative prompt means Wan's default, as in the reference pipelines.
      const std::string neg_file = p.negative_embedding.value_or(p.negative ? "" : a.str("negative_prompt_embedding"));
      cond.context_null = prompt_context(a, p.negative && !p.negative->empty() ? *p.negative : default_negative,
                                         neg_file, cfg, &negative);
      record["prompt"] = prompt;
      record["negative_prompt"] = negative;
      const std::string image = p.image.empty() ? a.str("image") : p.image;
      if (cfg.model_type == "i2v" || (cfg.model_type == "ti2v" && !image.empty())) {
        if (image.empty()) throw UsageError("i2v experts need --image (or an image per prompt)");
        cond.image_latent = train::image_condition_latent(image, s, cfg.model_type, vae.get());
        auto want = shape;
        if (cfg.model_type == "ti2v") want[1] = 1;  // the image alone
        if (cond.image_latent.sizes().vec() != want)
          throw Error(image + ": the image latent is " + io::shape_str(cond.image_latent.sizes().vec()) +
                      ", the video needs " + io::shape_str(want));
        record["image"] = image;
      }
      const std::string out = output_base(a, p, s, many);
      if (many) fs::make_dirs(a.str("save_file", "samples"));
      ws::log::info("sample {}/{}: {} steps of {}, {}x{}x{}, seed {}", i + 1, prompts.size(), s.sampler.steps,
                    sampling::solver_name(s.sampler.solver), s.width, s.height, s.frames, s.seed);
      runtime::ProgressBar bar("sample", static_cast<size_t>(s.sampler.steps));
      const auto t0 = std::chrono::steady_clock::now();
      const auto index = static_cast<int64_t>(i);
      auto on_step = [&](const sampling::SamplerStep& step) {
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double eta =
            secs / static_cast<double>(step.index + 1) * static_cast<double>(s.sampler.steps - step.index - 1);
        events.emit(contract::SampleStepEvent{index, step.index + 1, s.sampler.steps, step.expert, step.timestep, eta});
        bar.update(static_cast<size_t>(step.index + 1));
      };
      // Every step asks for the same sizes again: freed blocks stay for the next (as in training);
      // the decode that follows is one call, so its transients go back to the system.
      runtime::keep_large_blocks_for_reuse();
      const models::BlockSwapStats swap0 = ex.models.low->block_swap_stats();
      torch::Tensor z =
          train::render_latents(ex.models, s, cfg.out_dim, cond, on_step, [] { return runtime::cancel_requested(); });
      runtime::return_large_blocks_to_system();
      runtime::release_free_heap();
      if (!z.defined()) {
        events.finished("cancelled", steps_done);
        return 130;
      }
      z = z.to(torch::kCPU, torch::kFloat);
      if (place.offload)  // the experts leave the device before the VAE decodes
        for (auto* m : {&ex.models.high, &ex.models.low})
          if (*m) (*m)->move_to(torch::kCPU);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::string why;
      // The latent file records what decides the latents; the sidecar adds the VAE, the time and the swap.
      json sidecar = record;
      sidecar["seconds"] = seconds;
      sidecar["device"] = run["device"];
      sidecar["offload"] = place.offload;
      if (ex.models.low->blocks_to_swap() > 0) {
        const models::BlockSwapStats swap1 = ex.models.low->block_swap_stats();
        sidecar["blocks_to_swap"] = ex.models.low->blocks_to_swap();
        sidecar["swap_copies_low"] = swap1.copies - swap0.copies;
        sidecar["swap_wait_s_low"] = swap1.wait_s - swap0.wait_s;
      }
      if (vae) sidecar["vae_path"] = a.str("vae_path");
      train::SampleFiles f = train::write_sample(out, z, record, sidecar, vae.get(), s.fps, &why);
      if (!why.empty()) events.log("info", why);
      events.emit(contract::SampleEvent{index, f.latents, f.video, f.sidecar, seconds});
      steps_done += s.sampler.steps;
    }
    events.finished("completed", steps_done);
    return 0;
  } catch (const Interrupted&) {
    events.finished("cancelled", 0);  // nothing of the video under way was written: files appear only complete
    return 130;
  } catch (const std::exception& e) {
    events.error(e.what());
    events.finished("failed", 0);
    throw;
  }
}

}  // namespace

WS_VERB("sample", "render videos with expert checkpoints (flow-matching sampler, CFG, the VAE)", &run_sample);

}  // namespace ws::cli
