// Wan2.2 VAE configuration (docs/design/wan22-vae.md §2): the `WanVAE_` constructor arguments,
// read from a model YAML, a fixture/`__metadata__` JSON or built in (the released widths).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ws::models {

struct Wan22VaeConfig {
  int64_t dim = 160;
  int64_t dec_dim = 256;
  int64_t z_dim = 48;
  std::vector<int64_t> dim_mult{1, 2, 4, 4};
  int64_t num_res_blocks = 2;
  std::vector<int64_t> attn_scales{};                        // unused by the network, kept for round trips
  std::vector<bool> temperal_downsample{false, true, true};  // sic, the reference's spelling
  double dropout = 0.0;  // inference ignores it (the VAE is frozen in every pipeline)

  // Encoder widths dim·[1, dim_mult...]; decoder widths dec_dim·[dim_mult.back(), reversed...].
  std::vector<int64_t> encoder_dims() const;
  std::vector<int64_t> decoder_dims() const;
  bool temporal_down(size_t stage) const;  // encoder stage i downsamples in time
  bool temporal_up(size_t stage) const;    // decoder stage i upsamples in time (reversed flags)
  int64_t spatial_factor() const;          // 16 for the released layout (patch 2 × 2^stages)
  int64_t temporal_factor() const;         // 4 for the released layout

  // Throws ws::Error (one line, every problem) when the network cannot be built.
  void validate(const std::string& source = "vae config") const;
  // Analytic parameter count (704,688,668 for the released widths).
  int64_t parameter_count() const;

  // Overlays the keys present in `j` onto `base`; unknown keys are ignored, a known key of the
  // wrong type is an error naming `source` and the key.
  static Wan22VaeConfig from_json(const nlohmann::json& j, const std::string& source, const Wan22VaeConfig& base);
  static Wan22VaeConfig from_json(const nlohmann::json& j, const std::string& source);  // over the released
  nlohmann::json to_json() const;
};

// The config keys of a model YAML as a JSON object: the top-level WanVAE_ keys, or the width
// keys of a VideoX-Fun `vae_kwargs` section. Throws ws::Error naming the file.
nlohmann::json read_vae_config_yaml(const std::string& path);

// The docs/design/wan22-vae.md §9 latent normalisation constants (z_dim 48), as the reference's fp32 tensors hold them.
const std::vector<double>& wan22_latent_mean();
const std::vector<double>& wan22_latent_std();

}  // namespace ws::models
