// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine sample` (docs/design/sampling.md §12.1): an expert pair (a Wan Studio
// checkpoint, a LoRA run's checkpoint on its base, an official model folder, or two model folders,
// each with an optional LoRA) or one model + a prompt → a video.
// Writes OUT.latents.safetensors, the OUT.json record of every setting and, with a VAE of the
// latents' channel count, OUT.mp4; each file under a temporary name, renamed when whole.
// Events: started (job sample), sample_step per step, sample, finished; SIGTERM or `cancel`
// stops between steps (exit 130) and writes nothing.

#include <chrono>
#include <cstdio>
#include <random>
#include <tuple>

#include "cli/args.h"
#include "cli/verb.h"
#include "contract/events.h"
#include "core/error.h"
#include "core/format.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/log.h"
#include "core/sha256.h"
#include "data/clip_tensor.h"
#include "io/model_yaml.h"
#include "io/safetensors.h"
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
#include "train/experts/sample_render.h"
#include "train/memory_estimate.h"
#include "train/experts/text_embeddings.h"
#include "train/experts/text_encoding.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;

struct Experts {
  sampling::SamplerModels models;
  json record;  // where they came from
};

// The weights' identity for the record: a Wan Studio checkpoint by path and step, small files
// by their SHA-256, large ones (released experts are tens of GB) by path and size.
json weights_identity(const std::string& path) {
  json j{{"path", path}};
  const std::string file = fs::is_dir(path) ? fs::join(path, "diffusion_pytorch_model.safetensors") : path;
  if (fs::exists(file) && fs::file_size(file) < (uint64_t{2} << 30)) j["sha256"] = sha256_file(file);
  return j;
}

// The base of a LoRA checkpoint's expert: its own folder (fresh experts), else the path its
// state.json names as the source.
std::string lora_checkpoint_base(const std::string& ckpt, bool high) {
  const std::string own = fs::join(ckpt, high ? "high_noise_transformer" : "low_noise_transformer");
  if (fs::is_dir(own)) return own;
  const std::string state = fs::join(ckpt, "trainer_state/state.json");
  if (fs::exists(state)) {
    const json j = json::parse(fs::read_file(state), nullptr, false);
    const char* tag = high ? "high" : "low";
    if (j.is_object() && j.contains("sources") && j["sources"].contains(tag) && j["sources"][tag].is_string() &&
        j["sources"][tag].get<std::string>() != "fresh")
      return j["sources"][tag].get<std::string>();
  }
  throw Error(ckpt + ": a LoRA checkpoint that names no base for the " + (high ? "high" : "low") +
              "-noise expert: give --high_noise_model and --low_noise_model");
}

