// SPDX-License-Identifier: Apache-2.0
#include "train/experts/expert_latents.h"

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "io/safetensors.h"

namespace ws::train {

ExpertLatentSource::ExpertLatentSource(models::WanVae* vae, const std::string& vae_file, ImageConditioning cond,
                                       const std::optional<std::string>& cache_dir)
    : vae_(vae), cond_(cond) {
  if (cache_dir && vae_) {
    vae_sha_ = sha256_file(vae_file);
    cache_ = std::make_unique<LatentCache>(*cache_dir, vae_sha_);
  }
}

ExpertLatents ExpertLatentSource::direct(const data::Batch& batch) {
  if (batch.latents.defined()) return {batch.latents, torch::Tensor(), batch.y};  // the loader read the files
  return encode_batch(batch.x_hr);
}

torch::Tensor ExpertLatentSource::encode(const torch::Tensor& x) {
  if (!vae_) throw Error("a video row without latent_path, and no VAE to encode it");
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t i = 0; i < x.size(0); ++i) parts.push_back(vae_->encode(x.narrow(0, i, 1)));
  return torch::cat(parts, 0).to(torch::kFloat);
}

ExpertLatents ExpertLatentSource::encode_batch(const torch::Tensor& x_hr) {
  ExpertLatents l;
  l.z = encode(x_hr);
  if (cond_ == ImageConditioning::I2V) l.image = encode(first_frame_clip(x_hr));
  return l;
}

// [B, C, F, H/f, W/f] normalised latents (and i2v's image latents): from the cache
// (`latents`, `image_latents` per clip) or the VAE.
ExpertLatents ExpertLatentSource::of(const data::Batch& batch) {
  if (batch.latents.defined()) return direct(batch);
  if (!cache_) return encode_batch(batch.x_hr);
  const bool i2v = cond_ == ImageConditioning::I2V;
  const int64_t L = batch.x_hr.size(2), F = 1 + (L - 1) / 4;
  std::vector<torch::Tensor> out, images;
  std::vector<std::string> paths;
  bool all = true;
  for (const auto& c : batch.clips) {
    std::vector<int64_t> frames(c.frames.begin(),
                                c.frames.begin() + std::min<int64_t>(L, static_cast<int64_t>(c.frames.size())));
    const std::string key = cache_->key(c.file, frames, batch.size.H, batch.size.W, 0, 0);
    paths.push_back(fs::join(cache_->dir(), key + ".safetensors"));
    if (!all || !fs::exists(paths.back())) {
      all = false;
      continue;
    }
    try {
      auto sd = io::read_safetensors(paths.back());
      auto it = sd.find("latents");
      // Another VAE's entry (other channels or stride) is stale: recomputed like a corrupt one.
      if (it == sd.end() || it->second.dim() != 4 || it->second.size(0) != vae_->z_dim() || it->second.size(1) != F ||
          it->second.size(2) != batch.size.H / vae_->spatial_factor())
        throw Error(paths.back() + ": not a latent cache entry of this clip and VAE");
      out.push_back(it->second.to(torch::kFloat));
      if (i2v) {
        auto im = sd.find("image_latents");
        if (im == sd.end() || im->second.sizes() != it->second.sizes()) {
          all = false;  // an entry a t2v run wrote: encode the image latent and rewrite it
          continue;
        }
        images.push_back(im->second.to(torch::kFloat));
      }
    } catch (const std::exception& e) {
      ws::log::warn("latent cache entry unusable, recomputing: {}", e.what());
      all = false;
    }
  }
  if (all) {
    ++hits_;
    return {torch::stack(out), i2v ? torch::stack(images) : torch::Tensor(), torch::Tensor()};
  }
  ++misses_;
  ExpertLatents z = encode_batch(batch.x_hr);
  for (size_t i = 0; i < paths.size(); ++i) {
    io::StateDict sd;
    sd["latents"] = z.z[static_cast<int64_t>(i)].contiguous();
    if (i2v) sd["image_latents"] = z.image[static_cast<int64_t>(i)].contiguous();
    io::write_safetensors(paths[i], sd,
                          {{"vae_sha256", vae_sha_},
                           {"vae_type", models::vae_type_name(vae_->type())},
                           {"z_dim", std::to_string(vae_->z_dim())},
                           {"pixel_size", std::to_string(batch.size.H) + "x" + std::to_string(batch.size.W)}});
  }
  return z;
}

void check_expert_latent_rows(const std::vector<data::TrainRow>& rows, const std::string& meta_path,
                              const models::WanConfig& c) {
  for (const auto& r : rows) {
    if (r.latent_path.empty()) continue;
    const auto& s = r.latent_shape;
    if (s[0] != c.out_dim || s[2] % 2 || s[3] % 2)
      throw Error(meta_path + " row " + std::to_string(r.meta_index) + ": " + r.latent_path + " holds latents [" +
                  std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]) + ", " +
                  std::to_string(s[3]) + "]; the experts need " + std::to_string(c.out_dim) +
                  " channels and even h, w");
  }
}

}  // namespace ws::train
