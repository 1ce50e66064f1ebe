// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine bench <kind> [options]`: micro-benchmarks registered per kind from their
// own files (WS_BENCH_KIND("vae-encode", "...", &fn)). A kind parses its own options, prints
// progress on stderr and, as its last stdout line, one JSON object (bench_report()).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ws::cli {

using BenchKindFn = int (*)(const std::vector<std::string>& args);

struct BenchKind {
  std::string name;
  std::string summary;
  BenchKindFn fn;
};

void register_bench_kind(const std::string& name, const std::string& summary, BenchKindFn fn);
std::vector<BenchKind> bench_kinds();  // sorted by name
const BenchKind* find_bench_kind(const std::string& name);

struct BenchKindRegistrar {
  BenchKindRegistrar(const char* name, const char* summary, BenchKindFn fn) { register_bench_kind(name, summary, fn); }
};

// The kind being run: bench_report names it as "bench" so a report says what it measured.
void set_current_bench_kind(const std::string& name);
// Sets LibTorch's intra-op threads (LibTorch may start with 1) and returns the count in use.
int bench_set_threads(int64_t threads);
// Runs `fn` warmup + reps times, reporting each rep on stderr; returns the timed reps in ms.
template <class F>
std::vector<double> bench_time(const std::string& label, int64_t warmup, int64_t reps, F&& fn);
// {bench (the kind), ms_per_<unit>_median, ms_per_<unit>_min, ms_per_<unit> (all reps), peak_rss_mb}
// merged into `extra` and printed as one line on stdout.
// The median of the timings (the mean of the middle two for an even count), as bench_report reports it.
double bench_median(const std::vector<double>& ms);
nlohmann::json bench_report(const std::vector<double>& ms, nlohmann::json extra, const std::string& unit = "clip");

double bench_now_ms();
// A DiT latent grid {F, H, W} of `tokens` = F·(H/2)·(W/2) with near-square frames (RoPE positions
// below 1024 per axis); ws::UsageError when none fits.
std::vector<int64_t> bench_token_grid(int64_t tokens);
void bench_progress(const std::string& label, int64_t rep, int64_t reps, double ms, bool warmup);

template <class F>
std::vector<double> bench_time(const std::string& label, int64_t warmup, int64_t reps, F&& fn) {
  std::vector<double> ms;
  for (int64_t i = 0; i < warmup + reps; ++i) {
    const double t0 = bench_now_ms();
    fn();
    const double dt = bench_now_ms() - t0;
    const bool is_warmup = i < warmup;
    bench_progress(label, is_warmup ? i + 1 : i - warmup + 1, is_warmup ? warmup : reps, dt, is_warmup);
    if (!is_warmup) ms.push_back(dt);
  }
  return ms;
}

}  // namespace ws::cli

#define WS_BENCH_CAT2(a, b) a##b
#define WS_BENCH_CAT(a, b) WS_BENCH_CAT2(a, b)
#define WS_BENCH_KIND(name, summary, fn) \
  static ::ws::cli::BenchKindRegistrar WS_BENCH_CAT(ws_bench_kind_registrar_, __COUNTER__)(name, summary, fn)
