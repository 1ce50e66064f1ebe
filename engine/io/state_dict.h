// SPDX-License-Identifier: Apache-2.0
// State dicts: named tensors, loaded into modules by key name with a report of what did
// not fit. Strict mode (released weights) makes any problem an error naming the key;
// warm-start mode skips mismatched keys and reports them.
#pragma once
#include <torch/torch.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ws::io {

using StateDict = std::map<std::string, torch::Tensor>;

enum class LoadMode { Strict, WarmStart };

struct ShapeMismatch {
  std::string key;
  std::vector<int64_t> expected;  // the module's
  std::vector<int64_t> got;       // the file's
};

struct LoadReport {
  std::vector<std::string> missing;     // in the module, not in the file
  std::vector<std::string> unexpected;  // in the file, not in the module
  std::vector<ShapeMismatch> mismatched;
  size_t loaded = 0;
  bool clean() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
  // One line, e.g. "loaded 194, missing 1 (a.b.weight), unexpected 0, shape-mismatched 1 (c: [3,4] vs [4,4])".
  std::string summary() const;
};

// Copies tensors into the module's parameters and buffers (converted to their dtype and
// device). Strict: throws ws::Error naming the first missing/unexpected/mis-shaped key
// (`source` names the file in the message). WarmStart: loads what fits.
LoadReport load_state_dict(torch::nn::Module& module, const StateDict& sd, LoadMode mode,
                           const std::string& source = {});

// The module's parameters and buffers by their dotted names.
StateDict module_state_dict(const torch::nn::Module& module);

std::string shape_str(const std::vector<int64_t>& shape);
std::string dtype_name(torch::Dtype dt);  // safetensors spelling: F32, BF16, ...

}  // namespace ws::io
