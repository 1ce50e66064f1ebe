// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine bench <kind> [options]`: dispatches to a benchmark kind registered with
// WS_BENCH_KIND (run/bench.h); each kind parses its own options.
#include "core/error.h"
#include "cli/bench/bench.h"
#include "cli/args.h"
#include "cli/verb.h"

#include <cstdio>

namespace {

std::string kind_list() {
  std::string s;
  for (const auto& k : ws::cli::bench_kinds()) s += (s.empty() ? "" : ", ") + k.name;
  return s.empty() ? "none" : s;
}

int run_bench(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0] == "--help" || argv[0] == "-h") {
    std::printf(
        "usage: wanstudio-engine bench KIND [options]\n\n"
        "Times one piece of the engine; progress goes to stderr and the last stdout line is\n"
        "one JSON object (ms_per_clip_median, ms_per_clip_min, peak_rss_mb, ...).\n"
        "`wanstudio-engine bench KIND --help` lists a kind's options.\n\nkinds:\n");
    for (const auto& k : ws::cli::bench_kinds()) std::printf("  %-18s %s\n", k.name.c_str(), k.summary.c_str());
    return argv.empty() ? 1 : 0;
  }
  if (argv[0] == "--print-schema") {
    std::vector<std::string> names;
    for (const auto& k : ws::cli::bench_kinds()) names.push_back(k.name);
    ws::cli::print_subverbs_schema("bench", names);
    return 0;
  }
  const auto* kind = ws::cli::find_bench_kind(argv[0]);
  if (!kind) throw ws::UsageError("bench: unknown kind '" + argv[0] + "' (known: " + kind_list() + ")");
  ws::cli::set_current_bench_kind(kind->name);
  return kind->fn(std::vector<std::string>(argv.begin() + 1, argv.end()));
}

}  // namespace

WS_VERB("bench", "time a model piece (vae-encode, vae-decode, ...)", &run_bench);
