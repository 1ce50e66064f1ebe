// SPDX-License-Identifier: Apache-2.0
// `encode-latents` (docs/design/dual-expert-training.md §9): every row of a metadata.json through
// the VAE once, at the bucket size and frame window a latent-cached training run would draw
// (or from frame 0), into one latent file per row plus a metadata.json whose rows name them
// (`latent_path`). train-experts reads that metadata as it reads any other: no VAE, no decoding.
// A file is written under a temporary name and renamed; a re-run keeps every file whose
// recorded inputs (VAE hash, options, source file) still match, so a killed run resumes.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/wan_vae.h"

namespace ws::train {

struct LatentEncodeOptions {
  std::string metadata, data_dir;  // data_dir empty: the metadata's folder
  std::string out_dir;             // <out_dir>/metadata.json and <out_dir>/latents/row<N>.safetensors
  std::string vae_path;
  nlohmann::json vae_config = nlohmann::json::object();  // widths and vae_type, as for train-experts
  models::WanVaeOptions vae;
  // The training options that decide the clip (train-experts' names in brackets).
  uint64_t seed = 42;         // [seed] picks each row's frame window
  int64_t sample_size = 512;  // [video_sample_size]
  int64_t n_frames = 81;      // [video_sample_n_frames]
  int64_t stride = 2;         // [video_sample_stride]
  bool enable_bucket = true;  // [enable_bucket]
  bool from_start = false;    // every clip from frame 0 instead of the row's drawn window
  bool i2v = false;           // also `y` = [mask(4), image latent] for i2v experts
};

struct LatentEncodeReport {
  int64_t rows = 0;                 // usable rows
  int64_t encoded = 0;              // files written by this run
  int64_t existing = 0;             // files a previous run wrote, kept
  std::vector<std::string> failed;  // "row 3 (videos/x.mp4): reason", unusable rows included
  bool cancelled = false;
  std::string metadata_out;  // written only when every row is done
  std::string vae_type;
  int64_t z_dim = 0;
};

// progress(done, total) after each row; cancel() is asked between rows.
LatentEncodeReport encode_latent_rows(const LatentEncodeOptions& o,
                                      const std::function<void(int64_t, int64_t)>& progress,
                                      const std::function<bool()>& cancel);

}  // namespace ws::train
