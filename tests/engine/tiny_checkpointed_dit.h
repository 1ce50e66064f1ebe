// SPDX-License-Identifier: Apache-2.0
// The 4-block DiT of the dit_dev_a_high_t fixture, fresh and checkpointed, and its training
// samples: what the block-swap and checkpoint-mode tests train twins on.
#pragma once
#include <torch/torch.h>

#include <string>

#include "models/wan_dit.h"
#include "test_paths.h"
#include "train/experts/expert_step.h"

namespace ws::test {

constexpr int64_t kTinyDitLayers = 4;

// Same seed, same weights: twins differ only in what the caller sets afterwards.
inline models::WanModel tiny_checkpointed_dit() {
  auto cfg = models::load_wan_config(std::string(WS_TEST_DATA) + "/dit/dit_dev_a_high_t.json");
  cfg.num_layers = kTinyDitLayers;
  torch::manual_seed(5);
  models::WanModel m(cfg);
  {
    // The released init zeroes the head, which would leave the blocks without gradient at first.
    torch::NoGradGuard ng;
    m->head->head->weight.normal_(0.0, 0.02);
  }
  m->set_gradient_checkpointing(true);
  return m;
}

// A 12-token sample (48 channels, 2×4×6 latent) with a 5-row context.
inline train::ExpertStepInput tiny_dit_sample(int seed) {
  torch::manual_seed(seed);
  train::ExpertStepInput in;
  in.x0 = torch::randn({48, 2, 4, 6});
  in.noise = torch::randn({48, 2, 4, 6});
  in.sigma = 0.7f;
  in.t = 700;
  in.context = torch::randn({5, 32});
  in.seq_len = 12;
  return in;
}

}  // namespace ws::test
