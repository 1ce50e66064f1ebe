// SPDX-License-Identifier: Apache-2.0
// WanModel (Wan 2.x DiT) configuration (docs/design/wan-dit.md §2 "Model config"): the official
// WanModel keys with their defaults, read from a fixture/model JSON, a diffusers
// `config.json` (WanTransformer3DModel) or a YAML file.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ws::models {

struct WanConfig {
  std::string model_type = "t2v";  // t2v, i2v, ti2v
  std::vector<int64_t> patch_size{1, 2, 2};
  int64_t text_len = 512;
  int64_t in_dim = 16;
  int64_t dim = 2048;
  int64_t ffn_dim = 8192;
  int64_t freq_dim = 256;
  int64_t text_dim = 4096;
  int64_t out_dim = 16;
  int64_t num_heads = 16;
  int64_t num_layers = 32;
  std::vector<int64_t> window_size{-1, -1};
  bool qk_norm = true;
  bool cross_attn_norm = true;
  double eps = 1e-6;

  int64_t head_dim() const { return dim / num_heads; }
  void validate(const std::string& source = "WanModel config") const;  // ws::Error listing every problem
  // Official keys (required: dim, ffn_dim, num_heads, num_layers, in_dim, out_dim); a diffusers
  // config (`_class_name: WanTransformer3DModel` or `num_attention_heads`) is mapped first.
  // Unknown keys are ignored; a known key of the wrong type is an error naming `source`.
  static WanConfig from_json(const nlohmann::json& j, const std::string& source = "config.json");
  nlohmann::json to_json() const;   // every official key (so tiny models reload)
  int64_t parameter_count() const;  // analytic, from the docs/design/wan-dit.md §2 shapes
};

// A config file: `.json` (official or diffusers keys) or `.yaml`/`.yml` (official keys at the top level).
WanConfig load_wan_config(const std::string& path);

}  // namespace ws::models
