// SPDX-License-Identifier: Apache-2.0
#include "cli/verbs/sample_experts.h"

#include <tuple>

#include "core/error.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "models/wan_dit.h"
#include "models/wan_lora.h"

namespace ws::cli {
namespace {

using json = nlohmann::json;

// The weights' identity for the record: a Wan Studio checkpoint by path and step, small files
// by their SHA-256, large ones (released experts are tens of GB) by path and size.
json weights_identity(const std::string& path) {
  json j{{"path", path}};
  const std::string file = fs::is_dir(path) ? fs::join(path, "diffusion_pytorch_model.safetensors") : path;
  if (fs::exists(file) && fs::file_size(file) < (uint64_t{2} << 30)) j["sha256"] = sha256_file(file);
  return j;
}

// The base of a LoRA checkpoint's expert: its own folder (fresh experts), else the path its
// state.json names as the source.
std::string lora_checkpoint_base(const std::string& ckpt, bool high) {
  const std::string own = fs::join(ckpt, high ? "high_noise_transformer" : "low_noise_transformer");
  if (fs::is_dir(own)) return own;
  const std::string state = fs::join(ckpt, "trainer_state/state.json");
  if (fs::exists(state)) {
    const json j = json::parse(fs::read_file(state), nullptr, false);
    const char* tag = high ? "high" : "low";
    if (j.is_object() && j.contains("sources") && j["sources"].contains(tag) && j["sources"][tag].is_string() &&
        j["sources"][tag].get<std::string>() != "fresh")
      return j["sources"][tag].get<std::string>();
  }
  throw Error(ckpt + ": a LoRA checkpoint that names no base for the " + (high ? "high" : "low") +
              "-noise expert: give --high_noise_model and --low_noise_model");
}

}  // namespace

Experts load_experts(const Args& a) {
  Experts e;
  std::string high, low, single, lora_high = a.str("lora_high"), lora_low = a.str("lora_low");
  if (a.has("ckpt_dir")) {
    const std::string d = a.str("ckpt_dir");
    if (!fs::is_dir(d)) throw Error(d + ": not a folder");
    if (fs::exists(fs::join(d, "high_noise_lora.safetensors")) &&
        fs::exists(fs::join(d, "low_noise_lora.safetensors"))) {
      // A LoRA run's checkpoint: its adapters on their bases (flags may name other bases).
      high = a.has("high_noise_model") ? a.str("high_noise_model") : lora_checkpoint_base(d, true);
      low = a.has("low_noise_model") ? a.str("low_noise_model") : lora_checkpoint_base(d, false);
      if (lora_high.empty()) lora_high = fs::join(d, "high_noise_lora.safetensors");
      if (lora_low.empty()) lora_low = fs::join(d, "low_noise_lora.safetensors");
    }
    // A Wan Studio checkpoint, then the official layout, then one model.
    for (auto [h, l] : {std::pair<const char*, const char*>{"high_noise_transformer", "low_noise_transformer"},
                        {"high_noise_model", "low_noise_model"}}) {
      if (!high.empty()) break;
      if (fs::is_dir(fs::join(d, h)) && fs::is_dir(fs::join(d, l))) {
        high = fs::join(d, h);
        low = fs::join(d, l);
      }
    }
    if (high.empty()) {
      if (!fs::exists(fs::join(d, "config.json")))
        throw Error(
            d +
            ": neither an expert pair (high_noise_transformer/ + low_noise_transformer/, or high_noise_model/ + "
            "low_noise_model/) nor a model folder (config.json)");
      single = d;
    }
  } else if (a.has("high_noise_model") || a.has("low_noise_model")) {
    if (!a.has("high_noise_model") || !a.has("low_noise_model"))
      throw UsageError("give both --high_noise_model and --low_noise_model");
    high = a.str("high_noise_model");
    low = a.str("low_noise_model");
  } else if (a.has("model")) {
    single = a.str("model");
  } else {
    throw UsageError("no experts: --ckpt_dir, --high_noise_model with --low_noise_model, or --model");
  }
  // --lora_scale HIGH [LOW]: one value scales both adapters.
  double scale_high = 1.0, scale_low = 1.0;
  if (a.has("lora_scale")) {
    const auto v = a.strs("lora_scale");
    if (v.empty() || v.size() > 2) throw UsageError("--lora_scale takes one multiplier, or two: HIGH LOW");
    scale_high = parse_real(v[0], "lora_scale");
    scale_low = parse_real(v.back(), "lora_scale");
  }
  if (!single.empty()) {
    if (!lora_high.empty())
      throw UsageError("one model: give its adapter as --lora_low (the model is the low-noise slot)");
    e.models.low = models::load_wan_model(single);
    e.record = {{"model", weights_identity(single)}};
  } else {
    e.models.high = models::load_wan_model(high);
    e.models.low = models::load_wan_model(low);
    e.record = {{"high_noise_model", weights_identity(high)}, {"low_noise_model", weights_identity(low)}};
    const auto &h = e.models.high->config(), &l = e.models.low->config();
    if (h.in_dim != l.in_dim || h.out_dim != l.out_dim || h.text_dim != l.text_dim || h.model_type != l.model_type)
      throw Error("the high and low experts differ in model_type, in_dim, out_dim or text_dim");
  }
  for (auto [file, model, scale, key] : {std::make_tuple(lora_high, &e.models.high, scale_high, "lora_high"),
                                         std::make_tuple(lora_low, &e.models.low, scale_low, "lora_low")}) {
    if (file.empty()) continue;
    const models::WanLora lora = models::WanLora::load(file);
    try {
      lora.attach(**model, scale);
    } catch (const Error& err) {
      throw Error(file + ": " + err.what());
    }
    json id = weights_identity(file);
    id["scale"] = scale;
    id["rank"] = lora.rank();
    e.record[key] = id;
  }
  for (auto* m : {&e.models.high, &e.models.low})
    if (*m) (*m)->eval();
  return e;
}

}  // namespace ws::cli
