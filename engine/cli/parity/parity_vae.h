// SPDX-License-Identifier: Apache-2.0
// Parity of the Wan VAEs against fixtures/vae (wan2.2) and fixtures/vae21 (wan2.1)
// (docs/design/architecture.md, "Parity case format"): every DIR/*.json with a `case` key is a
// case; files are named relative to the JSON; a case's `vae_type` must be the kind's.
#pragma once
#include <string>
#include <vector>

#include "models/wan_vae_config.h"

namespace ws::cli {

struct VaeParityTensor {
  std::string name;
  double max_abs = 0, tol = 0;
  bool pass = false;
};

struct VaeParityCase {
  std::string name;      // the JSON's `case` (the file name when the JSON cannot be read)
  bool skipped = false;  // a JSON without `case`: not a case
  bool pass = false;
  std::string reason;  // why it failed or was skipped
  std::vector<VaeParityTensor> tensors;
  bool pth_checked = false;
  // The one summary line: `PASS <case> worst=<tensor> max_abs=<e> tol=<t>` or `FAIL <case> <reason>`.
  std::string line() const;
};

// Runs one case; never throws for bad input (a malformed case fails with the reason).
VaeParityCase check_vae_parity_case(const std::string& json_path, models::VaeType kind = models::VaeType::Wan22);
// The `parity vae DIR` / `parity vae21 DIR` kinds: prints one line per case, returns the exit code.
int parity_vae(const std::string& dir, models::VaeType kind);

}  // namespace ws::cli
