// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine train-upsampler --config RUN.yaml | the train_upsampler.py flags`.
#include "cli/verb.h"
#include "train/upsampler/upsampler_trainer.h"

namespace ws::cli {

WS_VERB("train-upsampler", "train the latent upsampler against the frozen Wan2.2 VAE (events on stdout)",
        &train::run_train_upsampler);

}  // namespace ws::cli
