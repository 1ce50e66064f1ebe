// SPDX-License-Identifier: Apache-2.0
#include "cli/parity/parity_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/fs.h"

namespace ws::cli {

GroupStats group_stats(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                       const std::vector<double>& scale) {
  std::vector<torch::Tensor> diffs;
  for (size_t i = 0; i < a.size(); ++i) {
    auto d = (a[i].to(torch::kDouble) - b[i].to(torch::kDouble)).abs().flatten();
    if (i < scale.size() && scale[i] > 0) d = d / scale[i];
    diffs.push_back(d);
  }
  GroupStats s;
  if (diffs.empty()) return s;
  auto all = torch::cat(diffs);
  s.elements = all.numel();
  if (s.elements == 0) return s;
  s.max = all.max().item<double>();
  s.mean = all.mean().item<double>();
  // numpy's percentile with linear interpolation.
  auto sorted = std::get<0>(all.sort());
  double pos = 0.999 * static_cast<double>(s.elements - 1);
  int64_t lo = static_cast<int64_t>(std::floor(pos)), hi = std::min<int64_t>(lo + 1, s.elements - 1);
  double frac = pos - static_cast<double>(lo);
  s.p999 = sorted[lo].item<double>() * (1 - frac) + sorted[hi].item<double>() * frac;
  return s;
}

CloseResult close_check(const torch::Tensor& a, const torch::Tensor& ref, double atol, double rtol) {
  CloseResult r;
  if (a.sizes() != ref.sizes()) {
    r.shape_ok = false;
    r.worst_ratio = INFINITY;
    r.max_abs = INFINITY;
    return r;
  }
  auto ad = a.to(torch::kDouble), rd = ref.to(torch::kDouble);
  auto diff = (ad - rd).abs();
  auto bound = atol + rtol * rd.abs();
  r.max_abs = diff.numel() ? diff.max().item<double>() : 0.0;
  r.worst_ratio = diff.numel() ? (diff / bound).max().item<double>() : 0.0;
  if (std::isnan(r.max_abs)) r.worst_ratio = r.max_abs = INFINITY;
  return r;
}

std::vector<double> doubles(const torch::Tensor& t) {
  auto d = t.to(torch::kDouble).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

double max_rel_error(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  if (a.size() != b.size()) return INFINITY;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(a[i] - b[i]);
    double denom = std::max(std::fabs(b[i]), 1e-300);
    double rel = (a[i] == b[i]) ? 0.0 : d / denom;
    if (std::isnan(rel)) rel = INFINITY;
    worst = std::max(worst, rel);
  }
  return worst;
}

std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

nlohmann::json read_case_json(const std::string& path) {
  try {
    return nlohmann::json::parse(fs::read_json_text(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": invalid JSON (" + std::string(e.what()) + ")");
  }
}

torch::Tensor need_tensor(const io::StateDict& sd, const std::string& name, const std::string& file) {
  auto it = sd.find(name);
  if (it == sd.end()) throw Error(file + ": has no tensor '" + name + "'");
  return it->second;
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b, const std::string& name) {
  if (a.sizes() != b.sizes())
    throw Error(name + ": shape " + io::shape_str(a.sizes().vec()) + " vs reference " + io::shape_str(b.sizes().vec()));
  if (a.numel() == 0) return 0;
  const double e = (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
  return std::isnan(e) ? INFINITY : e;
}

}  // namespace ws::cli
