// SPDX-License-Identifier: Apache-2.0
#include "models/wan_vae.h"

#include "core/json_depth.h"
#include "core/error.h"
#include "core/log.h"
#include "io/weights.h"
#include "models/wan_vae_weights.h"

namespace ws::models {
namespace {

std::string shape_of(const torch::Tensor& t) { return io::shape_str(t.sizes().vec()); }

torch::Tensor stats_tensor(const std::vector<double>& v) {
  // Python literals become fp32 through double, exactly like torch.tensor(list, dtype=float32).
  std::vector<float> f(v.begin(), v.end());
  return torch::tensor(f, torch::kFloat).view({1, -1, 1, 1, 1});
}

// Strict, zero-copy assignment: the module's parameters take the file's tensors (for
// safetensors, views of the mapped file) when dtype and layout already fit, so loading the
// released 2.8 GB does not hold two copies. Any problem goes through io::load_state_dict,
// which names the key and leaves the module untouched.
void assign_strict(torch::nn::Module& m, const io::StateDict& sd, const std::string& source) {
  auto params = m.named_parameters(true);
  bool clean = params.size() == sd.size();
  for (const auto& p : params) {
    auto it = sd.find(p.key());
    if (it == sd.end() || !it->second.defined() || it->second.sizes() != p.value().sizes()) clean = false;
  }
  if (!clean) {
    io::load_state_dict(m, sd, io::LoadMode::Strict, source);
    throw Error(source + ": the weights do not fit the VAE");  // unreachable when io reports it
  }
  torch::NoGradGuard no_grad;
  for (auto& p : params) {
    const torch::Tensor& src = sd.at(p.key());
    torch::Tensor dst = p.value();
    if (src.scalar_type() == dst.scalar_type() && src.device() == dst.device() && src.is_contiguous())
      dst.set_data(src);
    else dst.set_data(src.to(dst.device(), dst.scalar_type()).contiguous());
  }
}

}  // namespace

// Weights on the GPU only for the duration of one call (low_vram).
struct VaeCallScope {
  explicit VaeCallScope(WanVae& v) : v(v) {
    if (v.low_vram_) v.net_->to(v.device_);
  }
  ~VaeCallScope() {
    if (v.low_vram_) v.net_->to(torch::kCPU);
  }
  WanVae& v;
};

WanVae::WanVae(const WanVaeConfig& cfg, const WanVaeOptions& opts, bool initialise) : cfg_(cfg), opts_(opts) {
  cfg_.validate();
  // Storage stays untouched (no RSS) until a file's tensors replace it or the init below.
  vae::InitOptions io;
  io.initialise = false;
  net_ = std::make_shared<vae::WanVAEImpl>(cfg_, io);
  if (opts_.decoder_only && opts_.encoder_only) throw Error("VAE: encoder_only and decoder_only leave nothing to run");
  if (initialise)
    vae::initialise_parameters(*net_, cpu_inference() && opts_.pack_weights, unused_half(), opts_.winograd);
  if (!cfg_.wan21() && cfg_.z_dim == 48) {
    set_latent_stats(wan22_latent_mean(), wan22_latent_std());
  } else if (cfg_.wan21() && cfg_.z_dim == 16) {
    set_latent_stats(wan21_latent_mean(), wan21_latent_std());
  } else {
    // No published constants for other widths: an identity map until the caller sets some.
    set_latent_stats(std::vector<double>(cfg_.z_dim, 0.0), std::vector<double>(cfg_.z_dim, 1.0));
  }
}

bool WanVae::cpu_inference() const {
#ifdef WANSTUDIO_HAVE_CUDA
  return !(opts_.device.rfind("cuda", 0) == 0 && torch::cuda::is_available());
#else
  return true;
#endif
}

vae::Half WanVae::unused_half() const {
  return opts_.decoder_only ? vae::Half::encoder : opts_.encoder_only ? vae::Half::decoder : vae::Half::none;
}

void WanVae::setup_device() {
  if (unused_half() != vae::Half::none) {
    // The unused half's tensors (never initialised, or views of an unread mapped file) become empty.
    torch::NoGradGuard ng;
    for (const auto& item : net_->named_modules("", /*include_self=*/false))
      if (vae::in_half(item.key(), unused_half()))
        for (auto& t : item.value()->parameters(/*recurse=*/false)) t.set_data(torch::empty({0}, t.options()));
  }
  const bool wants_cuda = opts_.device.rfind("cuda", 0) == 0;
  if (cpu_inference()) {
    std::string wanted;
    for (auto [on, name] : {std::pair<bool, std::string>{wants_cuda, "device " + opts_.device},
                            {opts_.bf16, "bf16"},
                            {opts_.low_vram, "low_vram"}})
      if (on) wanted += (wanted.empty() ? "" : ", ") + name;
    if (!wanted.empty()) ws::log::warn("VAE: {} needs CUDA, which is not available; running fp32 on the CPU", wanted);
    device_ = torch::kCPU;
    dtype_ = torch::kFloat;
    low_vram_ = false;
    if (opts_.pack_weights) vae::pack_weights(*net_, unused_half(), opts_.winograd);
    return;
  }
#ifdef WANSTUDIO_HAVE_CUDA
  device_ = torch::Device(opts_.device);
  dtype_ = opts_.bf16 ? torch::kBFloat16 : torch::kFloat;
  low_vram_ = opts_.low_vram;
  if (dtype_ != torch::kFloat) net_->to(dtype_);
  if (opts_.channels_last) {
    // vae::conv3d gives a conv with a channels-last kernel a channels-last input; the layout
    // survives `to(device)` (low_vram's moves keep it).
    torch::NoGradGuard ng;
    for (auto& p : net_->parameters())
      if (p.dim() == 5 && p.numel() > 0) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast3d));
  }
  if (!low_vram_) net_->to(device_);
