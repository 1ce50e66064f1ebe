// SPDX-License-Identifier: Apache-2.0
// The option schema of `train-experts` (docs/design/dual-expert-training.md §4.1): the options shared with
// the upsampler trainer under the same names, plus the experts' own. The verb, the `schema`
// verb (the GUI's form) and run.yaml all come from this one declaration.
#pragma once
#include "io/yaml_config.h"

namespace ws::train {

io::OptionSchema experts_option_schema();

}  // namespace ws::train
