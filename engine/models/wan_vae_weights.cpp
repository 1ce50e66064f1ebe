// SPDX-License-Identifier: Apache-2.0
#include "models/wan_vae_weights.h"

#include <vector>

#include "core/error.h"
#include "core/json_depth.h"

namespace ws::models {
namespace {

std::vector<std::string> split(const std::string& key) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
    out.push_back(key.substr(start, dot - start));
  out.push_back(key.substr(start));
  return out;
}

std::string join(const std::vector<std::string>& parts, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < parts.size(); ++i) s += (s.empty() ? "" : ".") + parts[i];
  return s;
}

// Inside a residual block: diffusers' norm1/conv1/norm2/conv2/conv_shortcut are the reference's
// residual.0/2/3/6 and shortcut; resampler and attention names are the same in both.
std::string block_tail(const std::vector<std::string>& p, size_t from) {
  static const std::map<std::string, std::string> kNames{{"norm1", "residual.0"},
                                                         {"conv1", "residual.2"},
                                                         {"norm2", "residual.3"},
                                                         {"conv2", "residual.6"},
                                                         {"conv_shortcut", "shortcut"}};
  if (from >= p.size()) return "";
  auto it = kNames.find(p[from]);
  return (it == kNames.end() ? p[from] : it->second) + (from + 1 < p.size() ? "." + join(p, from + 1) : "");
}

int64_t index_of(const std::string& s, const std::string& key) {
  try {
    size_t used = 0;
    int64_t v = std::stoll(s, &used);
    if (used == s.size() && v >= 0) return v;
  } catch (const std::exception&) {
  }
  throw Error("diffusers VAE key " + key + ": '" + s + "' is not an index");
}

// docs/design/wan21-vae.md §3.3 (diffusers' convert_vae read backwards).
std::string from_diffusers(const std::string& key) {
  auto p = split(key);
  if (p[0] == "quant_conv") return "conv1." + join(p, 1);
  if (p[0] == "post_quant_conv") return "conv2." + join(p, 1);
  if ((p[0] != "encoder" && p[0] != "decoder") || p.size() < 3) return key;
  const std::string& side = p[0];
  if (p[1] == "conv_in") return side + ".conv1." + join(p, 2);
  if (p[1] == "norm_out") return side + ".head.0." + join(p, 2);
  if (p[1] == "conv_out") return side + ".head.2." + join(p, 2);
  if (p[1] == "down_blocks" && p.size() > 3) return side + ".downsamples." + p[2] + "." + block_tail(p, 3);
  if (p[1] == "mid_block" && p.size() > 4) {
    if (p[2] == "attentions") return side + ".middle.1." + join(p, 4);
    if (p[2] == "resnets") return side + ".middle." + (index_of(p[3], key) == 0 ? "0" : "2") + "." + block_tail(p, 4);
  }
  if (p[1] == "up_blocks" && p.size() > 5) {
    // Four layers per decoder stage: three residual blocks, then the upsampler.
    const int64_t b = index_of(p[2], key);
    if (p[3] == "resnets")
      return side + ".upsamples." + std::to_string(4 * b + index_of(p[4], key)) + "." + block_tail(p, 5);
    if (p[3] == "upsamplers") return side + ".upsamples." + std::to_string(4 * b + 3) + "." + join(p, 5);
  }
  return key;
}

std::string shape_of(const torch::Tensor& t) { return io::shape_str(t.sizes().vec()); }

}  // namespace

