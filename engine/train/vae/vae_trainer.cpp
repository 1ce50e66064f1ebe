// SPDX-License-Identifier: Apache-2.0
#include "train/vae/vae_trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "core/error.h"
#include "core/log.h"
#include "data/clip_tensor.h"
#include "dataset/frame_sampling.h"
#include "data/random_streams.h"
#include "dataset/row_check.h"
#include "io/safetensors.h"

namespace ws::train {
using nlohmann::json;

models::WanVaeConfig tiny_vae_config() {
  models::WanVaeConfig c;
  c.dim = 4;
  c.dec_dim = 6;
  return c;
}

VaeLoss vae_loss(models::vae::WanVAEImpl& net, const torch::Tensor& x, double kl_weight, at::Generator& noise,
                 const models::vae::Schedule& schedule) {
  auto m = net.moments(net.encode_raw(x, schedule));
  const torch::Tensor& mu = m.first;
  const torch::Tensor& log_var = m.second;
  auto eps = at::randn(mu.sizes(), noise, mu.options().requires_grad(false));
  // Sampled in the un-normalised space; decode_raw starts at conv2 (no docs/design/wan22-vae.md §9 denormalisation).
  auto z = mu + at::exp(0.5 * log_var) * eps;
  auto out = net.decode_raw(z, schedule);  // not clamped: the clamp would stop gradients at ±1
  auto recon = (out - x).square().mean();
  auto kl = (0.5 * (mu.square() + at::exp(log_var) - 1.0 - log_var)).mean();
  return {recon + kl_weight * kl, recon.detach(), kl.detach()};
}

VaeUpdater::VaeUpdater(models::WanVae& vae, VaeUpdateOptions opts) : vae_(vae), opts_(std::move(opts)) {
  AdamWGroup g;
  for (const auto& p : vae_.net().named_parameters(true)) {
    p.value().set_requires_grad(true);
    g.names.push_back(p.key());
    g.params.push_back(p.value());
  }
  optimizer_ = std::make_unique<AdamW>(std::vector<AdamWGroup>{g}, opts_.adam);
}

std::vector<torch::Tensor> VaeUpdater::params() const { return optimizer_->groups().front().params; }

VaeStepRecord VaeUpdater::step(const std::vector<torch::Tensor>& clips, uint64_t noise_seed) {
  if (clips.empty()) throw Error("VAE training: empty batch");
  for (const auto& c : clips) {
    if (c.dim() != 4 || c.size(0) != 3)
      throw Error("VAE training: a clip must be [3, T, H, W], got " + io::shape_str(c.sizes().vec()));
    vae_.check_video(c.unsqueeze(0), "VAE training clip");
  }
  torch::AutoGradMode grad_on(true);
  optimizer_->zero_grad();
  // Clips of one length and size form one batch; each clip's loss weighs 1/n.
  std::map<std::vector<int64_t>, std::vector<torch::Tensor>> groups;
  for (const auto& c : clips) groups[c.sizes().vec()].push_back(c);
  at::Generator gen = at::detail::createCPUGenerator(noise_seed);
  const double n = static_cast<double>(clips.size());
  VaeStepRecord r;
  for (const auto& [shape, list] : groups) {
    auto x = torch::stack(list).to(torch::kFloat);
    auto l = vae_loss(vae_.net(), x, opts_.kl_weight, gen, opts_.chunking);
    const double w = static_cast<double>(list.size()) / n;
    (l.loss * w).backward();
    r.recon += l.recon.item<double>() * w;
    r.kl += l.kl.item<double>() * w;
  }
  r.loss = r.recon + opts_.kl_weight * r.kl;
  ClipOptions clip;
  clip.max_grad_norm = opts_.max_grad_norm;
  clip.initial_grad_norm_ratio = 1.0;  // a plain clip_grad_norm_: no decaying threshold
  clip.abnormal_norm_clip_start = std::numeric_limits<double>::infinity();
  r.grad_norm = clip_gradients(params(), clip, global_step_).grad_norm;
  r.lr = opts_.schedule.lr(global_step_, opts_.learning_rate);
  optimizer_->step({r.lr});
  optimizer_->zero_grad();
  r.step = ++global_step_;
  r.clips = static_cast<int64_t>(clips.size());
  return r;
}

VaeClipSampler::VaeClipSampler(dataset::Metadata meta, VaeDataOptions opts) : meta_(std::move(meta)), opts_(opts) {
  for (size_t i = 0; i < meta_.rows.size(); ++i) {
    auto rep = dataset::check_row(meta_, i, {});
    const auto& row = meta_.rows[i];
    std::string why = rep.problems.empty() ? "" : rep.problems.front();
    if (why.empty() && !row.is_image() && dataset::plan_clip(rep.frames, opts_.n_frames, opts_.stride).n == 0)
      why = "too short: " + std::to_string(rep.frames) + " frames < stride " + std::to_string(opts_.stride);
    if (!why.empty()) {
      ws::log::warn("{}: row {} ({}) skipped: {}", meta_.path, i, row.file_path, why);
      ++skipped_;
      continue;
    }
    usable_.push_back({i, row.is_image() ? 1 : rep.frames});
  }
  if (usable_.empty()) throw Error(meta_.path + ": no usable rows (" + std::to_string(skipped_) + " skipped)");
  failed_.assign(usable_.size(), false);
}

VaeClipSampler::VaeClipSampler(dataset::Metadata meta, std::vector<int64_t> frames, VaeDataOptions opts)
    : meta_(std::move(meta)), opts_(opts) {
  if (frames.size() != meta_.rows.size()) throw Error("VAE sampler: one frame count per row expected");
  for (size_t i = 0; i < frames.size(); ++i) usable_.push_back({i, meta_.rows[i].is_image() ? 1 : frames[i]});
  if (usable_.empty()) throw Error(meta_.path + ": no usable rows");
  failed_.assign(usable_.size(), false);
}

torch::Tensor VaeClipSampler::read(const Row& r, int64_t step, int64_t slot) {
  const auto& row = meta_.rows[r.index];
  std::vector<int64_t> idx{0};
  if (!row.is_image()) {
    auto plan = dataset::plan_clip(r.frames, opts_.n_frames, opts_.stride);
    auto start = data::Rng::keyed(opts_.seed, "vae", step, slot).uniform_int(0, plan.max_start);
    idx = dataset::clip_indices(plan, start);
    idx.resize(static_cast<size_t>((plan.n - 1) / 4 * 4 + 1));  // the VAE takes 4k + 1 frames
  }
  auto clip = data::read_clip(meta_.resolve(row), idx, opts_.size, opts_.size);
  if (opts_.crop <= 0 || opts_.crop >= opts_.size) return clip;
  auto rng = data::Rng::keyed(opts_.seed, "vae-crop", step, slot);
  const int64_t y = rng.uniform_int(0, opts_.size - opts_.crop), x = rng.uniform_int(0, opts_.size - opts_.crop);
  return clip.narrow(2, y, opts_.crop).narrow(3, x, opts_.crop).contiguous();
}

std::vector<torch::Tensor> VaeClipSampler::batch(int64_t step) {
  const int64_t n = epoch_rows();
  std::vector<torch::Tensor> out;
  for (int64_t slot = 0; slot < opts_.batch; ++slot) {
    // Position in the endless stream of epochs; each epoch is its own permutation.
    const int64_t pos = step * opts_.batch + slot, epoch = pos / n;
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    auto order = data::Rng::keyed(opts_.seed, "vae-order", epoch);
    for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[order.uniform_int(0, i)]);
    int64_t pick = perm[pos % n];
    for (int64_t attempt = 0;; ++attempt) {
      if (!failed_[pick]) {
        try {
          out.push_back(read(usable_[pick], step, slot));
          break;
        } catch (const Error& e) {
          ws::log::warn("{}: row {} skipped from now on: {}", meta_.path, usable_[pick].index, e.what());
          failed_[pick] = true;
        }
      }
      if (std::count(failed_.begin(), failed_.end(), false) == 0) throw Error(meta_.path + ": no row could be read");
      pick = data::Rng::keyed(opts_.seed, "vae-retry", step, slot, attempt).uniform_int(0, n - 1);
    }
  }
  return out;
}

void save_vae_weights(models::WanVae& vae, const std::string& path) {
  io::StateDict sd;
  for (const auto& [k, v] : vae.state_dict()) sd[k] = v.detach().to(torch::kCPU, torch::kFloat).contiguous();
  io::write_safetensors(path, sd, {{"config", vae.config().to_json().dump()}, {"format", "pt"}});
}

std::unique_ptr<models::WanVae> load_vae_for_training(const std::string& path, const json& config) {
  models::WanVaeOptions o;
  o.pack_weights = false;  // packed oneDNN weights are inference-only
  auto vae = models::WanVae::load(path, config, o);
  // Loading maps the file (copy-on-write views); training gets its own contiguous memory.
  torch::NoGradGuard no_grad;
  for (auto& p : vae->net().parameters()) p.set_data(p.detach().to(torch::kFloat).clone(at::MemoryFormat::Contiguous));
  return vae;
}

}  // namespace ws::train
