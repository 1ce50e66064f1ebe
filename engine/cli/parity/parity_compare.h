// SPDX-License-Identifier: Apache-2.0
// Comparison helpers shared by the parity kinds: element-wise allclose, group statistics
// (max, 99.9th percentile, mean of |a − b|) and relative scalar checks.
#pragma once
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "io/state_dict.h"

namespace ws::cli {

struct GroupStats {
  double max = 0, p999 = 0, mean = 0;
  int64_t elements = 0;
};

// |a − b| over all elements of all pairs (fp64). `scale`, when given, divides each pair's
// differences (e.g. by the reference tensor's abs max for relative checks).
GroupStats group_stats(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                       const std::vector<double>& scale = {});

// numpy allclose rule |a − ref| ≤ atol + rtol·|ref|: returns the largest violation ratio
// (≤ 1 passes) and the max abs difference.
struct CloseResult {
  double worst_ratio = 0;
  double max_abs = 0;
  bool shape_ok = true;
};
CloseResult close_check(const torch::Tensor& a, const torch::Tensor& ref, double atol, double rtol);

// max_i |a_i − b_i| / max(|b_i|, tiny) over two equally long vectors.
// A tensor's values as doubles, in order (for max_rel_error).
std::vector<double> doubles(const torch::Tensor& t);

double max_rel_error(const std::vector<double>& a, const std::vector<double>& b);

std::string fmt_num(double v);

// max |a − b| in fp64 (NaN anywhere: infinity); ws::Error naming `name` when the shapes differ.
double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b, const std::string& name);

// A case file's JSON; ws::Error naming the file when it is not JSON.
nlohmann::json read_case_json(const std::string& path);
// sd[name] as stored (no dtype change); ws::Error naming `file` when absent.
torch::Tensor need_tensor(const io::StateDict& sd, const std::string& name, const std::string& file);

}  // namespace ws::cli
