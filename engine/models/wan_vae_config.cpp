// SPDX-License-Identifier: Apache-2.0
#include "models/wan_vae_config.h"

#include <yaml-cpp/yaml.h>

#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/yaml_limits.h"
#include "io/json_fields.h"
#include "io/model_yaml.h"

namespace ws::models {
namespace {

using json = nlohmann::json;

const char* const kKeys[] = {
    "dim", "dec_dim", "z_dim", "dim_mult", "num_res_blocks", "attn_scales", "temperal_downsample", "dropout"};

}  // namespace

const char* vae_type_name(VaeType t) { return t == VaeType::Wan21 ? "wan2.1" : "wan2.2"; }

VaeType parse_vae_type(const std::string& name, const std::string& source) {
  if (name == "wan2.1" || name == "AutoencoderKLWan") return VaeType::Wan21;
  if (name == "wan2.2" || name == "AutoencoderKLWan3_8") return VaeType::Wan22;
  throw Error(source + ": vae_type '" + name +
              "' is not one of wan2.1, wan2.2, AutoencoderKLWan (wan2.1), AutoencoderKLWan3_8 (wan2.2)");
}

WanVaeConfig WanVaeConfig::released(VaeType type) {
  WanVaeConfig c;
  c.type = type;
  if (type == VaeType::Wan21) {
    c.dim = 96;
    c.dec_dim = 96;  // unused: the decoder runs at `dim`
    c.z_dim = 16;
  }
  return c;
}

std::vector<int64_t> WanVaeConfig::encoder_dims() const {
  std::vector<int64_t> d{dim};
  for (auto m : dim_mult) d.push_back(dim * m);
  return d;
}

std::vector<int64_t> WanVaeConfig::decoder_dims() const {
  const int64_t w = wan21() ? dim : dec_dim;
  std::vector<int64_t> d{w * dim_mult.back()};
  for (auto it = dim_mult.rbegin(); it != dim_mult.rend(); ++it) d.push_back(w * *it);
  return d;
}

int64_t WanVaeConfig::decoder_stage_in(size_t stage) const {
  const auto d = decoder_dims();
  return wan21() && stage > 0 ? d[stage] / 2 : d[stage];
}

bool WanVaeConfig::temporal_down(size_t stage) const {
  return stage < temperal_downsample.size() && temperal_downsample[stage];
}

bool WanVaeConfig::temporal_up(size_t stage) const {
  // The decoder uses the reversed flag list, indexed the same way.
  const size_t n = temperal_downsample.size();
  return stage < n && temperal_downsample[n - 1 - stage];
}

int64_t WanVaeConfig::spatial_factor() const { return int64_t{wan21() ? 1 : 2} << (dim_mult.size() - 1); }

int64_t WanVaeConfig::temporal_factor() const {
  int64_t f = 1;
  for (size_t i = 0; i + 1 < dim_mult.size(); ++i)
    if (temporal_down(i)) f *= 2;
  return f;
}

void WanVaeConfig::validate(const std::string& source) const {
  std::vector<std::string> problems;
  if (dim <= 0) problems.push_back("dim must be positive");
  if (!wan21() && dec_dim <= 0) problems.push_back("dec_dim must be positive");
  if (z_dim <= 0) problems.push_back("z_dim must be positive");
  if (num_res_blocks < 1) problems.push_back("num_res_blocks must be at least 1");
  if (dim_mult.empty() || dim_mult.size() > 6) problems.push_back("dim_mult must have 1 to 6 entries");
  for (auto m : dim_mult)
    if (m <= 0) problems.push_back("dim_mult entries must be positive");
  if (problems.empty()) {
    // The reference streams encoder chunks of 4 frames into one latent frame, so the layout
    // must compress time by exactly 4 (two temporal stages), like every released Wan VAE.
    if (temporal_factor() != 4)
      problems.push_back("temperal_downsample must enable exactly two of the first " +
                         std::to_string(dim_mult.size() - 1) + " stages (temporal factor 4)");
    // The last stage has no resampler, so a temporal flag there would break its shortcut.
    if (temporal_down(dim_mult.size() - 1)) problems.push_back("the last stage cannot downsample in time");
    if (wan21()) {
      // No stage shortcuts; each upsampling conv halves the width, which must stay whole.
      auto d = decoder_dims();
      for (size_t i = 0; i + 2 < d.size(); ++i)
        if (d[i + 1] % 2) problems.push_back("decoder stage " + std::to_string(i) + " width must be even");
    }
  }
  if (problems.empty() && !wan21()) {
    // The parameter-free shortcuts regroup channels; widths must divide evenly.
    auto e = encoder_dims();
    for (size_t i = 0; i + 1 < e.size(); ++i) {
      int64_t f = (temporal_down(i) ? 2 : 1) * (i + 2 < e.size() ? 4 : 1);
      if ((e[i] * f) % e[i + 1] || e[i] * f < e[i + 1])
        problems.push_back("encoder stage " + std::to_string(i) + " widths do not divide");
    }
    auto d = decoder_dims();
    for (size_t i = 0; i + 2 < d.size(); ++i) {
      int64_t f = (temporal_up(i) ? 2 : 1) * 4;
      if ((d[i + 1] * f) % d[i] || d[i + 1] * f < d[i])
        problems.push_back("decoder stage " + std::to_string(i) + " widths do not divide");
    }
  }
  if (!problems.empty()) {
    std::ostringstream o;
    o << source << ": invalid VAE config: ";
    for (size_t i = 0; i < problems.size(); ++i) o << (i ? "; " : "") << problems[i];
    throw Error(o.str());
  }
}

int64_t WanVaeConfig::parameter_count() const {
  auto conv = [](int64_t ci, int64_t co, int64_t k) { return co * ci * k + co; };
  auto rb = [&](int64_t ci, int64_t co) {
    return ci + conv(ci, co, 27) + co + conv(co, co, 27) + (ci != co ? conv(ci, co, 1) : 0);
  };
  auto attn = [&](int64_t c) { return c + conv(c, 3 * c, 1) + conv(c, c, 1); };
  int64_t n = 0;
  // Encoder.
  auto e = encoder_dims();
  n += conv(encoder_in_channels(), e[0], 27);
  const size_t stages = dim_mult.size();
  for (size_t i = 0; i < stages; ++i) {
    int64_t ci = e[i], co = e[i + 1];
    for (int64_t j = 0; j < num_res_blocks; ++j, ci = co) n += rb(ci, co);
    if (i + 1 < stages) n += conv(co, co, 9) + (temporal_down(i) ? conv(co, co, 3) : 0);
  }
  n += 2 * rb(e.back(), e.back()) + attn(e.back());
  n += e.back() + conv(e.back(), 2 * z_dim, 27);
  // Top level 1×1×1 convs.
  n += conv(2 * z_dim, 2 * z_dim, 1) + conv(z_dim, z_dim, 1);
  // Decoder.
  auto d = decoder_dims();
  n += conv(z_dim, d[0], 27);
  n += 2 * rb(d[0], d[0]) + attn(d[0]);
  for (size_t i = 0; i < stages; ++i) {
    int64_t ci = decoder_stage_in(i), co = d[i + 1];
    for (int64_t j = 0; j < num_res_blocks + 1; ++j, ci = co) n += rb(ci, co);
    if (i + 1 < stages) n += conv(co, wan21() ? co / 2 : co, 9) + (temporal_up(i) ? conv(co, 2 * co, 3) : 0);
  }
  n += d.back() + conv(d.back(), decoder_out_channels(), 27);
  return n;
}

WanVaeConfig WanVaeConfig::from_json(const json& j, const std::string& source, const WanVaeConfig& base) {
  if (!j.is_object()) throw Error(source + ": VAE config must be an object, got " + j.dump());
  WanVaeConfig c = base;
  const io::JsonFields f(j, source);
  f.get("dim", c.dim);
  if (f.has("dec_dim") && c.wan21()) f.fail("dec_dim", "is a Wan2.2 VAE key; the Wan2.1 VAE decodes at 'dim'");
  f.get("dec_dim", c.dec_dim);
  f.get("z_dim", c.z_dim);
  f.get("dim_mult", c.dim_mult);
  f.get("num_res_blocks", c.num_res_blocks);
  if (f.has("attn_scales")) {
    // Numbers, not necessarily whole: the reference lists floats (empty in every release).
    const auto& v = f.value("attn_scales");
    if (!v.is_array()) f.fail("attn_scales", "must be a list of numbers");
    c.attn_scales.clear();
    for (const auto& e : v) {
      if (!e.is_number()) f.fail("attn_scales", "must be a list of numbers");
      c.attn_scales.push_back(static_cast<int64_t>(e.get<double>()));
    }
  }
  f.get("temperal_downsample", c.temperal_downsample);
  f.get("dropout", c.dropout);
  return c;
}

WanVaeConfig WanVaeConfig::from_json(const json& j, const std::string& source) {
  return from_json(j, source, WanVaeConfig());
}

json WanVaeConfig::to_json() const {
  json j{{"dim", dim},
         {"z_dim", z_dim},
         {"dim_mult", dim_mult},
         {"num_res_blocks", num_res_blocks},
         {"attn_scales", attn_scales},
         {"temperal_downsample", temperal_downsample},
         {"dropout", dropout}};
  if (!wan21()) j["dec_dim"] = dec_dim;
  return j;
}

json read_vae_config_yaml(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(fs::read_file(path));  // read_file refuses FIFOs and devices
  } catch (const YAML::Exception& e) {
    throw Error(path + ": not valid YAML (line " + std::to_string(e.mark.line + 1) + "): " + e.msg);
  }
  check_yaml_size(root, path);
  if (root.IsNull()) return json::object();
  if (!root.IsMap()) throw Error(path + ": the VAE config must be a mapping of WanVAE_ keys");
  json all = io::yaml_node_to_json(root);
  // A VideoX-Fun model YAML keeps VAE options in `vae_kwargs`; widths absent there mean the
  // released ones, and keys the VAE does not use (vae_type, vae_subpath, ...) are ignored.
  const json& src = all.contains("vae_kwargs") && all["vae_kwargs"].is_object() ? all["vae_kwargs"] : all;
  json out = json::object();
  for (const char* k : kKeys)
    if (src.contains(k)) out[k] = src[k];
  WanVaeConfig base;
  if (src.contains("vae_type")) {
    if (!src["vae_type"].is_string()) throw Error(path + ": vae_type must be a string");
    base.type = parse_vae_type(src["vae_type"].get<std::string>(), path);
    out["vae_type"] = vae_type_name(base.type);
  }
  WanVaeConfig::from_json(out, path, base);  // type errors name the file now, not at load time
  return out;
}

