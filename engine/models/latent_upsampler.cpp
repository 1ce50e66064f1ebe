// SPDX-License-Identifier: Apache-2.0
#include "models/latent_upsampler.h"

#include "models/packed_conv.h"
#include "models/train_conv3d.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "io/json_fields.h"
#include "io/weights.h"
#include "models/grad_checkpoint.h"

namespace ws::models {
using nlohmann::json;

std::pair<int64_t, int64_t> LatentUpsamplerConfig::ratio() const {
  // Exact-key table of the reference, matched with a small tolerance on the parsed number.
  static const struct {
    double scale;
    int64_t num, den;
  } table[] = {{0.75, 3, 4}, {1.5, 3, 2}, {2.0, 2, 1}, {4.0, 4, 1}};
  for (const auto& r : table)
    if (std::fabs(r.scale - rational_spatial_scale) < 1e-6) return {r.num, r.den};
  std::ostringstream o;
  o << "rational_spatial_scale " << rational_spatial_scale << " is not supported (use 0.75, 1.5, 2.0 or 4.0)";
  throw Error(o.str());
}

void LatentUpsamplerConfig::validate() const {
  std::vector<std::string> problems;
  if (in_channels <= 0) problems.push_back("in_channels must be positive");
  if (mid_channels <= 0 || mid_channels % 32 != 0)
    problems.push_back("mid_channels must be a positive multiple of 32 (GroupNorm(32))");
  if (num_blocks_per_stage < 0) problems.push_back("num_blocks_per_stage must be >= 0");
  if (dims != 2 && dims != 3) problems.push_back("dims must be 2 or 3");
  if (!spatial_upsample) problems.push_back("spatial_upsample must be true");
  if (temporal_upsample) problems.push_back("temporal_upsample is not supported");
  if (use_rational_resampler) {
    try {
      ratio();
    } catch (const Error& e) {
      problems.push_back(e.what());
    }
  } else if (std::fabs(rational_spatial_scale - 2.0) > 1e-6) {
    problems.push_back("use_rational_resampler false means a plain 2x upsampler: rational_spatial_scale must be 2.0");
  }
  if (problems.empty()) return;
  std::string msg = "latent upsampler config: ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  throw Error(msg);
}

LatentUpsamplerConfig LatentUpsamplerConfig::from_json(const json& j, const std::string& source) {
  if (!j.is_object()) throw Error(source + ": expected a JSON object");
  LatentUpsamplerConfig c;
  const io::JsonFields f(j, source);
  f.get("in_channels", c.in_channels);
  f.get("mid_channels", c.mid_channels);
  f.get("num_blocks_per_stage", c.num_blocks_per_stage);
  f.get("dims", c.dims);
  f.get("spatial_upsample", c.spatial_upsample);
  f.get("temporal_upsample", c.temporal_upsample);
  f.get("use_rational_resampler", c.use_rational_resampler);
  // LTX-2 checkpoints spell two keys differently.
  f.get("rational_resampler", c.use_rational_resampler);
  f.get("rational_spatial_scale", c.rational_spatial_scale);
  f.get("spatial_scale", c.rational_spatial_scale);
  c.validate();
  return c;
}

json LatentUpsamplerConfig::to_json() const {
  return json{{"_class_name", "WanLatentUpsamplerModel"},
              {"_diffusers_version", "0.36.0"},
              {"in_channels", in_channels},
              {"mid_channels", mid_channels},
              {"num_blocks_per_stage", num_blocks_per_stage},
              {"dims", dims},
              {"spatial_upsample", spatial_upsample},
              {"temporal_upsample", temporal_upsample},
              {"rational_spatial_scale", rational_spatial_scale},
              {"use_rational_resampler", use_rational_resampler}};
}

int64_t LatentUpsamplerConfig::parameter_count() const {
  const int64_t C = in_channels, M = mid_channels, N = num_blocks_per_stage;
  const int64_t k = dims == 3 ? 27 : 9;
  int64_t num = use_rational_resampler ? ratio().first : 2;
  return (k * C * M + M) + 2 * M + 2 * N * (2 * (k * M * M + M) + 4 * M) + (9 * num * num * M * M + num * num * M) +
         (k * M * C + C);
}

// ---- modules ----

ConvNdImpl::ConvNdImpl(int64_t dims, int64_t in, int64_t out) : dims_(dims) {
  std::vector<int64_t> shape{out, in, 3, 3};
  if (dims == 3) shape.push_back(3);
  int64_t fan_in = in * (dims == 3 ? 27 : 9);
  double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  // PyTorch's default: kaiming_uniform(a=sqrt(5)) == U(±1/sqrt(fan_in)), bias likewise.
  weight = register_parameter("weight", torch::empty(shape).uniform_(-bound, bound));
  bias = register_parameter("bias", torch::empty({out}).uniform_(-bound, bound));
}

torch::Tensor ConvNdImpl::forward(const torch::Tensor& input) {
  if (compute != torch::kFloat) {
    const torch::Tensor x = input.to(compute);
    return dims_ == 3 ? torch::conv3d(x, weight.to(compute), bias.to(compute), 1, 1)
                      : torch::conv2d(x, weight.to(compute), bias.to(compute), 1, 1);
  }
  const torch::Tensor& x = input;
  if (packed) return packed_conv(x, weight, bias, packed);
  if (dims_ == 3) {
    if (train_conv3d_applies(x, weight)) return train_conv3d(x, weight, bias);
    return torch::conv3d(x, weight, bias, 1, 1);
  }
  return torch::conv2d(x, weight, bias, 1, 1);
}

UpsamplerResBlockImpl::UpsamplerResBlockImpl(int64_t dims, int64_t channels) {
  conv1 = register_module("conv1", ConvNd(dims, channels, channels));
  norm1 = register_module("norm1", torch::nn::GroupNorm(torch::nn::GroupNormOptions(32, channels).eps(1e-5)));
  conv2 = register_module("conv2", ConvNd(dims, channels, channels));
  norm2 = register_module("norm2", torch::nn::GroupNorm(torch::nn::GroupNormOptions(32, channels).eps(1e-5)));
}

// GroupNorm in fp32 whatever the conv dtype (autocast's rule for group_norm).
static torch::Tensor norm_fp32(torch::nn::GroupNorm& norm, const torch::Tensor& x) { return norm(x.to(torch::kFloat)); }

torch::Tensor UpsamplerResBlockImpl::forward(const torch::Tensor& x) {
  auto h = torch::silu(norm_fp32(norm1, conv1(x)));
  h = norm_fp32(norm2, conv2(h));
  return torch::silu(h + x);  // activation after the residual add (reference order)
}

torch::Tensor binomial_blur_kernel() {
  auto k = torch::tensor({1.f, 4.f, 6.f, 4.f, 1.f});
  return (torch::outer(k, k) / 256.f).reshape({1, 1, 5, 5});
}

SpatialResamplerImpl::SpatialResamplerImpl(int64_t channels, int64_t num_, int64_t den_, bool rational_)
    : num(num_), den(den_), rational(rational_) {
  if (rational) {
    conv = register_module("conv", ConvNd(2, channels, num * num * channels));
    blur_down = register_module("blur_down", std::make_shared<torch::nn::Module>("BlurDownsample"));
    kernel = blur_down->register_buffer("kernel", binomial_blur_kernel());
  } else {
    conv = register_module("0", ConvNd(2, channels, num * num * channels));  // Sequential(Conv2d, PixelShuffle)
  }
}

torch::Tensor SpatialResamplerImpl::forward(const torch::Tensor& x, std::map<std::string, torch::Tensor>* inter) {
  auto y = conv(x);
  if (inter) (*inter)["inter.upsampler_conv"] = y;
  y = torch::pixel_shuffle(y, num);
  if (inter) (*inter)["inter.upsampler_pixel_shuffle"] = y;
  if (rational && den != 1) {
    int64_t c = y.size(1);
    auto w = kernel.to(y.dtype()).expand({c, 1, 5, 5});
    y = torch::conv2d(y, w, {}, den, 2, 1, c);
  }
  return y;
}

LatentUpsamplerImpl::LatentUpsamplerImpl(const LatentUpsamplerConfig& cfg) : cfg_(cfg) {
  cfg_.validate();
  const int64_t C = cfg.in_channels, M = cfg.mid_channels, d = cfg.dims;
  initial_conv = register_module("initial_conv", ConvNd(d, C, M));
  initial_norm = register_module("initial_norm", torch::nn::GroupNorm(torch::nn::GroupNormOptions(32, M).eps(1e-5)));
  res_blocks = register_module("res_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < cfg.num_blocks_per_stage; ++i) res_blocks->push_back(UpsamplerResBlock(d, M));
  auto [num, den] = cfg.use_rational_resampler ? cfg.ratio() : std::make_pair<int64_t, int64_t>(2, 1);
  upsampler = register_module("upsampler", SpatialResampler(M, num, den, cfg.use_rational_resampler));
  post_upsample_res_blocks = register_module("post_upsample_res_blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < cfg.num_blocks_per_stage; ++i) post_upsample_res_blocks->push_back(UpsamplerResBlock(d, M));
  final_conv = register_module("final_conv", ConvNd(d, M, C));
}

torch::Tensor LatentUpsamplerImpl::run_block(UpsamplerResBlock& block, const torch::Tensor& x) {
  if (!checkpointing_ || !is_training()) return block->forward(x);
  auto* raw = block.get();
  return checkpoint([raw](const torch::Tensor& t) { return raw->forward(t); }, x, trainable_parameters(*raw));
}

torch::Tensor LatentUpsamplerImpl::forward(const torch::Tensor& input, std::map<std::string, torch::Tensor>* inter) {
  if (input.dim() != 5 || input.size(1) != cfg_.in_channels) {
    std::ostringstream o;
    o << "latent upsampler expects [B, " << cfg_.in_channels << ", F, h, w], got " << input.sizes();
    throw Error(o.str());
  }
  const int64_t B = input.size(0), F = input.size(2);
  const bool d3 = cfg_.dims == 3;
  // dims = 2: every frame is its own sample from the start.
  torch::Tensor x =
      d3 ? input : input.permute({0, 2, 1, 3, 4}).reshape({B * F, input.size(1), input.size(3), input.size(4)});
  auto to_5d = [&](const torch::Tensor& t) {
    return d3 ? t : t.reshape({B, F, t.size(1), t.size(2), t.size(3)}).permute({0, 2, 1, 3, 4});
  };

  x = torch::silu(initial_norm(initial_conv(x).to(torch::kFloat)));
  if (inter) (*inter)["inter.after_initial"] = to_5d(x);
  for (auto& m : *res_blocks) {
    auto blk = UpsamplerResBlock(std::dynamic_pointer_cast<UpsamplerResBlockImpl>(m));
    x = run_block(blk, x);
  }
  if (inter) (*inter)["inter.after_res_blocks"] = to_5d(x);

  // Frame-batch for the 2-D resampler: row index b·F + f.
  if (d3) x = x.permute({0, 2, 1, 3, 4}).reshape({B * F, x.size(1), x.size(3), x.size(4)});
  x = upsampler->forward(x, inter);
  if (inter) (*inter)["inter.after_upsampler"] = x;
  if (d3) x = x.reshape({B, F, x.size(1), x.size(2), x.size(3)}).permute({0, 2, 1, 3, 4});

  for (auto& m : *post_upsample_res_blocks) {
    auto blk = UpsamplerResBlock(std::dynamic_pointer_cast<UpsamplerResBlockImpl>(m));
    x = run_block(blk, x);
  }
  if (inter) (*inter)["inter.after_post_res_blocks"] = to_5d(x);
  x = final_conv(x).to(torch::kFloat);
  return to_5d(x).contiguous();
}

void LatentUpsamplerImpl::set_compute_dtype(torch::Dtype dt) {
  compute_ = dt;
  for (auto& m : modules(/*include_self=*/false)) {
    if (auto* c = dynamic_cast<ConvNdImpl*>(m.get())) {
      if (c->packed && dt != torch::kFloat) throw Error("latent upsampler: packed conv weights compute in fp32 only");
      c->compute = dt;
    }
  }
}

// ---- files ----

LatentUpsampler load_latent_upsampler(const std::string& path, std::vector<std::string>* warnings) {
  std::string dir = fs::is_dir(path) ? path : fs::dirname(path);
  std::string config_path = fs::join(dir, "config.json");
  if (!fs::exists(config_path)) throw Error(path + ": no config.json beside the latent upsampler weights");
  json cfg_json;
  try {
    cfg_json = json::parse(fs::read_json_text(config_path));
  } catch (const json::exception& e) {
    throw Error(config_path + ": invalid JSON (" + std::string(e.what()) + ")");
  }
  auto cfg = LatentUpsamplerConfig::from_json(cfg_json, config_path);
  io::StateDict sd = io::load_weights(path);
  LatentUpsampler model(cfg);
  const std::string kernel_key = "upsampler.blur_down.kernel";
  if (cfg.use_rational_resampler) {
    auto it = sd.find(kernel_key);
    if (it == sd.end()) {
      sd[kernel_key] = binomial_blur_kernel();  // older files may lack the buffer: rebuild it
    } else if (it->second.sizes() == torch::IntArrayRef({1, 1, 5, 5}) &&
               (it->second.to(torch::kFloat) - binomial_blur_kernel()).abs().max().item<float>() > 1e-7f) {
      if (warnings) warnings->push_back(path + ": upsampler.blur_down.kernel differs from the binomial kernel");
    }
  }
  io::load_state_dict(*model, sd, io::LoadMode::Strict, path);
  return model;
}

void save_latent_upsampler(LatentUpsampler& model, const std::string& dir, const json& extra_config) {
  fs::make_dirs(dir);
  json cfg = model->config().to_json();
  for (auto& [k, v] : extra_config.items()) cfg[k] = v;
  io::write_model_dir(dir, cfg, io::module_state_dict(*model));
}

}  // namespace ws::models
