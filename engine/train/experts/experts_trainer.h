// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine train-experts`: the Wan 2.2 dual-expert trainer (docs/design/dual-expert-training.md):
// config → run folder → loader → VAE latents (or the latent cache) + cached text embeddings →
// one routed ExpertStep update per optimizer step → events, TensorBoard, eval with per-sample
// routing, checkpoints with both experts, cancel and exact resume.
#pragma once
#include <string>
#include <vector>

namespace ws::train {

int run_train_experts(const std::vector<std::string>& argv);

}  // namespace ws::train
