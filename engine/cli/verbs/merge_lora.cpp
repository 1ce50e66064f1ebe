// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine merge-lora`: folds a LoRA into an expert's weights (W += m·(α/r)·U·D) and
// writes a model folder any loader reads (config.json + diffusion_pytorch_model.safetensors).
//   merge-lora --model EXPERT_DIR --lora FILE [--scale M] --out DIR

#include "cli/args.h"
#include "cli/verb.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "io/state_dict.h"
#include "io/weights.h"
#include "models/wan_dit.h"
#include "models/wan_lora.h"

namespace ws::cli {
namespace {

int run_merge_lora(const std::vector<std::string>& argv) {
  Args a("merge-lora", "merge-lora --model DIR --lora FILE [--scale M] [--dtype fp32|bf16] --out DIR",
         "Folds a LoRA (musubi-tuner/ComfyUI `lora_unet_*` keys with alpha, or PEFT `lora_A/lora_B`) into\n"
         "an expert's weights and writes the merged expert as a model folder. The merged expert computes\n"
         "what the expert with the adapter attached computes.");
  a.value(
      "model", "DIR",
      "the expert: a model folder (config.json + weights), e.g. RUN/checkpoint-N/high_noise_transformer (required)");
  a.value("lora", "FILE", "the adapter (required)");
  a.value("scale", "M", "multiplier (default 1)", real_range(-100, 100));
  a.value("dtype", "fp32|bf16", "dtype of the written weights (default: the model's)");
  a.value("out", "DIR", "the merged model folder (required; refused if it holds a model)");
  if (!a.parse(argv)) return 0;
  for (const char* k : {"model", "lora", "out"})
    if (!a.has(k)) throw UsageError(std::string("--") + k + " is required");
  const std::string out = a.str("out");
  if (fs::exists(fs::join(out, "config.json")))
    throw Error(out + ": already holds a model (config.json); choose another --out");
  const std::string dtype = a.str("dtype");
  if (!dtype.empty() && dtype != "fp32" && dtype != "bf16") throw UsageError("--dtype must be fp32 or bf16");
  const double scale = a.real("scale", 1.0);  // NaN and inf refused before any weight is read
  models::WanModel model = models::load_wan_model(a.str("model"));
  const models::WanLora lora = models::WanLora::load(a.str("lora"));
  try {
    lora.merge_into(*model, scale);
  } catch (const Error& e) {
    throw Error(a.str("lora") + ": " + e.what());
  }
  io::StateDict sd = io::module_state_dict(*model);
  if (dtype == "bf16")
    for (auto& [k, v] : sd) v = v.to(torch::kBFloat16);
  nlohmann::json cfg = model->config().to_json();
  cfg["_class_name"] = "WanModel";
  io::write_model_dir(out, cfg, sd);
  ws::log::info("merged {} adapters (rank {}, alpha {}) at scale {} into {}", lora.entries().size(), lora.rank(),
                lora.alpha(), scale, out);
  return 0;
}

}  // namespace

WS_VERB("merge-lora", "fold a LoRA into an expert's weights: a merged model folder", &run_merge_lora);

}  // namespace ws::cli
