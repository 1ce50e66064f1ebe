// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine dataset score METADATA.json`: motion, sharpness and brightness per row.
#include <cmath>
#include <cstdio>

#include "cli/args.h"
#include "cli/verbs/dataset_verbs.h"
#include "core/error.h"
#include "dataset/clip_scores.h"
#include "dataset/metadata.h"
#include "io/printable.h"
#include "runtime/cancel.h"
#include "runtime/progress.h"

namespace ws::cli {

int run_dataset_score(const std::vector<std::string>& argv) {
  Args args("dataset score", "dataset score METADATA.json [--sampling_fps F] [--train_data_dir DIR]",
            "Adds motion_score (the mean Farneback optical-flow magnitude between frames sampled at\n"
            "--sampling_fps, VideoX-Fun's motion filter), sharpness (variance of the Laplacian) and\n"
            "brightness (mean grey, 0..255) to every row, and writes the file back atomically with\n"
            "the previous one kept as .bak. A row whose file cannot be read is reported on stderr\n"
            "and left as it was; the exit is 1 when any was.");
  args.positional("METADATA.json", "the dataset");
  args.value("sampling_fps", "F", "frames per second compared (default 2)", real_range(0.01, 240));
  args.value("train_data_dir", "DIR", "folder file_path is relative to (default: the metadata.json's folder)");
  if (!args.parse(argv)) return 0;
  if (!dataset::clip_scores_built())
    throw Error("dataset score: this wanstudio-engine was built without OpenCV's optical flow (libopencv-video-dev)");
  const double fps = args.real("sampling_fps", 2.0);
  if (!std::isfinite(fps) || fps <= 0 || fps > 1000)
    throw UsageError("--sampling_fps must be a number in (0, 1000], got " + args.str("sampling_fps"));
  const std::string path = args.pos(0);
  auto meta = dataset::read_metadata(path, args.str("train_data_dir"));
  size_t failed = 0;
  {
    runtime::ProgressBar bar("score", meta.rows.size());
    for (size_t i = 0; i < meta.rows.size(); ++i) {
      if (runtime::cancel_requested()) throw Error("score: cancelled (nothing written)");
      auto& row = meta.rows[i];
      try {
        if (row.file_path.empty() || !row.raw.is_object()) throw Error("no file_path");
        const auto s = dataset::score_clip(meta.resolve(row), fps);
        // Five decimals, as VideoX-Fun rounds its motion scores.
        auto round5 = [](double v) { return std::round(v * 1e5) / 1e5; };
        row.raw["motion_score"] = round5(s.motion);
        row.raw["sharpness"] = round5(s.sharpness);
        row.raw["brightness"] = round5(s.brightness);
      } catch (const Error& e) {
        std::fprintf(stderr, "row %zu: %s (not scored)\n", i, io::printable(e.what(), 4096).c_str());
        ++failed;
      }
      bar.update(i + 1);
    }
  }
  dataset::write_metadata(path, meta.rows);
  std::printf("scored %zu of %zu rows in %s\n", meta.rows.size() - failed, meta.rows.size(), path.c_str());
  return failed > 0 ? 1 : 0;
}

}  // namespace ws::cli
