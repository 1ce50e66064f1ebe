// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine buckets --config RUN.yaml`: which bucket, sizes and frames every row of
// the dataset trains at, or why it is dropped — the answer to "what does my data train on?".
#include <cstdio>
#include <map>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/buckets.h"
#include "dataset/frame_sampling.h"
#include "dataset/metadata.h"
#include "dataset/row_check.h"
#include "cli/verb.h"
#include "train/run_options.h"
#include "train/upsampler/upsampler_options.h"
#include "train/upsampler/upsampler_setup.h"
#include "train/run_setup.h"

namespace ws::cli {
namespace {
using nlohmann::json;

int run_buckets(const std::vector<std::string>& argv) {
  for (const auto& a : argv)
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: wanstudio-engine buckets --config RUN.yaml [any train-upsampler option]\n\n"
          "Prints a JSON report: per metadata row its bucket, high-res and low-res sizes,\n"
          "latent sizes, frames and samples (frame_extraction's windows), or why it is\n"
          "dropped; then counts per status, rows and samples per bucket.\n");
      return 0;
    }
  io::Config cfg = io::load_config(train::upsampler_option_schema(), argv);
  if (!cfg.ok()) {
    for (const auto& e : cfg.errors()) {
      // An experts (or VAE) config fails on its `job`: say what buckets is for.
      if (e.find("does not match this verb") != std::string::npos)
        std::fprintf(stderr,
                     "error: %s; buckets reports on train-upsampler configs only (the experts trainer "
                     "buckets by latent shape; see the Dataset page or `probe` for other datasets)\n",
                     e.c_str());
      else std::fprintf(stderr, "error: %s\n", e.c_str());
    }
    return 1;
  }
  // The options, typed by the trainer's own parsers.
  const train::DataOptions d = train::parse_data_options(cfg);
  const double scale = train::upsampler_spatial_scale(cfg);
  train::make_demo_data_if_asked(cfg);  // the same seed-0 demo set the trainers write
  dataset::Metadata meta = dataset::read_metadata(d.meta, d.dir);
  const int64_t S = d.sample_size, N = d.n_frames, stride = d.stride;
  const bool enable_bucket = d.enable_bucket;
  auto reports = dataset::check_rows(meta);
  json rows = json::array();
  std::map<std::string, int64_t> status_counts, bucket_counts, bucket_samples;
  for (const auto& r : reports) {
    const auto& row = meta.rows[r.index];
    json o = {{"index", r.index}, {"file_path", row.file_path}, {"type", row.type}};
    std::vector<std::string> problems = row.problems;
    problems.insert(problems.end(), r.problems.begin(), r.problems.end());
    std::string status = "ok";
    if (!problems.empty()) {
      status = "dropped";
      o["reason"] = problems.front();
      if (problems.size() > 1) o["problems"] = problems;
    } else {
      o["width"] = r.width;
      o["height"] = r.height;
      o["frames_in_file"] = r.frames;
      int64_t n = 1, samples = 1;
      if (!row.is_image()) {
        // The trim's length when the row has one: the loader never reads outside it.
        const int64_t T = row.trim ? row.trim->second - row.trim->first : r.frames;
        if (row.trim) o["trim"] = {row.trim->first, row.trim->second};
        auto plan = dataset::plan_clip(T, N, stride);
        n = plan.n;
        if (d.extraction.mode != dataset::Extraction::Random) {
          const auto windows = dataset::extraction_windows(T, r.fps, N, stride, d.extraction);
          samples = static_cast<int64_t>(windows.size());
          n = windows.empty() ? 0 : static_cast<int64_t>(windows.front().size());
          json starts = json::array();
          for (const auto& w : windows) starts.push_back(w.front());
          if (!windows.empty()) o["window_starts"] = starts;
        }
        if (n == 0) {
          status = "dropped";
          o["reason"] = "too short: " + std::to_string(T) + " frames < stride " + std::to_string(stride);
        } else {
          o["frame_span"] = plan.clip_len;
          if (d.extraction.mode == dataset::Extraction::Random) o["start_range"] = {0, plan.max_start};
          if (n < N) {
            status = "short";
            o["reason"] = "short (" + std::to_string(n) + " frames)";
          }
        }
      }
      if (status != "dropped") {
        auto b = dataset::bucket_size(r.height, r.width, S, scale, 1.0, enable_bucket);
        int64_t L = dataset::batch_frames(N, n);
        int64_t F = 1 + (L - 1) / 4;
        o["frames"] = n;
        o["frames_trained"] = L;
        o["samples"] = samples;
        o["bucket"] = b.key;
        o["size_hr"] = {b.H, b.W};
        o["size_lr"] = {b.h_lr, b.w_lr};
        o["latent_hr"] = {F, b.H / 16, b.W / 16};
        o["latent_lr"] = {F, b.h_lr / 16, b.w_lr / 16};
        char key[32];
        std::snprintf(key, sizeof key, "%s %g", row.type.c_str(), b.key);
        ++bucket_counts[key];
        bucket_samples[key] += samples;
      }
    }
    o["status"] = status;
    ++status_counts[status];
    rows.push_back(o);
  }
  json counts = {{"rows", reports.size()}};
  for (const auto& [k, v] : status_counts) counts[k] = v;
  json report = {
      {"metadata", meta.path},
      {"video_sample_size", S},
      {"video_sample_n_frames", N},
      {"video_sample_stride", stride},
      {"rational_spatial_scale", scale},
      {"enable_bucket", enable_bucket},
      {"random_hw_adapt_ratios", d.random_hw_adapt ? dataset::hw_adapt_choices(S).first : std::vector<double>{1.0}},
      {"rows", rows},
      {"counts", counts},
      {"frame_extraction", dataset::extraction_name(d.extraction.mode)},
      {"buckets", bucket_counts},
      {"bucket_samples", bucket_samples}};
  std::printf("%s\n", report.dump(2).c_str());
  return 0;
}

}  // namespace

WS_VERB("buckets", "JSON report: the bucket, sizes and frames of every dataset row, or why it is dropped",
        &run_buckets);

}  // namespace ws::cli
