// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine inspect WEIGHTS`: what a weights file holds, without running a model.
#include <algorithm>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "io/printable.h"
#include "io/weights.h"
#include "models/wan_lora.h"
#include "models/wan_vae_weights.h"
#include "cli/args.h"
#include "cli/verb.h"

namespace {

const char* format_name(ws::io::WeightsFormat f) {
  switch (f) {
    case ws::io::WeightsFormat::Safetensors: return "safetensors";
    case ws::io::WeightsFormat::ShardedSafetensors: return "sharded safetensors";
    case ws::io::WeightsFormat::Pth: return "pytorch checkpoint";
    case ws::io::WeightsFormat::ModelDir: return "model folder";
  }
  return "?";
}

// A Wan VAE's detected type and widths (docs/design/wan21-vae.md §7); null for anything else.
nlohmann::json vae_summary(const ws::io::StateDict& sd, const std::map<std::string, std::string>& metadata,
                           const std::string& path) {
  bool vae_like = false;
  for (const char* k :
       {"encoder.conv1.weight", "encoder.conv_in.weight", "model.encoder.conv1.weight", "module.encoder.conv1.weight"})
    vae_like = vae_like || sd.count(k);
  if (!vae_like) return nullptr;
  try {
    auto cfg = ws::models::resolve_vae_config(ws::models::official_vae_keys(sd, path), metadata,
                                              nlohmann::json::object(), path);
    nlohmann::json j = cfg.to_json();
    j["vae_type"] = ws::models::vae_type_name(cfg.type);
    j["spatial_factor"] = cfg.spatial_factor();
    return j;
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}};
  }
}

// A Wan LoRA's format, rank, alpha, targets and blocks (docs/design/lora.md); null otherwise.
nlohmann::json lora_summary(const ws::io::StateDict& sd, const std::string& path) {
  ws::models::LoraFormat format{};
  if (!ws::models::WanLora::looks_like_lora(sd, &format)) return nullptr;
  try {
    const auto lora = ws::models::WanLora::from_state_dict(sd, path);
    std::set<std::string> present;
    int64_t blocks = 0;
    for (const auto& e : lora.entries()) {
      const size_t dot = e.path.find('.', 7);
      present.insert(e.path.substr(dot + 1));
      blocks = std::max<int64_t>(blocks, std::stoll(e.path.substr(7, dot - 7)) + 1);
    }
    std::vector<std::string> targets;  // in the block's order
    for (const auto& t : ws::models::wan_lora_block_linears())
      if (present.count(t)) targets.push_back(t);
    return {{"format", format == ws::models::LoraFormat::Musubi ? "musubi-tuner / ComfyUI (lora_unet_*, alpha)"
                                                                : "PEFT / diffusers (lora_A, lora_B)"},
            {"adapters", lora.entries().size()},
            {"rank", lora.rank()},
            {"alpha", lora.alpha()},
            {"targets", targets},
            {"blocks", blocks},
            {"parameters", lora.parameter_count()}};
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", e.what()}};
  }
}

std::string human(double n, const char* unit) {
  const char* prefixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (n >= 1000 && i < 4) n /= 1000, ++i;
  char buf[32];
  std::snprintf(buf, sizeof buf, i ? "%.2f %s%s" : "%.0f %s%s", n, prefixes[i], unit);
  return buf;
}