// docs/design/wan22-vae.md §9 constants, written as the reference's Python literals (double, then rounded to fp32 by
// the tensor, exactly as torch.tensor(list, dtype=float32) does).
const std::vector<double>& wan22_latent_mean() {
  static const std::vector<double> v{
      -0.2289, -0.0052, -0.1323, -0.2339, -0.2799, 0.0174,  0.1838,  0.1557,  -0.1382, 0.0542,  0.2813,  0.0891,
      0.1570,  -0.0098, 0.0375,  -0.1825, -0.2246, -0.1207, -0.0698, 0.5109,  0.2665,  -0.2108, -0.2158, 0.2502,
      -0.2055, -0.0322, 0.1109,  0.1567,  -0.0729, 0.0899,  -0.2799, -0.1230, -0.0313, -0.1649, 0.0117,  0.0723,
      -0.2839, -0.2083, -0.0520, 0.3748,  0.0152,  0.1957,  0.1433,  -0.2944, 0.3573,  -0.0548, -0.1681, -0.0667};
  return v;
}

const std::vector<double>& wan22_latent_std() {
  static const std::vector<double> v{0.4765, 1.0364, 0.4514, 1.1677, 0.5313, 0.4990, 0.4818, 0.5013, 0.8158, 1.0344,
                                     0.5894, 1.0901, 0.6885, 0.6165, 0.8454, 0.4978, 0.5759, 0.3523, 0.7135, 0.6804,
                                     0.5833, 1.4146, 0.8986, 0.5659, 0.7069, 0.5338, 0.4889, 0.4917, 0.4069, 0.4999,
                                     0.6866, 0.4093, 0.5709, 0.6065, 0.6415, 0.4944, 0.5726, 1.2042, 0.5458, 1.6887,
                                     0.3971, 1.0600, 0.3943, 0.5537, 0.5444, 0.4089, 0.7468, 0.7744};
  return v;
}

const std::vector<double>& wan21_latent_mean() {
  static const std::vector<double> v{-0.7571, -0.7089, -0.9113, 0.1075,  -0.1745, 0.9653,  -0.1517, 1.5508,
                                     0.4134,  -0.0715, 0.5517,  -0.3632, -0.1922, -0.9497, 0.2503,  -0.2921};
  return v;
}

const std::vector<double>& wan21_latent_std() {
  static const std::vector<double> v{2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
                                     3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160};
  return v;
}

}  // namespace ws::models
