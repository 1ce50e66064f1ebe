// SPDX-License-Identifier: Apache-2.0
#include "cli/bench/bench.h"

#include <cmath>

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.h"
#include "models/cpu_attention.h"
#include "models/cpu_gemm.h"
#include "runtime/events.h"

namespace ws::cli {
namespace {

std::vector<BenchKind>& table() {
  static std::vector<BenchKind> t;
  return t;
}

std::string& current_kind() {
  static std::string k;
  return k;
}

}  // namespace

void register_bench_kind(const std::string& name, const std::string& summary, BenchKindFn fn) {
  for (const auto& k : table())
    if (k.name == name) throw Error("bench kind '" + name + "' registered twice");
  table().push_back({name, summary, fn});
}

std::vector<BenchKind> bench_kinds() {
  auto t = table();
  std::sort(t.begin(), t.end(), [](const BenchKind& a, const BenchKind& b) { return a.name < b.name; });
  return t;
}

const BenchKind* find_bench_kind(const std::string& name) {
  for (const auto& k : table())
    if (k.name == name) return &k;
  return nullptr;
}

void set_current_bench_kind(const std::string& name) { current_kind() = name; }

int bench_set_threads(int64_t threads) {
  if (threads < 1) throw UsageError("--threads must be at least 1");
  at::set_num_threads(static_cast<int>(threads));
  return at::get_num_threads();
}

double bench_now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void bench_progress(const std::string& label, int64_t rep, int64_t reps, double ms, bool warmup) {
  std::fprintf(stderr, "%s: %s %lld/%lld %.1f ms\n", label.c_str(), warmup ? "warmup" : "rep",
               static_cast<long long>(rep), static_cast<long long>(reps), ms);
  std::fflush(stderr);
}

double bench_median(const std::vector<double>& ms) {
  if (ms.empty()) throw Error("bench: no timed repetition");
  auto sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

nlohmann::json bench_report(const std::vector<double>& ms, nlohmann::json extra, const std::string& unit) {
  const double median = bench_median(ms);
  if (!current_kind().empty()) extra["bench"] = current_kind();
  // Which GEMM ran the fp32 products on the CPU, and why (models/cpu_gemm.h): figures from two
  // machines differ by it first.
  extra["gemm"] = models::cpu_gemm_description();
  extra["cpu_attention"] = models::cpu_attention_choice();
  extra["ms_per_" + unit + "_median"] = median;
  extra["ms_per_" + unit + "_min"] = *std::min_element(ms.begin(), ms.end());
  extra["ms_per_" + unit] = ms;
  // A bench that does more after its timed part (dit-train --breakdown) states the part's peak itself.
  if (!extra.contains("peak_rss_mb"))
    extra["peak_rss_mb"] = static_cast<double>(runtime::peak_rss_bytes()) / (1024.0 * 1024.0);
  // A bench that states its memory estimate (train/memory_estimate.h) is its check.
  if (extra.contains("estimate_mb") && extra["peak_rss_mb"].get<double>() > 0)
    extra["estimate_error"] =
        (extra["estimate_mb"].get<double>() - extra["peak_rss_mb"].get<double>()) / extra["peak_rss_mb"].get<double>();
  std::printf("%s\n", extra.dump().c_str());
  std::fflush(stdout);
  return extra;
}

std::vector<int64_t> bench_token_grid(int64_t tokens) {
  int64_t f = 1;
  while (tokens / f > 1024 * 1024 || tokens % f) ++f;
  const int64_t per = tokens / f;
  int64_t h = static_cast<int64_t>(std::sqrt(static_cast<double>(per)));
  while (per % h) --h;
  if (per / h > 1024) throw UsageError("--tokens " + std::to_string(tokens) + ": no grid fits the RoPE table");
  return {f, 2 * h, 2 * (per / h)};
}

}  // namespace ws::cli
