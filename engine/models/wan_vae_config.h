// SPDX-License-Identifier: Apache-2.0
// Wan VAE configuration (docs/design/wan22-vae.md §2, docs/design/wan21-vae.md §2): the
// `WanVAE_` constructor arguments of either VAE type, read from a model YAML, a
// fixture/`__metadata__` JSON, the weights' shapes, or built in (the released widths).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ws::models {

// wan2.2: 48 channels, patchify 2, stage shortcuts (Wan2.2_VAE.pth, TI2V-5B and the upsampler).
// wan2.1: 16 channels, no patchify, flat stages (Wan2.1_VAE.pth, the A14B experts).
enum class VaeType { Wan22, Wan21 };
const char* vae_type_name(VaeType t);  // "wan2.2" / "wan2.1"
// "wan2.1" / "wan2.2", and VideoX-Fun's class names AutoencoderKLWan / AutoencoderKLWan3_8.
// Anything else is a ws::Error listing the accepted names.
VaeType parse_vae_type(const std::string& name, const std::string& source);

struct WanVaeConfig {
  VaeType type = VaeType::Wan22;
  int64_t dim = 160;
  int64_t dec_dim = 256;  // wan2.2 only: wan2.1 decodes at `dim`
  int64_t z_dim = 48;
  std::vector<int64_t> dim_mult{1, 2, 4, 4};
  int64_t num_res_blocks = 2;
  std::vector<int64_t> attn_scales{};                        // unused by the network, kept for round trips
  std::vector<bool> temperal_downsample{false, true, true};  // sic, the reference's spelling
  double dropout = 0.0;  // inference ignores it (the VAE is frozen in every pipeline)

  // The released configuration of a type (docs/design/wan21-vae.md §2 for wan2.1).
  static WanVaeConfig released(VaeType type);
  bool wan21() const { return type == VaeType::Wan21; }

  // Encoder widths dim·[1, dim_mult...]; decoder widths w·[dim_mult.back(), reversed...] with
  // w = dec_dim (wan2.2) or dim (wan2.1).
  std::vector<int64_t> encoder_dims() const;
  std::vector<int64_t> decoder_dims() const;
  // Input channels of decoder stage i: wan2.1's upsampling convs halve the width before it.
  int64_t decoder_stage_in(size_t stage) const;
  int64_t encoder_in_channels() const { return wan21() ? 3 : 12; }  // RGB, or patchified RGB
  int64_t decoder_out_channels() const { return wan21() ? 3 : 12; }
  bool temporal_down(size_t stage) const;  // encoder stage i downsamples in time
  bool temporal_up(size_t stage) const;    // decoder stage i upsamples in time (reversed flags)
  int64_t spatial_factor() const;          // 16 for wan2.2 (patch 2 × 2^3), 8 for wan2.1
  int64_t temporal_factor() const;         // 4 for the released layout

  // Throws ws::Error (one line, every problem) when the network cannot be built.
  void validate(const std::string& source = "vae config") const;
  // Analytic parameter count (704,688,668 for the released wan2.2, 126,892,531 for wan2.1).
  int64_t parameter_count() const;

  // Overlays the keys present in `j` onto `base` (whose type stays); unknown keys are ignored, a
  // known key of the wrong type, or `dec_dim` for wan2.1, is an error naming `source` and the key.
  static WanVaeConfig from_json(const nlohmann::json& j, const std::string& source, const WanVaeConfig& base);
  static WanVaeConfig from_json(const nlohmann::json& j, const std::string& source);  // over the released
  nlohmann::json to_json() const;
};

// The config keys of a model YAML as a JSON object: the top-level WanVAE_ keys, or the width
// keys of a VideoX-Fun `vae_kwargs` section, plus its `vae_type` when it has one. Throws
// ws::Error naming the file.
nlohmann::json read_vae_config_yaml(const std::string& path);

// The docs/design/wan22-vae.md §9 latent normalisation constants (z_dim 48), as the reference's fp32 tensors hold them.
const std::vector<double>& wan22_latent_mean();
const std::vector<double>& wan22_latent_std();
// docs/design/wan21-vae.md §6 (z_dim 16).
const std::vector<double>& wan21_latent_mean();
const std::vector<double>& wan21_latent_std();

}  // namespace ws::models
