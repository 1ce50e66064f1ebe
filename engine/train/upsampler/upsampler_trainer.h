// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine train-upsampler`: the latent upsampler trainer (docs/design/upsampler-training.md).
// Config → run directory → loader → frozen VAE encodes → UpsamplerUpdater (the same step the
// parity verb feeds) → events, TensorBoard, checkpoints, validation; exact resume and cancel.
#pragma once
#include <string>
#include <vector>

namespace ws::train {

// The verb: returns the worker exit code (0 completed, 1 failed, 130 cancelled).
int run_train_upsampler(const std::vector<std::string>& argv);

}  // namespace ws::train
