// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine parity <kind> DIR`: dispatches to the checker a model kind registered
// (run/parity.h), so each kind lives in its own file.
#include <ATen/Parallel.h>

#include <cstdio>

#include "core/error.h"
#include "cli/args.h"
#include "cli/parity/parity.h"
#include "cli/verb.h"

namespace {
using namespace ws::cli;  // the option rules (int_range, ...)

std::string kind_list() {
  std::string s;
  for (const auto& k : ws::cli::parity_kinds()) s += (s.empty() ? "" : ", ") + k.name;
  return s.empty() ? "none" : s;
}

int run_parity(const std::vector<std::string>& argv) {
  std::string description =
      "Runs every case of a parity fixture folder and compares against the stored reference\n"
      "tensors: one `PASS <case> ...` or `FAIL <case> <reason>` line per case. Exit 0 when all\n"
      "cases pass, 1 when any fails or none is found.\n\nkinds:\n";
  for (const auto& k : ws::cli::parity_kinds())
    description += "  " + k.name + std::string(k.name.size() < 18 ? 18 - k.name.size() : 1, ' ') + k.summary + "\n";
  ws::cli::Args args("parity", "parity KIND DIR", description);
  args.positional("kind", "model kind (" + kind_list() + ")");
  args.positional("dir", "fixture folder");
  args.value("threads", "N", "CPU threads (default: LibTorch's)", int_range(1, 1024));
  if (!args.parse(argv)) return 0;
  const auto* kind = ws::cli::find_parity_kind(args.pos(0));
  if (!kind) throw ws::UsageError("parity: unknown kind '" + args.pos(0) + "' (known: " + kind_list() + ")");
  if (args.has("threads")) {
    int64_t n = args.integer("threads", 1);
    if (n < 1) throw ws::UsageError("--threads must be at least 1");
    at::set_num_threads(static_cast<int>(n));
  }
  int rc = kind->fn(args.pos(1));
  std::fflush(stdout);
  return rc;
}

}  // namespace

WS_VERB("parity", "check a model against reference fixtures (vae, ...)", &run_parity);
