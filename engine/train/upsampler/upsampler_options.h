// SPDX-License-Identifier: Apache-2.0
// The option schema of `train-upsampler`: every flag of VideoX-Fun's train_upsampler.py under
// its own name, with Wan Studio's defaults (docs/design/upsampler-training.md §2, §2.1). The verb, the
// `schema` verb (the GUI's form) and run.yaml all come from this one declaration.
#pragma once
#include "io/yaml_config.h"

namespace ws::train {

io::OptionSchema upsampler_option_schema();

}  // namespace ws::train
