// SPDX-License-Identifier: Apache-2.0
// `bench loader`: the training loader alone on a real dataset — decode, resize, crop,
// (degradation) and the low-res downsample, with N decode threads ahead of a consumer that
// does nothing else. Answers "can the data keep the trainer busy?".
#include <torch/torch.h>

#include <thread>

#include "core/error.h"
#include "data/clip_loader.h"
#include "dataset/metadata.h"
#include "cli/args.h"
#include "cli/bench/bench.h"

namespace ws::cli {
namespace {

int bench_loader(const std::vector<std::string>& argv) {
  Args a("bench loader", "bench loader --meta M.json [options]",
         "Times ClipLoader::next() over the dataset (bucket collate as in training, 1.5x).");
  a.value("meta", "M.json", "metadata.json of the dataset (required)")
      .value("data_dir", "DIR", "folder file_path values are relative to (default: the metadata's folder)")
      .value("size", "S", "video_sample_size (default 640)", int_range(48, 4096))
      .value("frames", "N", "video_sample_n_frames (default 81)", frames_upto(1025))
      .value("stride", "K", "video_sample_stride (default 2)", int_range(1, 1000))
      .value("batch", "B", "clips per batch (default 1)", int_range(1, 1024))
      .value("workers", "N", "decode threads (default 2; 0 = decode on the consumer's thread)", int_range(0, 64))
      .value("batches", "C", "timed batches (default 20)", int_range(1, 100000))
      .value("warmup", "W", "untimed batches first (default 2)", int_range(0, 100000))
      .value("threads", "K", "LibTorch threads of the consumer (default: all cores)", int_range(1, 1024))
      .flag("degradation", "apply the degradation ops (1-4 per clip)");
  if (!a.parse(argv)) return 0;
  if (!a.has("meta")) throw UsageError("--meta is required");
  const int threads = bench_set_threads(a.integer("threads", std::max(1u, std::thread::hardware_concurrency())));
  dataset::Metadata meta = dataset::read_metadata(a.str("meta"), a.has("data_dir") ? a.str("data_dir") : "");
  std::vector<data::DroppedRow> dropped;
  auto rows = data::usable_rows(meta, a.integer("stride", 2), &dropped);
  if (rows.empty()) throw Error(a.str("meta") + ": no usable rows");
  data::LoaderOptions o;
  o.sample_size = a.integer("size", 640);
  o.n_frames = a.integer("frames", 81);
  o.stride = a.integer("stride", 2);
  o.batch_size = a.integer("batch", 1);
  o.workers = static_cast<int>(a.integer("workers", 2));
  o.degradation = a.boolean("degradation");
  o.random_hw_adapt = false;
  const int64_t n_rows = static_cast<int64_t>(rows.size());
  data::ClipLoader loader(std::move(rows), o);
  int64_t clips = 0, frames = 0;
  auto ms = bench_time("loader", a.integer("warmup", 2), a.integer("batches", 20), [&] {
    data::Batch b = loader.next();
    clips += b.x_hr.size(0);
    frames += b.x_hr.size(0) * b.x_hr.size(2);
  });
  double total = 0;
  for (double m : ms) total += m;
  const double timed_clips = static_cast<double>(ms.size() * static_cast<size_t>(o.batch_size));
  nlohmann::json extra = {{"rows", n_rows},
                          {"dropped_rows", dropped.size()},
                          {"workers", o.workers},
                          {"threads", threads},
                          {"size", o.sample_size},
                          {"frames", o.n_frames},
                          {"stride", o.stride},
                          {"degradation", o.degradation},
                          {"clips_total", clips},
                          {"frames_total", frames},
                          {"clips_per_s", total > 0 ? timed_clips * 1000.0 / total : 0.0}};
  bench_report(ms, extra, "batch");
  return 0;
}

}  // namespace

WS_BENCH_KIND("loader", "the training loader: decode, resize, crop, degrade, downsample (clips/s)", &bench_loader);

}  // namespace ws::cli
