// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the VAE tests (test_vae, test_vae21): a fixture case's suggested tolerance, the
// largest difference of two tensors and a tensor's shape.
#pragma once
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace ws::test {

// tolerance.<tensor>.suggested_atol of the case file `<case_base>.json`.
inline double tolerance(const std::string& case_base, const std::string& tensor) {
  std::ifstream in(case_base + ".json");
  return nlohmann::json::parse(in)["tolerance"][tensor]["suggested_atol"].get<double>();
}

inline double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

inline std::vector<int64_t> shape(const torch::Tensor& t) { return t.sizes().vec(); }

}  // namespace ws::test
