// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine schema [verb]`: a verb's option schema as JSON, so the GUI's form is generated
// from the engine and never drifts from it, and tests can walk every option of every verb.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "train/experts/experts_options.h"
#include "train/upsampler/upsampler_options.h"
#include "train/vae/vae_options.h"

namespace ws::cli {
namespace {

int run_schema(const std::vector<std::string>& argv) {
  Args args("schema", "schema [VERB [SUBVERB]]",
            "Prints a verb's option schema as JSON: names, types, defaults, help, groups, allowed\n"
            "values and ranges. Without a verb: the list of verbs. The studio's form is made from the\n"
            "training verbs' schemas; tests walk every verb's options with values outside their range.");
  args.positional("verb", "a verb (train-upsampler, sample, dataset, ...)", false);
  args.positional("subverb", "for verbs with sub-verbs (dataset import, bench vae-encode, vae encode)", false);
  if (!args.parse(argv)) return 0;
  const std::string verb = args.pos(0);
  if (verb.empty()) {
    std::vector<std::string> names;
    for (const auto& v : verbs()) names.push_back(v.name);
    std::printf("%s\n", nlohmann::json{{"verbs", names}}.dump(2).c_str());
    return 0;
  }
  // The training verbs (and buckets, which reads the upsampler's options) resolve a run config.
  if (verb == "train-upsampler" || verb == "buckets") {
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
  const Verb* v = find_verb(verb);
  if (!v) throw UsageError("no verb '" + verb + "' (`wanstudio-engine schema` lists them)");
  // Every other verb parses with Args, which answers --print-schema before anything else runs.
  std::vector<std::string> sub;
  if (!args.pos(1).empty()) sub.push_back(args.pos(1));
  sub.push_back("--print-schema");
  return v->fn(sub);
}

}  // namespace

WS_VERB("schema", "a verb's option schema as JSON (the GUI form; tests walk it)", &run_schema);

}  // namespace ws::cli
