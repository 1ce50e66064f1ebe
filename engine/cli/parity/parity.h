// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine parity <kind> DIR` [contract: docs/design/architecture.md, "Parity case format"].
// Each model kind registers its checker from its own file:
//   WS_PARITY_KIND("vae", "Wan2.2 VAE against fixtures/vae", &parity_vae);
// A checker finds its cases in DIR, prints one `PASS <case> ...` / `FAIL <case> <reason>`
// line per case on stdout and returns 0 when every case passed, 1 otherwise (also when no
// case was found).
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace ws::cli {

using ParityKindFn = int (*)(const std::string& dir);

struct ParityKind {
  std::string name;
  std::string summary;
  ParityKindFn fn;
};

void register_parity_kind(const std::string& name, const std::string& summary, ParityKindFn fn);
std::vector<ParityKind> parity_kinds();  // sorted by name
const ParityKind* find_parity_kind(const std::string& name);

// The case loop every kind shares: each DIR/*.json (sorted) whose object has a `case` key is run
// by `run`, which returns its one output line ("PASS …" / "FAIL …") and never throws for bad
// input (a throw becomes `FAIL <file> <reason>`). Prints the lines and "<n> of <m> <what> cases
// passed" on stderr; returns 0 when every case passed, 1 otherwise or when there is none.
int for_each_case(const std::string& dir, const std::string& what,
                  const std::function<std::string(const std::string& json_path)>& run);

struct ParityKindRegistrar {
  ParityKindRegistrar(const char* name, const char* summary, ParityKindFn fn) {
    register_parity_kind(name, summary, fn);
  }
};

}  // namespace ws::cli

#define WS_PARITY_CAT2(a, b) a##b
#define WS_PARITY_CAT(a, b) WS_PARITY_CAT2(a, b)
#define WS_PARITY_KIND(name, summary, fn) \
  static ::ws::cli::ParityKindRegistrar WS_PARITY_CAT(ws_parity_kind_registrar_, __COUNTER__)(name, summary, fn)