#endif
}

std::unique_ptr<WanVae> WanVae::from_state_dict(const io::StateDict& sd, const WanVaeConfig& config,
                                                const std::string& source, const WanVaeOptions& opts) {
  // Parameters stay uninitialised: every one is replaced by the file's tensor.
  std::unique_ptr<WanVae> v(new WanVae(config, opts, /*initialise=*/false));
  assign_strict(*v->net_, sd, source);
  v->setup_device();
  return v;
}

std::unique_ptr<WanVae> WanVae::random(const WanVaeConfig& config, uint64_t seed, const WanVaeOptions& opts) {
  torch::manual_seed(seed);
  std::unique_ptr<WanVae> v(new WanVae(config, opts, /*initialise=*/true));
  v->setup_device();
  return v;
}

WanVaeConfig WanVae::resolve_config(const std::string& weights_path, const nlohmann::json& config) {
  // Safetensors are mapped, not read: the shapes cost nothing.
  auto sd = official_vae_keys(io::load_weights(weights_path), weights_path);
  return resolve_vae_config(sd, io::weights_metadata(weights_path), config, weights_path);
}

std::unique_ptr<WanVae> WanVae::load(const std::string& weights_path, const nlohmann::json& config,
                                     const WanVaeOptions& opts) {
  auto sd = official_vae_keys(io::load_weights(weights_path), weights_path);
  WanVaeConfig cfg = resolve_vae_config(sd, io::weights_metadata(weights_path), config, weights_path);
  cfg.validate(weights_path);
  return from_state_dict(sd, cfg, weights_path, opts);
}

void WanVae::set_latent_stats(const std::vector<double>& mean, const std::vector<double>& std) {
  if (static_cast<int64_t>(mean.size()) != cfg_.z_dim || static_cast<int64_t>(std.size()) != cfg_.z_dim)
    throw Error("VAE: latent mean/std need " + std::to_string(cfg_.z_dim) + " values each, got " +
                std::to_string(mean.size()) + " and " + std::to_string(std.size()));
  for (double s : std)
    if (!(s > 0)) throw Error("VAE: latent std values must be positive");
  mean_ = stats_tensor(mean);
  inv_std_ = 1.0 / stats_tensor(std);  // the reference's scale[1]: an fp32 reciprocal
}

int64_t WanVae::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : net_->parameters()) n += p.numel();
  return n;
}

