// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine train-vae`: trains a Wan2.2 VAE of the released architecture (normally the
// demo's tiny widths) on a dataset (docs/design/wan22-vae.md §12), in the training-run shell:
// events, checkpoints every checkpointing_steps, exact resume, and the final weights as one
// .safetensors every VAE option reads (save_path).
#pragma once
#include <string>
#include <vector>

namespace ws::train {

int run_train_vae(const std::vector<std::string>& argv);

}  // namespace ws::train
