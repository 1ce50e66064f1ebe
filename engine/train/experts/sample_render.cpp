// SPDX-License-Identifier: Apache-2.0
#include "train/experts/sample_render.h"

#include "core/error.h"
#include "core/fs.h"
#include "data/clip_tensor.h"
#include "io/safetensors.h"
#include "io/state_dict.h"
#include "models/dit_conditioning.h"
#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_encode.h"
#endif

namespace ws::train {

torch::Tensor image_condition_latent(const std::string& path, const SampleSettings& s, const std::string& model_type,
                                     models::WanVae* vae) {
  if (path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0) {
    auto sd = io::read_safetensors(path);
    if (!sd.count("image_latent")) throw Error(path + ": no tensor 'image_latent'");
    return sd.at("image_latent").to(torch::kFloat);
  }
  if (!vae) throw Error(path + ": a picture needs the VAE to encode it (or give a .safetensors with image_latent)");
  // Resized to cover the video's size and centre-cropped (the reference resizes to the exact size).
  torch::Tensor img = data::read_clip(path, {0}, s.height, s.width);  // [3, 1, H, W]
  torch::Tensor clip =
      model_type == "i2v" ? torch::cat({img, torch::zeros({3, s.frames - 1, s.height, s.width})}, 1) : img;
  return vae->encode(clip.unsqueeze(0)).squeeze(0).to(torch::kCPU, torch::kFloat);
}

nlohmann::json SampleSettings::to_json() const {
  nlohmann::json j{{"task", task},
                   {"sample_solver", sampling::solver_name(sampler.solver)},
                   {"sample_steps", sampler.steps},
                   {"sample_shift", sampler.shift},
                   {"sample_guide_scale", {sampler.guide_low, sampler.guide_high}},
                   {"size", std::to_string(width) + "*" + std::to_string(height)},
                   {"frame_num", frames},
                   {"fps", fps},
                   {"base_seed", seed}};
  j["boundary_ratio"] = sampler.boundary ? nlohmann::json(*sampler.boundary) : nlohmann::json(nullptr);
  const auto sched = sampling::flow_schedule(sampler.solver, sampler.steps, sampler.shift);
  j["timesteps"] = sched.timesteps;
  return j;
}

SampleSettings sample_preset(const std::string& task) {
  SampleSettings s;
  s.task = task;
  if (task == "t2v-A14B") {
    s.sampler = {sampling::Solver::UniPC, 40, 12.0, 3.0, 4.0, 0.875};
    s.width = 1280, s.height = 720, s.frames = 81, s.fps = 16;
  } else if (task == "i2v-A14B") {
    s.sampler = {sampling::Solver::UniPC, 40, 5.0, 3.5, 3.5, 0.9};
    s.width = 1280, s.height = 720, s.frames = 81, s.fps = 16;
  } else if (task == "ti2v-5B") {
    s.sampler = {sampling::Solver::UniPC, 50, 5.0, 5.0, 5.0, std::nullopt};
    s.width = 1280, s.height = 704, s.frames = 121, s.fps = 24;
  } else {
    throw Error("task must be t2v-A14B, i2v-A14B or ti2v-5B, got '" + task + "'");
  }
  return s;
}

void apply_preview(SampleSettings& s) {
  s.sampler.steps = 12;
  s.width = s.height = 256;
  s.frames = 17;
}

std::vector<int64_t> sample_latent_shape(const SampleSettings& s, int64_t c) {
  const int64_t stride = c == 16 ? 8 : 16;  // the Wan2.1 VAE for 16 channels, the Wan2.2 VAE otherwise
  if (s.frames < 1 || (s.frames - 1) % 4)
    throw Error("frame_num must be 4k+1 (1, 5, 9, ...), got " + std::to_string(s.frames));
  // The DiT's patch 2 on top of the VAE stride.
  if (s.width < 2 * stride || s.height < 2 * stride || s.width % (2 * stride) || s.height % (2 * stride))
    throw Error("size " + std::to_string(s.width) + "*" + std::to_string(s.height) +
                ": width and height must be multiples of " + std::to_string(2 * stride) + " for " + std::to_string(c) +
                "-channel experts");
  return {c, 1 + (s.frames - 1) / 4, s.height / stride, s.width / stride};
}

torch::Tensor render_latents(sampling::SamplerModels& models, const SampleSettings& s, int64_t c,
                             const SampleConditioning& cond,
                             const std::function<void(const sampling::SamplerStep&)>& on_step,
                             const std::function<bool()>& cancel) {
  const auto shape = sample_latent_shape(s, c);
  sampling::SamplerInputs in;
  in.noise = sampling::seeded_noise(shape, s.seed);  // first draw of a CPU generator: reproducible anywhere
  in.context = cond.context;
  in.context_null = cond.context_null;
  const std::string type = models.low->config().model_type;
  if (type == "i2v") {
    if (!cond.image_latent.defined()) throw Error("i2v experts need an image (--image)");
    if (cond.image_latent.sizes().vec() != shape)
      throw Error("the image latent is " + io::shape_str(cond.image_latent.sizes().vec()) + ", the video's latent " +
                  io::shape_str(shape));
    in.y = models::i2v_y(cond.image_latent.to(torch::kFloat));
  } else if (type == "ti2v" && cond.image_latent.defined()) {
    in.first_frame = cond.image_latent.to(torch::kFloat);
  }
  return sampling::sample_latents(models, in, s.sampler, on_step, cancel);
}

SampleFiles write_sample(const std::string& base, const torch::Tensor& latents, const nlohmann::json& record,
                         const nlohmann::json& sidecar, models::WanVae* vae, int64_t fps, std::string* why_no_video) {
  SampleFiles f;
  f.latents = base + ".latents.safetensors";
  f.sidecar = base + ".json";
  const torch::Tensor z = latents.to(torch::kCPU, torch::kFloat).contiguous();
  io::write_safetensors(
      f.latents, {{"latents", z}},
      {{"format", "wanstudio-latents"}, {"layout", "[C,F,h,w]"}, {"normalised", "true"}, {"sample", record.dump()}});
  fs::write_file_atomic(f.sidecar, sidecar.dump(2) + "\n");
  std::string why;
  if (!vae) {
    why = "no VAE given (--vae_path): latents only";
  } else if (vae->z_dim() != z.size(0)) {
    why = "the VAE has " + std::to_string(vae->z_dim()) + " latent channels, the video " + std::to_string(z.size(0)) +
          ": latents only";
  } else {
#ifdef WANSTUDIO_HAVE_VIDEO
    torch::Tensor x = vae->decode(z.unsqueeze(0)).squeeze(0);
    video::EncodeOptions eo;
    eo.fps = static_cast<double>(fps);
    f.video = base + ".mp4";
    video::write_video(f.video, data::clip_to_frames(x), eo);
#else
    why = "video support is not built into this engine: latents only";
#endif
  }
  if (why_no_video) *why_no_video = why;
  return f;
}

}  // namespace ws::train
