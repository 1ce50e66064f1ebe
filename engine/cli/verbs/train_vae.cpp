// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine train-vae --config RUN.yaml`: the VAE trainer (train/vae/vae_run.h).
#include "cli/verb.h"
#include "train/vae/vae_run.h"

namespace ws::cli {

WS_VERB("train-vae", "train a Wan2.2 VAE (the demo's tiny one) on a dataset", &train::run_train_vae);

}  // namespace ws::cli