Experts load_experts(const Args& a) {
  Experts e;
  std::string high, low, single, lora_high = a.str("lora_high"), lora_low = a.str("lora_low");
  if (a.has("ckpt_dir")) {
    const std::string d = a.str("ckpt_dir");
    if (!fs::is_dir(d)) throw Error(d + ": not a folder");
    if (fs::exists(fs::join(d, "high_noise_lora.safetensors")) &&
        fs::exists(fs::join(d, "low_noise_lora.safetensors"))) {
      // A LoRA run's checkpoint: its adapters on their bases (flags may name other bases).
      high = a.has("high_noise_model") ? a.str("high_noise_model") : lora_checkpoint_base(d, true);
      low = a.has("low_noise_model") ? a.str("low_noise_model") : lora_checkpoint_base(d, false);
      if (lora_high.empty()) lora_high = fs::join(d, "high_noise_lora.safetensors");
      if (lora_low.empty()) lora_low = fs::join(d, "low_noise_lora.safetensors");
    }
    // A Wan Studio checkpoint, then the official layout, then one model.
    for (auto [h, l] : {std::pair<const char*, const char*>{"high_noise_transformer", "low_noise_transformer"},
                        {"high_noise_model", "low_noise_model"}}) {
      if (!high.empty()) break;
      if (fs::is_dir(fs::join(d, h)) && fs::is_dir(fs::join(d, l))) {
        high = fs::join(d, h);
        low = fs::join(d, l);
      }
    }
    if (high.empty()) {
      if (!fs::exists(fs::join(d, "config.json")))
        throw Error(
            d +
            ": neither an expert pair (high_noise_transformer/ + low_noise_transformer/, or high_noise_model/ + "
            "low_noise_model/) nor a model folder (config.json)");
      single = d;
    }
  } else if (a.has("high_noise_model") || a.has("low_noise_model")) {
    if (!a.has("high_noise_model") || !a.has("low_noise_model"))
      throw UsageError("give both --high_noise_model and --low_noise_model");
    high = a.str("high_noise_model");
    low = a.str("low_noise_model");
  } else if (a.has("model")) {
    single = a.str("model");
  } else {
    throw UsageError("no experts: --ckpt_dir, --high_noise_model with --low_noise_model, or --model");
  }
  // --lora_scale HIGH [LOW]: one value scales both adapters.
  double scale_high = 1.0, scale_low = 1.0;
  if (a.has("lora_scale")) {
    const auto v = a.strs("lora_scale");
    if (v.empty() || v.size() > 2) throw UsageError("--lora_scale takes one multiplier, or two: HIGH LOW");
    scale_high = parse_real(v[0], "lora_scale");
    scale_low = parse_real(v.back(), "lora_scale");
  }
  if (!single.empty()) {
    if (!lora_high.empty())
      throw UsageError("one model: give its adapter as --lora_low (the model is the low-noise slot)");
    e.models.low = models::load_wan_model(single);
    e.record = {{"model", weights_identity(single)}};
  } else {
    e.models.high = models::load_wan_model(high);
    e.models.low = models::load_wan_model(low);
    e.record = {{"high_noise_model", weights_identity(high)}, {"low_noise_model", weights_identity(low)}};
    const auto &h = e.models.high->config(), &l = e.models.low->config();
    if (h.in_dim != l.in_dim || h.out_dim != l.out_dim || h.text_dim != l.text_dim || h.model_type != l.model_type)
      throw Error("the high and low experts differ in model_type, in_dim, out_dim or text_dim");
  }
  for (auto [file, model, scale, key] : {std::make_tuple(lora_high, &e.models.high, scale_high, "lora_high"),
                                         std::make_tuple(lora_low, &e.models.low, scale_low, "lora_low")}) {
    if (file.empty()) continue;
    const models::WanLora lora = models::WanLora::load(file);
    try {
      lora.attach(**model, scale);
    } catch (const Error& err) {
      throw Error(file + ": " + err.what());
    }
    json id = weights_identity(file);
    id["scale"] = scale;
    id["rank"] = lora.rank();
    e.record[key] = id;
  }
  for (auto* m : {&e.models.high, &e.models.low})
    if (*m) (*m)->eval();
  return e;
}

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

// A prompt's embedding: its file, or the text looked up in (and, with an encoder, added to) the
// embeddings folder by the SHA-256 of its bytes.
torch::Tensor prompt_context(const Args& a, const std::string& text, const std::string& file,
                             const models::WanConfig& c, const std::string& label, json* record) {
  if (!file.empty()) {
    (*record)["file"] = file;
    (*record)["sha256"] = sha256_file(file);
    return train::load_text_embedding(file, c.text_len, c.text_dim);
  }
  if (!a.has("text_embeddings_dir"))
    throw UsageError(
        "a prompt text needs --text_embeddings_dir (with --text_encoder_path to encode it), or give an embedding file");
  const std::string path = fs::join(a.str("text_embeddings_dir"), sha256_hex(text) + ".safetensors");
  (*record)["text"] = text;
  (*record)["sha256"] = sha256_hex(text);
  if (!fs::exists(path) || a.has("text_encoder_path")) {
    if (!a.has("text_encoder_path") || !a.has("tokenizer_path"))
      throw Error("no embedding for \"" + text.substr(0, 60) + "\" (" + path +
                  "): give --text_encoder_path and --tokenizer_path to encode it");
    train::TextEncoderOptions o;
    o.encoder_path = a.str("text_encoder_path");
    o.tokenizer_path = a.str("tokenizer_path");
    o.text_len = c.text_len;
    train::encode_captions({{text, path, label}}, o, {}, {}, c.text_dim);
  }
  return train::load_text_embedding(path, c.text_len, c.text_dim);
}