io::StateDict official_vae_keys(io::StateDict sd, const std::string& source) {
  for (const char* prefix : {"model.", "module."}) {
    const std::string p = prefix;
    bool all = !sd.empty();
    for (const auto& kv : sd) all = all && kv.first.compare(0, p.size(), p) == 0;
    if (!all) continue;
    io::StateDict out;
    for (auto& kv : sd) out[kv.first.substr(p.size())] = kv.second;
    sd = std::move(out);
  }
  auto conv_in = sd.find("encoder.conv_in.weight");
  if (conv_in == sd.end() && !sd.count("quant_conv.weight")) return sd;
  if (conv_in == sd.end() || conv_in->second.dim() != 5 || conv_in->second.size(1) != 3)
    throw Error(source + ": a diffusers-layout VAE that is not the Wan2.1 VAE (encoder.conv_in.weight " +
                (conv_in == sd.end() ? std::string("missing") : shape_of(conv_in->second)) +
                "); only the Wan2.1 VAE's diffusers names are mapped");
  io::StateDict out;
  for (auto& kv : sd) {
    std::string name = from_diffusers(kv.first);
    if (out.count(name)) throw Error(source + ": two diffusers keys map to " + name);
    out[name] = kv.second;
  }
  return out;
}

VaeDetection detect_vae_type(const io::StateDict& sd, const std::string& source) {
  auto it = sd.find("encoder.conv1.weight");
  if (it == sd.end() || !it->second.defined() || it->second.dim() != 5)
    throw Error(
        source + ": not a Wan VAE: " +
        (it == sd.end() ? std::string("no encoder.conv1.weight") : "encoder.conv1.weight is " + shape_of(it->second)));
  const int64_t in = it->second.size(1);
  const std::string evidence = "encoder.conv1.weight is " + shape_of(it->second);
  if (in != 3 && in != 12) throw Error(source + ": not a Wan VAE: " + evidence);
  const VaeType type = in == 3 ? VaeType::Wan21 : VaeType::Wan22;
  // The key layout must say the same: flat stages (wan2.1) or stage blocks (wan2.2).
  const char* layout = type == VaeType::Wan21 ? "encoder.downsamples.0.residual.0.gamma"
                                              : "encoder.downsamples.0.downsamples.0.residual.0.gamma";
  if (!sd.count(layout))
    throw Error(source + ": not a Wan VAE: " + evidence + " (a " + (type == VaeType::Wan21 ? "Wan2.1" : "Wan2.2") +
                " input) but there is no " + layout);
  return {type, evidence + (type == VaeType::Wan21 ? ": a Wan2.1 VAE" : ": a Wan2.2 VAE")};
}

WanVaeConfig resolve_vae_config(const io::StateDict& sd, const std::map<std::string, std::string>& metadata,
                                const nlohmann::json& config, const std::string& source) {
  const VaeDetection found = detect_vae_type(sd, source);
  std::string declared, declared_by;
  if (config.is_object() && config.contains("vae_type") && config["vae_type"].is_string() &&
      config["vae_type"].get<std::string>() != "auto") {
    declared = config["vae_type"].get<std::string>();
    declared_by = "vae_type";
  } else if (auto m = metadata.find("vae_type"); m != metadata.end() && m->second != "auto") {
    declared = m->second;
    declared_by = "__metadata__ vae_type";
  }
  if (!declared.empty()) {
    const VaeType t = parse_vae_type(declared, source);
    if (t != found.type) throw Error(source + ": " + declared_by + " " + vae_type_name(t) + ", but " + found.evidence);
  }
  WanVaeConfig c = WanVaeConfig::released(found.type);
  c.dim = sd.at("encoder.conv1.weight").size(0);
  if (auto z = sd.find("conv2.weight"); z != sd.end() && z->second.dim() == 5) c.z_dim = z->second.size(0);
  if (found.type == VaeType::Wan22)
    if (auto h = sd.find("decoder.head.2.weight"); h != sd.end() && h->second.dim() == 5) c.dec_dim = h->second.size(1);
  if (auto it = metadata.find("config"); it != metadata.end()) {
    nlohmann::json j;
    try {
      check_json_nesting(it->second, source + " (__metadata__ config)");
      j = nlohmann::json::parse(it->second);
    } catch (const nlohmann::json::exception&) {
      throw Error(source + ": __metadata__ 'config' is not JSON");
    }
    c = WanVaeConfig::from_json(j, source + " (__metadata__ config)", c);
  }
  return WanVaeConfig::from_json(config.is_null() ? nlohmann::json::object() : config, "VAE config", c);
}

}  // namespace ws::models