int run_inspect(const std::vector<std::string>& argv) {
  ws::cli::Args args("inspect", "inspect PATH [--json]",
                     "Lists the tensors (name, dtype, shape) of a .safetensors file, a sharded\n"
                     "*.safetensors.index.json, a PyTorch .pth checkpoint or a diffusers-style model\n"
                     "folder, and their parameter count. Nothing in the file is executed.");
  args.positional("path", "weights file or model folder");
  args.flag("json", "print one JSON object instead of the table");
  if (!args.parse(argv)) return 0;
  const std::string path = args.pos(0);

  auto format = ws::io::detect_weights_format(path);
  ws::io::StateDict sd = ws::io::load_weights(path);
  auto metadata = ws::io::weights_metadata(path);
  int64_t params = 0, bytes = 0;
  for (const auto& kv : sd) {
    params += kv.second.numel();
    bytes += kv.second.numel() * static_cast<int64_t>(kv.second.element_size());
  }

  if (args.boolean("json")) {
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& [name, t] : sd)
      tensors.push_back({{"name", name},
                         {"dtype", ws::io::dtype_name(t.scalar_type())},
                         {"shape", std::vector<int64_t>(t.sizes().begin(), t.sizes().end())}});
    nlohmann::json out = {{"path", path},       {"format", format_name(format)},
                          {"tensors", tensors}, {"parameters", params},
                          {"bytes", bytes},     {"metadata", metadata}};
    if (auto vae = vae_summary(sd, metadata, path); !vae.is_null()) out["vae"] = vae;
    if (auto lora = lora_summary(sd, path); !lora.is_null()) out["lora"] = lora;
    // Names from the file may be invalid UTF-8: replace such bytes rather than fail.
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return 0;
  }

  // Names and metadata come from the file: escape control bytes so a hostile file cannot
  // drive the terminal.
  using ws::io::printable;
  std::printf("%s (%s)\n", printable(path, 4096).c_str(), format_name(format));
  for (const auto& [k, v] : metadata)
    std::printf("  metadata %s = %s\n", printable(k).c_str(), printable(v, 100).c_str());
  size_t width = 0;
  for (const auto& kv : sd) width = std::max(width, std::min<size_t>(printable(kv.first).size(), 72));
  for (const auto& [name, t] : sd) {
    std::printf("%-*s  %-4s  %s\n", static_cast<int>(width), printable(name).c_str(),
                ws::io::dtype_name(t.scalar_type()).c_str(),
                ws::io::shape_str({t.sizes().begin(), t.sizes().end()}).c_str());
  }
  std::printf("%zu tensors, %lld parameters (%s), %s\n", sd.size(), static_cast<long long>(params),
              human(static_cast<double>(params), "").c_str(), human(static_cast<double>(bytes), "B").c_str());
  if (auto vae = vae_summary(sd, metadata, path); !vae.is_null()) {
    if (vae.contains("error")) std::printf("VAE: %s\n", printable(vae["error"].get<std::string>(), 300).c_str());
    else
      std::printf("VAE: %s, dim %lld%s, z_dim %lld, spatial factor %lld\n", vae["vae_type"].get<std::string>().c_str(),
                  static_cast<long long>(vae["dim"].get<int64_t>()),
                  vae.contains("dec_dim") ? (", dec_dim " + std::to_string(vae["dec_dim"].get<int64_t>())).c_str() : "",
                  static_cast<long long>(vae["z_dim"].get<int64_t>()),
                  static_cast<long long>(vae["spatial_factor"].get<int64_t>()));
  }
  if (auto lora = lora_summary(sd, path); !lora.is_null()) {
    if (lora.contains("error")) {
      std::printf("LoRA: %s\n", printable(lora["error"].get<std::string>(), 300).c_str());
    } else {
      std::string targets;
      for (const auto& t : lora["targets"]) targets += (targets.empty() ? "" : ", ") + t.get<std::string>();
      std::printf("LoRA: %s; %lld adapters on %lld blocks (%s), rank %lld, alpha %g\n",
                  lora["format"].get<std::string>().c_str(), static_cast<long long>(lora["adapters"].get<int64_t>()),
                  static_cast<long long>(lora["blocks"].get<int64_t>()), targets.c_str(),
                  static_cast<long long>(lora["rank"].get<int64_t>()), lora["alpha"].get<double>());
    }
  }
  return 0;
}

}  // namespace

WS_VERB("inspect", "tensor names, dtypes, shapes and parameter count of weights", &run_inspect);