// i2v: the image followed by zero frames, encoded as one clip; ti2v: the image alone. An
// `image_latent` tensor in a .safetensors is taken as it is.
torch::Tensor image_latent(const Args& a, const train::SampleSettings& s, const models::WanConfig& c,
                           models::WanVae* vae) {
  const std::string path = a.str("image");
  if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) {
    auto sd = io::read_safetensors(path);
    if (!sd.count("image_latent")) throw Error(path + ": no tensor 'image_latent'");
    return sd.at("image_latent").to(torch::kFloat);
  }
  if (!vae) throw UsageError("--image with a picture needs --vae_path (or give a .safetensors with image_latent)");
  // Resized to cover the video's size and centre-cropped (the reference resizes to the exact size).
  torch::Tensor img = data::read_clip(path, {0}, s.height, s.width);  // [3, 1, H, W]
  torch::Tensor clip =
      c.model_type == "i2v" ? torch::cat({img, torch::zeros({3, s.frames - 1, s.height, s.width})}, 1) : img;
  return vae->encode(clip.unsqueeze(0)).squeeze(0);
}

int run_sample(const std::vector<std::string>& argv) {
  Args a("sample",
         "sample (--ckpt_dir DIR | --high_noise_model P --low_noise_model P | --model P) "
         "(--prompt TEXT | --prompt_embedding FILE) [options]",
         "Renders one video with the experts: the seed's noise, the flow-matching sampler (UniPC or DPM++,\n"
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
  a.value("base_seed", "S", "noise seed (default: a random one, recorded)", int_range(-1, 9007199254740991.0));
  a.value("seed", "S", "the same as --base_seed", int_range(-1, 9007199254740991.0));
  a.value("vae_path", "FILE", "the VAE for the MP4 (its latent channels must be the experts')");
  a.value("vae_type", "TYPE", "auto (default), wan2.1 or wan2.2", one_of({"auto", "wan2.1", "wan2.2"}));
  a.value("save_file", "OUT.mp4",
          "output name (default sample_<seed>.mp4); OUT.latents.safetensors and OUT.json beside it");
  a.value("fps", "N", "frame rate of the MP4 (default: the preset's)", int_range(1, 240));
  a.flag("preview", "the cheap preset: 12 steps, 256x256, 17 frames");
  a.flag("force", "render even when the estimate says the memory will not suffice");
  a.value("threads", "N", "CPU threads (default: all cores)", int_range(1, 1024));
  if (!a.parse(argv)) return 0;
  if (a.has("prompt") == a.has("prompt_embedding"))
    throw UsageError("give --prompt or --prompt_embedding (one of them)");
  if (a.has("threads")) at::set_num_threads(static_cast<int>(a.integer("threads", 1)));

  // Numbers are checked before any weight is read: NaN, inf or text is a usage error at once.
  for (const char* k : {"sample_shift", "boundary_ratio"}) a.real(k, 0.0);
  for (const char* k : {"sample_guide_scale", "lora_scale"})
    for (const auto& v : a.strs(k)) parse_real(v, k);

  runtime::install_cancel_handlers();
  runtime::stop_inside_computations();  // a render is one long pass: Cancel ends it within a block
  auto& events = runtime::EventStream::global();
  runtime::Heartbeat heartbeat;
  try {
    Experts ex = load_experts(a);
    const models::WanConfig& cfg = ex.models.low->config();
    const bool two = static_cast<bool>(ex.models.high);
    train::SampleSettings s = resolve_settings(a, cfg, two);
    const auto shape = train::sample_latent_shape(s, cfg.out_dim);  // size and frames checked before any work
    if (two) {
      int64_t high = 0;
      for (int64_t t : sampling::flow_schedule(s.sampler.solver, s.sampler.steps, s.sampler.shift).timesteps)
        high += sampling::choose_expert(s.sampler, true, t).high;
      if (high == 0 || high == s.sampler.steps)
        events.log("warning",
                   std::string("this schedule gives the ") + (high ? "low" : "high") + "-noise expert no step");
    }
    std::unique_ptr<models::WanVae> vae;
    if (a.has("vae_path")) {
      json vc = json::object();
      if (a.has("vae_type")) vc["vae_type"] = a.str("vae_type");
      models::WanVaeOptions vo;
      vo.decoder_only = !a.has("image");  // the encoder serves only an i2v/ti2v picture
      vae = models::WanVae::load(a.str("vae_path"), vc, vo);
      if (vae->z_dim() != cfg.out_dim)
        throw Error(a.str("vae_path") + ": the VAE has " + std::to_string(vae->z_dim()) +
                    " latent channels, the experts " + std::to_string(cfg.out_dim));
    }
    if (!a.boolean("force")) refuse_what_cannot_fit(s, shape, cfg, vae.get());
    json record = s.to_json();
    record["experts"] = ex.record;
    train::SampleConditioning cond;
    json prompt = json::object(), negative = json::object();
    cond.context = prompt_context(a, a.str("prompt"), a.str("prompt_embedding"), cfg, "the prompt", &prompt);
    // An empty negative prompt means Wan's default, as in the reference pipelines.
    const std::string neg_text =
        a.str("negative_prompt").empty() ? std::string(text::kWanNegativePrompt) : a.str("negative_prompt");
    cond.context_null =
        prompt_context(a, neg_text, a.str("negative_prompt_embedding"), cfg, "the negative prompt", &negative);
    record["prompt"] = prompt;
    record["negative_prompt"] = negative;
    if (cfg.model_type == "i2v" || (cfg.model_type == "ti2v" && a.has("image"))) {
      if (!a.has("image")) throw UsageError("i2v experts need --image");
      cond.image_latent = image_latent(a, s, cfg, vae.get());
      auto want = shape;
      if (cfg.model_type == "ti2v") want[1] = 1;  // the image alone
      if (cond.image_latent.sizes().vec() != want)
        throw Error(a.str("image") + ": the image latent is " + io::shape_str(cond.image_latent.sizes().vec()) +
                    ", the video needs " + io::shape_str(want));
      record["image"] = a.str("image");
    }
    std::string base = a.has("save_file") ? a.str("save_file") : "sample_" + std::to_string(s.seed) + ".mp4";
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".mp4") == 0) base.resize(base.size() - 4);

    contract::StartedEvent st;
    st.job = "sample";
    st.config = record;
    events.emit(st);
    ws::log::info("sample: {} steps of {}, {}x{}x{}, seed {}", s.sampler.steps, sampling::solver_name(s.sampler.solver),
                  s.width, s.height, s.frames, s.seed);
    runtime::ProgressBar bar("sample", static_cast<size_t>(s.sampler.steps));
    const auto t0 = std::chrono::steady_clock::now();
    auto on_step = [&](const sampling::SamplerStep& step) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double eta =
          secs / static_cast<double>(step.index + 1) * static_cast<double>(s.sampler.steps - step.index - 1);
      events.emit(contract::SampleStepEvent{0, step.index + 1, s.sampler.steps, step.expert, step.timestep, eta});
      bar.update(static_cast<size_t>(step.index + 1));
    };
    // Every step asks for the same sizes again: freed blocks stay for the next (as in training);
    // the decode that follows is one call, so its transients go back to the system.
    runtime::keep_large_blocks_for_reuse();
    torch::Tensor z =
        train::render_latents(ex.models, s, cfg.out_dim, cond, on_step, [] { return runtime::cancel_requested(); });
    runtime::return_large_blocks_to_system();
    runtime::release_free_heap();
    if (!z.defined()) {
      events.finished("cancelled", 0);
      return 130;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string why;
    // The latent file records what decides the latents; the sidecar adds the VAE and the time.
    json sidecar = record;
    sidecar["seconds"] = seconds;
    if (vae) sidecar["vae_path"] = a.str("vae_path");
    train::SampleFiles f = train::write_sample(base, z, record, sidecar, vae.get(), s.fps, &why);
    if (!why.empty()) events.log("info", why);
    events.emit(contract::SampleEvent{0, f.latents, f.video, f.sidecar, seconds});
    events.finished("completed", s.sampler.steps);
    return 0;
  } catch (const Interrupted&) {
    events.finished("cancelled", 0);  // nothing was written: the files appear only complete
    return 130;
  } catch (const std::exception& e) {
    events.error(e.what());
    events.finished("failed", 0);
    throw;
  }
}

}  // namespace

WS_VERB("sample", "render a video with expert checkpoints (flow-matching sampler, CFG, the VAE)", &run_sample);

}  // namespace ws::cli
