// SPDX-License-Identifier: Apache-2.0
// Validation videos (docs/design/upsampler-training.md §11): the first 4k+1 frames of a video, squared to
// S' = floor(S/A)·A, encoded at high and low resolution, the low-res latent upsampled, and
// the three decodes written as MP4s with PSNR against the high-res decode, and against the
// source clip (where the high-res decode's own PSNR is the ceiling).
#pragma once
#include <cstdint>
#include <string>

#include "contract/events.h"
#include "models/latent_upsampler.h"
#include "models/wan_vae.h"

namespace ws::train {

struct ValidationSettings {
  int64_t sample_size = 640;  // S
  int64_t n_frames = 81;      // N
  double fps = 24.0;
};

struct ValidationResult {
  std::string lowres, upsampled, highres;  // run-relative paths
  double psnr = 0, psnr_lowres = 0, latent_mse = 0;
  // Against the source clip squared to the sample size: the high-res decode (the ceiling:
  // the VAE's own loss), the upsampled decode and the bilinear baseline.
  double psnr_ceiling = 0, psnr_source = 0, psnr_lowres_source = 0;
  int64_t frames = 0, size = 0, size_lr = 0;
};

// PSNR of two clips in [-1, 1] (mapped to [0, 1]), MSE over every element, capped at 100 dB.
double clip_psnr(const torch::Tensor& a, const torch::Tensor& b);

// Writes sample/step{step}_val{index}_{lowres,upsampled,highres}.mp4 under `run_dir`.
// Throws ws::Error on unreadable input (the caller logs it and trains on).
ValidationResult run_validation(const std::string& video, int64_t index, int64_t step, models::WanVae& vae,
                                models::LatentUpsampler& model, const ValidationSettings& settings,
                                const std::string& run_dir);

// The `validation` event of a result (what train-upsampler and `upsample` both emit).
contract::ValidationEvent validation_event(const ValidationResult& r, int64_t step, int64_t index,
                                           const std::string& source);

}  // namespace ws::train
