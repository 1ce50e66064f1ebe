// SPDX-License-Identifier: Apache-2.0
// Loading WanModel weights by official key names; diffusers-named checkpoints are renamed
// first with the spec's table (docs/design/wan-dit.md §2).
#include <regex>

#include "core/error.h"
#include "core/fs.h"
#include "io/weights.h"
#include "models/wan_dit.h"

namespace ws::models {

namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// One diffusers key -> its official name (unknown keys pass through and fail the strict load).
std::string official_key(const std::string& key) {
  static const std::vector<std::pair<std::string, std::string>> top = {
      {"condition_embedder.time_embedder.linear_1.", "time_embedding.0."},
      {"condition_embedder.time_embedder.linear_2.", "time_embedding.2."},
      {"condition_embedder.time_proj.", "time_projection.1."},
      {"condition_embedder.text_embedder.linear_1.", "text_embedding.0."},
      {"condition_embedder.text_embedder.linear_2.", "text_embedding.2."},
      {"proj_out.", "head.head."},
  };
  if (key == "scale_shift_table") return "head.modulation";
  for (const auto& [from, to] : top)
    if (starts_with(key, from)) return to + key.substr(from.size());
  static const std::regex block(R"(^blocks\.(\d+)\.(.+)$)");
  std::smatch m;
  if (!std::regex_match(key, m, block)) return key;
  const std::string pre = "blocks." + m[1].str() + ".";
  const std::string rest = m[2].str();
  static const std::vector<std::pair<std::string, std::string>> inner = {
      {"attn1.to_q.", "self_attn.q."},
      {"attn1.to_k.", "self_attn.k."},
      {"attn1.to_v.", "self_attn.v."},
      {"attn1.to_out.0.", "self_attn.o."},
      {"attn1.norm_q.", "self_attn.norm_q."},
      {"attn1.norm_k.", "self_attn.norm_k."},
      {"attn2.to_q.", "cross_attn.q."},
      {"attn2.to_k.", "cross_attn.k."},
      {"attn2.to_v.", "cross_attn.v."},
      {"attn2.to_out.0.", "cross_attn.o."},
      {"attn2.norm_q.", "cross_attn.norm_q."},
      {"attn2.norm_k.", "cross_attn.norm_k."},
      {"ffn.net.0.proj.", "ffn.0."},
      {"ffn.net.2.", "ffn.2."},
      // Diffusers norm2 is the affine cross-attention norm (official norm3).
      {"norm2.", "norm3."},
  };
  if (rest == "scale_shift_table") return pre + "modulation";
  for (const auto& [from, to] : inner)
    if (starts_with(rest, from)) return pre + to + rest.substr(from.size());
  return key;
}

}  // namespace

bool wan_is_diffusers_state_dict(const io::StateDict& sd) {
  for (const auto& kv : sd)
    if (starts_with(kv.first, "condition_embedder.") || kv.first == "scale_shift_table" ||
        starts_with(kv.first, "proj_out."))
      return true;
  return false;
}

io::StateDict wan_official_keys(const io::StateDict& sd) {
  if (!wan_is_diffusers_state_dict(sd)) return sd;
  io::StateDict out;
  for (const auto& [k, v] : sd) {
    auto name = official_key(k);
    if (out.count(name)) throw Error("diffusers key '" + k + "' maps to '" + name + "', which is already present");
    out[name] = v;
  }
  return out;
}

WanModel load_wan_model(const WanConfig& cfg, const std::string& weights_path) {
  auto sd = wan_official_keys(io::load_weights(weights_path));
  WanModel model(cfg);
  io::load_state_dict(*model, sd, io::LoadMode::Strict, weights_path);
  return model;
}

WanModel load_wan_model(const std::string& path) {
  const std::string dir = fs::is_dir(path) ? path : fs::dirname(path);
  const std::string config_path = fs::join(dir, "config.json");
  if (!fs::exists(config_path)) throw Error(path + ": no config.json beside the WanModel weights");
  return load_wan_model(load_wan_config(config_path), path);
}

}  // namespace ws::models
