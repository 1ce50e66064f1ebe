// SPDX-License-Identifier: Apache-2.0
// What a VAE weights file holds (docs/design/wan21-vae.md §7): which of the two Wan VAEs, by the
// tensors' shapes and key layout; the diffusers names of the Wan2.1 VAE mapped to the official
// ones; and the widths the shapes imply, so a tiny VAE without metadata loads.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "io/state_dict.h"
#include "models/wan_vae_config.h"

namespace ws::models {

// Official key names: a `model.` / `module.` prefix on every key is dropped, and a diffusers-layout
// Wan2.1 VAE (`encoder.conv_in.weight`, `quant_conv.weight`) is renamed. A diffusers-layout
// Wan2.2 VAE is a ws::Error.
io::StateDict official_vae_keys(io::StateDict sd, const std::string& source);

struct VaeDetection {
  VaeType type;
  std::string evidence;  // "encoder.conv1.weight is [160,12,3,3,3]: a Wan2.2 VAE"
};
// From official keys; anything that is not a Wan VAE is a ws::Error naming `source`.
VaeDetection detect_vae_type(const io::StateDict& sd, const std::string& source);

// The declared type: `config["vae_type"]` (a verb flag, run YAML or vae_kwargs; "auto" or absent
// means none), else the weights' `__metadata__` vae_type. Then the detection must agree.
// Widths: the released ones of the type, overlaid by the shapes (dim, z_dim, wan2.2 dec_dim),
// then the metadata's `config`, then the width keys of `config`.
WanVaeConfig resolve_vae_config(const io::StateDict& sd, const std::map<std::string, std::string>& metadata,
                                const nlohmann::json& config, const std::string& source);

}  // namespace ws::models
