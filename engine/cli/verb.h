// SPDX-License-Identifier: Apache-2.0
// The worker's verbs (`wanstudio-engine <verb> ...`). Each verb file registers itself with
// WS_VERB, so adding a verb touches no central table.
#pragma once
#include <string>
#include <vector>

namespace ws::cli {

using VerbFn = int (*)(const std::vector<std::string>& args);

struct Verb {
  std::string name;
  std::string summary;
  VerbFn fn;
};

const std::vector<Verb>& verbs();
const Verb* find_verb(const std::string& name);

struct VerbRegistrar {
  VerbRegistrar(const char* name, const char* summary, VerbFn fn);
};

}  // namespace ws::cli

#define WS_VERB_CAT2(a, b) a##b
#define WS_VERB_CAT(a, b) WS_VERB_CAT2(a, b)
#define WS_VERB(name, summary, fn) \
  static ::ws::cli::VerbRegistrar WS_VERB_CAT(ws_verb_registrar_, __COUNTER__)(name, summary, fn)
