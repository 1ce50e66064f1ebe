// SPDX-License-Identifier: Apache-2.0
// The run-config loader on any YAML text: every problem lands in Config::errors() (never a
// throw, a hang on aliases or a crash), and a config that loads resolves every option.
#include <cstdint>

#include "core/error.h"
#include "fuzz_input.h"
#include "io/yaml_config.h"
#include "train/upsampler/upsampler_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ws::io::OptionSchema schema = ws::train::upsampler_option_schema();
  const std::string path = ws::fuzz::input_file(data, size, ".yaml");
  ws::io::Config cfg = ws::io::load_config(schema, {"--config", path}, "/tmp");
  if (cfg.ok()) (void)cfg.to_yaml();
  return 0;
}
