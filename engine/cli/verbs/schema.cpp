// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine schema <verb>`: the training verbs' option schema as JSON, so the GUI's
// form is generated from the engine and never drifts from it.
#include <cstdio>

#include "core/error.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "train/experts/experts_options.h"
#include "train/upsampler/upsampler_options.h"
#include "train/vae/vae_options.h"

namespace ws::cli {
namespace {

int run_schema(const std::vector<std::string>& argv) {
  Args args("schema", "schema train-upsampler|train-experts|train-vae",
            "Prints the option schema of a training verb as JSON: names, types, defaults, help,\n"
            "groups and allowed values.");
  args.positional("verb", "train-upsampler, train-experts or train-vae");
  if (!args.parse(argv)) return 0;
  const std::string verb = args.pos(0);
  if (verb == "train-upsampler") {
    std::printf("%s\n", train::upsampler_option_schema().to_json().dump(2).c_str());
    return 0;
  }
  if (verb == "train-experts") {
    std::printf("%s\n", train::experts_option_schema().to_json().dump(2).c_str());
    return 0;
  }
  if (verb == "train-vae") {
    std::printf("%s\n", train::vae_option_schema().to_json().dump(2).c_str());
    return 0;
  }
  throw UsageError("no option schema for '" + verb + "' (known: train-upsampler, train-experts, train-vae)");
}

}  // namespace

WS_VERB("schema", "a training verb's option schema as JSON (for the GUI form)", &run_schema);

}  // namespace ws::cli
