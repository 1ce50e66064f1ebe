// SPDX-License-Identifier: Apache-2.0
// Parity kinds for the Wan DiT: the forward pass (`parity dit DIR`, DIR/*.json) and the
// training step (`parity dit-train DIR`, DIR/*/case.json of kind dit-train), judged as
// docs/design/architecture.md "Parity case format" and tests/data/train/README.md §B say. Each prints one
// line per case (or case and quantity group) and returns the exit code (0 all pass, 1 any
// failure or no case).
#pragma once
#include <string>

namespace ws::cli {

int parity_dit(const std::string& dir);
int parity_dit_train(const std::string& dir);

}  // namespace ws::cli
