// SPDX-License-Identifier: Apache-2.0
// Parity kinds for the latent upsampler: the model (`parity upsampler DIR`) and its
// training loop (`parity upsampler-train DIR`), judged as docs/design/architecture.md and
// tests/data/train/README.md say. Each prints one line per case (or case and group) and
// returns the exit code (0 all pass, 1 any failure or no case).
#pragma once
#include <string>

namespace ws::cli {

int parity_upsampler(const std::string& dir);
int parity_upsampler_train(const std::string& dir);

}  // namespace ws::cli
