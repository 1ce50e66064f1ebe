// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_validation.h"

#include <chrono>
#include <tuple>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "text/prompts.h"
#include "train/experts/text_embeddings.h"

namespace ws::train {

std::vector<SamplePrompt> ExpertsValidationOptions::all() const {
  std::vector<SamplePrompt> out;
  for (const auto& t : prompts) {
    out.emplace_back();
    out.back().text = t;
  }
  for (const auto& f : prompt_files) {
    out.emplace_back();
    out.back().embedding = f;
  }
  out.insert(out.end(), from_file.begin(), from_file.end());
  return out;
}

std::vector<std::pair<std::string, std::string>> ExpertsValidationOptions::text_files(const std::string& dir) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& p : all())
    if (p.embedding.empty()) out.emplace_back(p.text, fs::join(dir, sha256_hex(p.text) + ".safetensors"));
  const std::string neg = negative_prompt.empty() ? std::string(text::kWanNegativePrompt) : negative_prompt;
  out.emplace_back(neg, fs::join(dir, sha256_hex(neg) + ".safetensors"));
  return out;
}

void encode_validation_prompts(const ExpertsValidationOptions& o, const std::string& text_dir,
                               const TextEncoderOptions& encoder, int64_t text_dim) {
  std::vector<CaptionJob> jobs;
  for (const auto& [text, file] : o.text_files(text_dir)) jobs.push_back({text, file, "a validation prompt"});
  encode_captions(
      jobs, encoder, {}, [] { return runtime::cancel_requested(); }, text_dim);
}

ExpertsValidation::ExpertsValidation(ExpertsValidationOptions o, std::string text_dir, int64_t text_len,
                                     int64_t text_dim)
    : o_(std::move(o)), prompts_(o_.all()) {
  for (const auto& p : prompts_) {
    const std::string file =
        p.embedding.empty() ? fs::join(text_dir, sha256_hex(p.text) + ".safetensors") : p.embedding;
    contexts_.push_back(load_text_embedding(file, text_len, text_dim));
    labels_.push_back(p.embedding.empty() ? p.text : p.embedding);
  }
  negative_ = load_text_embedding(o_.text_files(text_dir).back().second, text_len, text_dim);
}

void ExpertsValidation::render(int64_t step, models::WanModel high, models::WanModel low, models::WanVae* vae,
                               const std::string& run_dir, const std::function<void(bool)>& activate) {
  if (step == last_step_) return;
  last_step_ = step;
  auto& events = runtime::EventStream::global();
  // With low_vram the sampler brings each step's expert onto the device (the other waits in CPU memory).
  sampling::SamplerModels m{high, low, activate};
  const int64_t c = low->config().out_dim;
  images_.resize(contexts_.size());
  for (size_t i = 0; i < contexts_.size(); ++i) {
    try {
      // A prompts file's entry may bring its own seed, size and frames.
      const SamplePrompt& p = prompts_[i];
      SampleSettings s = o_.settings;
      s.seed = p.seed ? static_cast<uint64_t>(*p.seed) : o_.seed + i;
      if (p.size_hw) std::tie(s.height, s.width) = *p.size_hw;
      if (p.frames) s.frames = *p.frames;
      SampleConditioning cond{contexts_[i], negative_, torch::Tensor()};
      const std::string image = i < o_.images.size() ? o_.images[i] : std::string();
      if (!image.empty()) {
        if (!images_[i].defined()) {
          torch::NoGradGuard ng;
          images_[i] = image_condition_latent(image, s, o_.model_type, vae);
        }
        cond.image_latent = images_[i];
      }
      const auto t0 = std::chrono::steady_clock::now();
      torch::Tensor z = render_latents(m, s, c, cond);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      nlohmann::json record = s.to_json();
      record["prompt"] = labels_[i];
      if (!image.empty()) record["image"] = image;
      record["step"] = step;
      nlohmann::json sidecar = record;
      sidecar["seconds"] = secs;
      const std::string base =
          fs::join(fs::join(run_dir, "sample"), "step" + std::to_string(step) + "_val" + std::to_string(i));
      fs::make_dirs(fs::join(run_dir, "sample"));
      std::string why;
      SampleFiles f = write_sample(base, z, record, sidecar, vae, s.fps, &why);
      auto rel = [&](const std::string& p) { return p.empty() ? p : p.substr(run_dir.size() + 1); };
      nlohmann::json ev{{"step", step},         {"index", static_cast<int64_t>(i)}, {"latents", rel(f.latents)},
                        {"prompt", labels_[i]}, {"settings", s.to_json()},          {"seconds", secs}};
      if (!f.video.empty()) ev["video"] = rel(f.video);
      if (!image.empty()) ev["image"] = image;
      events.emit("validation", ev);
      if (!why.empty() && step == 0 && i == 0) events.log("info", "validation: " + why);
    } catch (const std::exception& e) {
      // A failed render never stops training.
      events.log("warning",
                 "validation " + std::to_string(i) + " at step " + std::to_string(step) + " failed: " + e.what());
    }
  }
}

}  // namespace ws::train
