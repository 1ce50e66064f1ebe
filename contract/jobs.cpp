// SPDX-License-Identifier: Apache-2.0
#include "contract/jobs.h"

namespace ws::contract {

const std::vector<Job>& jobs() {
  static const std::vector<Job> table{
      {"upsampler", "train-upsampler", "Latent upsampler", true},
      {"experts", "train-experts", "Dual experts (Wan 2.2 DiT)", true},
      {"vae", "train-vae", "Wan2.2 VAE", false},
      // Not a training run: `wanstudio --batch` runs it (the studio's Captioner tab starts it itself).
      {"caption", "caption", "Caption suggestions", false},
  };
  return table;
}

std::string verb_for_job(std::string_view job) {
  for (const Job& j : jobs())
    if (job == j.job) return j.verb;
  return {};
}

std::string job_for_verb(std::string_view verb) {
  for (const Job& j : jobs())
    if (verb == j.verb) return j.job;
  return {};
}

}  // namespace ws::contract