io::StateDict WanVae::state_dict() const {
  // Packed conv weights are placeholders in the module: read them back from oneDNN's copy.
  auto sd = io::module_state_dict(*net_);
  for (const auto& item : net_->named_modules("", /*include_self=*/false)) {
    if (auto c = std::dynamic_pointer_cast<vae::CausalConv3dImpl>(item.value()); c && c->is_packed())
      sd[item.key() + ".weight"] = c->dense_weight();
    if (auto r = std::dynamic_pointer_cast<vae::ResampleImpl>(item.value()))
      sd[item.key() + ".resample.1.weight"] = r->dense_weight();
  }
  return sd;
}

void WanVae::check_video(const torch::Tensor& x, const std::string& what) const { check_video(cfg_, x, what); }

void WanVae::check_latent(const torch::Tensor& z, const std::string& what) const { check_latent(cfg_, z, what); }

void WanVae::check_video(const WanVaeConfig& cfg, const torch::Tensor& x, const std::string& what) {
  if (!x.defined() || x.dim() != 5 || x.size(1) != 3)
    throw Error(what + ": video must be [B, 3, T, H, W], got " + (x.defined() ? shape_of(x) : "nothing"));
  const int64_t t = x.size(2), h = x.size(3), w = x.size(4), f = cfg.spatial_factor();
  const int64_t tf = cfg.temporal_factor();
  if (x.size(0) < 1 || t < 1 || (t - 1) % tf)
    throw Error(what + ": video " + shape_of(x) + " has T=" + std::to_string(t) + " frames; T must be 1 + " +
                std::to_string(tf) + "k (1, 5, 9, 13, ...)");
  if (h < f || w < f || h % f || w % f)
    throw Error(what + ": video " + shape_of(x) + " is " + std::to_string(h) + "x" + std::to_string(w) +
                " (HxW); height and width must be positive multiples of " + std::to_string(f));
}

void WanVae::check_latent(const WanVaeConfig& cfg, const torch::Tensor& z, const std::string& what) {
  if (z.defined() && z.dim() == 5 && z.size(1) != cfg.z_dim)
    throw Error(what + ": latents " + shape_of(z) + " have " + std::to_string(z.size(1)) + " channels but the VAE is " +
                vae_type_name(cfg.type) + " (z_dim " + std::to_string(cfg.z_dim) + ")");
  if (!z.defined() || z.dim() != 5 || z.size(0) < 1 || z.size(2) < 1 || z.size(3) < 1 || z.size(4) < 1)
    throw Error(what + ": latent must be [B, " + std::to_string(cfg.z_dim) + ", N, h, w], got " +
                (z.defined() ? shape_of(z) : "nothing"));
}

VaeEncodeOutput WanVae::encode_full(const torch::Tensor& x) {
  if (opts_.decoder_only) throw Error("VAE encode: this VAE was opened for decoding only");
  check_video(x);
  torch::NoGradGuard no_grad;
  VaeCallScope scope(*this);
  VaeEncodeOutput out;
  auto enc = net_->encode_raw(x.to(device_, dtype_), opts_.schedule);
  auto m = net_->moments(enc);
  // Outputs are fp32 on the caller's device, like Wan2_2_VAE's `.float()`.
  out.enc_raw = enc.to(x.device(), torch::kFloat);
  out.mu = m.first.to(x.device(), torch::kFloat);
  out.log_var = m.second.to(x.device(), torch::kFloat);
  out.latent = (out.mu - mean_.to(x.device())) * inv_std_.to(x.device());
  return out;
}

torch::Tensor WanVae::encode(const torch::Tensor& x) { return encode_full(x).latent; }

torch::Tensor WanVae::decode(const torch::Tensor& latent, bool clamp) {
  if (opts_.encoder_only) throw Error("VAE decode: this VAE was opened for encoding only");
  check_latent(latent);
  torch::NoGradGuard no_grad;
  VaeCallScope scope(*this);
  // Division by the fp32 reciprocal, as the reference does (not multiplication by std).
  auto z = latent.to(torch::kFloat) / inv_std_.to(latent.device()) + mean_.to(latent.device());
  z = z.to(device_, dtype_);
  auto out = opts_.tiled_decode ? decode_tiled(z) : net_->decode_raw(z, opts_.schedule);
  out = out.to(latent.device(), torch::kFloat);
  if (clamp) out.clamp_(-1.0, 1.0);  // Wan2_x_VAE.decode clamps; WanVAE_.decode does not
  return out;
}

}  // namespace ws::models
