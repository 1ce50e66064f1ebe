// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine train-experts --config RUN.yaml | option flags`.
#include "cli/verb.h"
#include "train/experts/experts_trainer.h"

namespace ws::cli {

WS_VERB("train-experts", "train the Wan 2.2 high- and low-noise experts with joint timestep routing (events on stdout)",
        &train::run_train_experts);

}  // namespace ws::cli
