// SPDX-License-Identifier: Apache-2.0
// The option schema of `train-vae` (docs/design/wan22-vae.md §12): the verb, the `schema` verb (the GUI's
// form) and run.yaml all come from this one declaration. Shared names mean what they mean for
// train-upsampler (output_dir, learning_rate, video_sample_size, ...).
#pragma once
#include "io/yaml_config.h"

namespace ws::train {

io::OptionSchema vae_option_schema();

}  // namespace ws::train
