// SPDX-License-Identifier: Apache-2.0
#include "models/wan_dit_config.h"

#include <yaml-cpp/yaml.h>

#include "core/json_depth.h"
#include "core/error.h"
#include "core/yaml_limits.h"
#include "io/json_fields.h"
#include "io/model_yaml.h"
#include "core/fs.h"

namespace ws::models {
using nlohmann::json;

namespace {

// The spec's diffusers -> official config mapping; keys that keep their names pass through.
json from_diffusers(const json& j, const std::string& source) {
  json o = json::object();
  for (const char* k : {"ffn_dim", "freq_dim", "text_dim", "num_layers", "eps", "patch_size", "cross_attn_norm",
                        "text_len", "model_type", "window_size"})
    if (j.contains(k)) o[k] = j[k];
  if (j.contains("num_attention_heads")) o["num_heads"] = j["num_attention_heads"];
  if (j.contains("num_attention_heads") && j.contains("attention_head_dim")) {
    if (!j["num_attention_heads"].is_number_integer() || !j["attention_head_dim"].is_number_integer())
      throw Error(source + ": 'num_attention_heads' and 'attention_head_dim' must be integers");
    o["dim"] = j["num_attention_heads"].get<int64_t>() * j["attention_head_dim"].get<int64_t>();
  }
  if (j.contains("in_channels")) o["in_dim"] = j["in_channels"];
  if (j.contains("out_channels")) o["out_dim"] = j["out_channels"];
  if (j.contains("qk_norm")) {
    const auto& q = j["qk_norm"];
    if (q.is_null()) o["qk_norm"] = false;
    else if (q.is_string()) {
      if (q.get<std::string>() != "rms_norm_across_heads")
        throw Error(source + ": qk_norm '" + q.get<std::string>() + "' is not supported (rms_norm_across_heads only)");
      o["qk_norm"] = true;
    } else {
      o["qk_norm"] = q;
    }
  }
  if (j.contains("rope_max_seq_len") && j["rope_max_seq_len"] != json(1024))
    throw Error(source + ": rope_max_seq_len must be 1024");
  for (const char* k : {"image_dim", "added_kv_proj_dim"})
    if (j.contains(k) && !j[k].is_null())
      throw Error(source + ": '" + std::string(k) + "' is set (Wan 2.1 I2V image branch); not supported");
  return o;
}

}  // namespace

void WanConfig::validate(const std::string& source) const {
  std::vector<std::string> p;
  if (model_type != "t2v" && model_type != "i2v" && model_type != "ti2v")
    p.push_back("model_type must be t2v, i2v or ti2v");
  if (patch_size != std::vector<int64_t>{1, 2, 2}) p.push_back("patch_size must be [1, 2, 2]");
  if (window_size != std::vector<int64_t>{-1, -1}) p.push_back("window_size must be [-1, -1] (global attention)");
  for (auto [name, v] : {std::pair<const char*, int64_t>{"text_len", text_len},
                         {"in_dim", in_dim},
                         {"dim", dim},
                         {"ffn_dim", ffn_dim},
                         {"freq_dim", freq_dim},
                         {"text_dim", text_dim},
                         {"out_dim", out_dim},
                         {"num_heads", num_heads},
                         {"num_layers", num_layers}})
    if (v <= 0) p.push_back(std::string(name) + " must be positive");
  if (freq_dim % 2) p.push_back("freq_dim must be even");
  if (num_heads > 0 && dim % num_heads) p.push_back("dim must be divisible by num_heads");
  else if (num_heads > 0 && (dim / num_heads) % 2) p.push_back("head_dim must be even (RoPE pairs)");
  if (!(eps > 0)) p.push_back("eps must be positive");
  if (p.empty()) return;
  std::string msg = source + ": ";
  for (size_t i = 0; i < p.size(); ++i) msg += (i ? "; " : "") + p[i];
  throw Error(msg);
}

WanConfig WanConfig::from_json(const json& in, const std::string& source) {
  if (!in.is_object()) throw Error(source + ": expected a JSON object with the WanModel keys");
  const bool diffusers =
      in.value("_class_name", std::string()) == "WanTransformer3DModel" || in.contains("num_attention_heads");
  const json j = diffusers ? from_diffusers(in, source) : in;
  WanConfig c;
  const io::JsonFields f(j, source);
  f.get("model_type", c.model_type);
  f.get("patch_size", c.patch_size);
  for (const char* k : {"in_dim", "dim", "ffn_dim", "out_dim", "num_heads", "num_layers"}) f.require(k);
  f.get("text_len", c.text_len);
  f.get("in_dim", c.in_dim);
  f.get("dim", c.dim);
  f.get("ffn_dim", c.ffn_dim);
  f.get("freq_dim", c.freq_dim);
  f.get("text_dim", c.text_dim);
  f.get("out_dim", c.out_dim);
  f.get("num_heads", c.num_heads);
  f.get("num_layers", c.num_layers);
  f.get("window_size", c.window_size);
  f.get("qk_norm", c.qk_norm);
  f.get("cross_attn_norm", c.cross_attn_norm);
  f.get("eps", c.eps);
  c.validate(source);
  return c;
}

json WanConfig::to_json() const {
  return json{{"_class_name", "WanModel"},
              {"model_type", model_type},
              {"patch_size", patch_size},
              {"text_len", text_len},
              {"in_dim", in_dim},
              {"dim", dim},
              {"ffn_dim", ffn_dim},
              {"freq_dim", freq_dim},
              {"text_dim", text_dim},
              {"out_dim", out_dim},
              {"num_heads", num_heads},
              {"num_layers", num_layers},
              {"window_size", window_size},
              {"qk_norm", qk_norm},
              {"cross_attn_norm", cross_attn_norm},
              {"eps", eps}};
}

int64_t WanConfig::parameter_count() const {
  const int64_t D = dim, P = patch_size[0] * patch_size[1] * patch_size[2];
  auto lin = [](int64_t i, int64_t o) { return i * o + o; };
  int64_t n = D * in_dim * P + D;                     // patch_embedding
  n += lin(text_dim, D) + lin(D, D);                  // text_embedding
  n += lin(freq_dim, D) + lin(D, D) + lin(D, 6 * D);  // time_embedding, time_projection
  int64_t attn = 4 * lin(D, D) + (qk_norm ? 2 * D : 0);
  int64_t block = 2 * attn + (cross_attn_norm ? 2 * D : 0) + lin(D, ffn_dim) + lin(ffn_dim, D) + 6 * D;
  n += num_layers * block;
  n += lin(D, out_dim * P) + 2 * D;  // head
  return n;
}

WanConfig load_wan_config(const std::string& path) {
  if (!fs::exists(path)) throw Error(path + ": no such config file");
  const std::string text = fs::read_file(path);
  const bool yaml =
      path.size() > 5 && (path.substr(path.size() - 5) == ".yaml" || path.substr(path.size() - 4) == ".yml");
  json j;
  if (yaml) {
    try {
      YAML::Node root = YAML::Load(text);
      check_yaml_size(root, path);
      j = io::yaml_node_to_json(root);
    } catch (const YAML::Exception& e) {
      throw Error(path + ": not valid YAML (line " + std::to_string(e.mark.line + 1) + "): " + e.msg);
    }
  } else {
    try {
      check_json_nesting(text, path);
      j = json::parse(text);
    } catch (const json::exception& e) {
      throw Error(path + ": invalid JSON (" + std::string(e.what()) + ")");
    }
  }
  // A fixture JSON keeps the model config under `config`.
  if (j.is_object() && j.contains("config") && j["config"].is_object()) j = j["config"];
  return WanConfig::from_json(j, path);
}

}  // namespace ws::models
