// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine dataset split VIDEO --output_dir DIR`: one clip per scene.
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/verbs/dataset_verbs.h"
#include "core/error.h"
#include "dataset/scene_split.h"
#include "runtime/cancel.h"

namespace ws::cli {

namespace {

std::vector<int64_t> parse_cuts(const std::string& text) {
  std::vector<int64_t> cuts;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      cuts.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw UsageError("--cuts takes frame numbers separated by commas, got '" + item + "'");
    }
  }
  return cuts;
}

}  // namespace

int run_dataset_split(const std::vector<std::string>& argv) {
  Args args("dataset split",
            "dataset split VIDEO --output_dir DIR [--threshold X] [--min_scene_frames N] [--min_seconds S] "
            "[--max_seconds S] [--cuts F,F,...] [--no_stream_copy] [--dry_run] [--json]",
            "Finds the cuts between shots (mean change of hue, saturation and brightness between\n"
            "frames on a downscaled copy, at or above --threshold, scenes at least --min_scene_frames\n"
            "long) and writes one clip per scene into DIR, with DIR/metadata.json holding a row per\n"
            "clip: file_path, source, frame_range [first, last+1) in the source's frames. --max_seconds\n"
            "cuts longer scenes into pieces of that length from their start; --min_seconds drops\n"
            "shorter scenes or pieces (VideoX-Fun splits with 3 and 10). --cuts writes the given cuts\n"
            "instead of detected ones (the studio's edited timeline). A scene that starts on a keyframe\n"
            "and ends on one (or at the end) is copied without re-encoding; the others are re-encoded\n"
            "(H.264).");
  args.positional("VIDEO", "the recording to split");
  args.value("output_dir", "DIR", "folder for the clips and metadata.json");
  args.value("threshold", "X", "cut when the frame change is at least this (default 27)", real_range(0.01, 255));
  args.value("min_scene_frames", "N", "shortest scene in frames (default 15)", int_range(1, 1000000));
  args.value("min_seconds", "S", "drop scenes or pieces shorter than this (default 0: keep all)", real_range(0, 86400));
  args.value("max_seconds", "S", "cut scenes longer than this into pieces (default 0: no maximum)",
             real_range(0, 86400));
  args.value("cuts", "F,F,...", "use these cuts (first frame of each new scene) instead of detecting");
  args.value("crf", "N", "H.264 quality of the clips (default 18)", int_range(0, 51));
  args.flag("no_stream_copy", "re-encode every clip, even those cut on keyframes");
  args.flag("dry_run", "print the cuts and scenes only; write nothing");
  args.flag("json", "print the result as one JSON object");
  if (!args.parse(argv)) return 0;
  require_video("dataset split");
  dataset::SplitOptions opts;
  opts.scene.threshold = args.real("threshold", 27.0);
  opts.scene.min_scene_frames = args.integer("min_scene_frames", 15);
  opts.min_seconds = args.real("min_seconds", 0.0);
  opts.max_seconds = args.real("max_seconds", 0.0);
  if (opts.max_seconds > 0 && opts.min_seconds > opts.max_seconds)
    throw UsageError("--min_seconds is larger than --max_seconds: no piece could be kept");
  opts.crf = static_cast<int>(args.integer("crf", 18));
  opts.stream_copy = !args.boolean("no_stream_copy");
  if (args.has("cuts")) {
    opts.cuts = parse_cuts(args.str("cuts"));
    opts.use_cuts = true;
  }
  const bool dry = args.boolean("dry_run");
  if (!dry && !args.has("output_dir")) throw UsageError("dataset split: --output_dir DIR is required");
  opts.output_dir = args.str("output_dir");

  const dataset::SplitResult r =
      dataset::split_video(args.pos(0), opts, dry, [](int64_t) { return !runtime::cancel_requested(); });
  if (args.boolean("json")) {
    nlohmann::json j = {{"video", args.pos(0)}, {"frames", r.scan.scores.size()},    {"fps", r.scan.fps},
                        {"cuts", r.scan.cuts},  {"scenes", nlohmann::json::array()}, {"metadata", r.metadata_path}};
    for (const auto& [a, b] : r.ranges) j["scenes"].push_back({a, b});
    if (!dry) j["stream_copied"] = r.copied;
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%zu frames, %zu cuts:", r.scan.scores.size(), r.scan.cuts.size());
  for (int64_t c : r.scan.cuts) std::printf(" %lld", static_cast<long long>(c));
  std::printf("\n");
  for (size_t i = 0; i < r.ranges.size(); ++i)
    std::printf("scene %zu: frames %lld..%lld%s\n", i + 1, static_cast<long long>(r.ranges[i].first),
                static_cast<long long>(r.ranges[i].second - 1),
                dry           ? ""
                : r.copied[i] ? " (stream copy)"
                              : " (re-encoded)");
  if (!dry) std::printf("wrote %zu clips and %s\n", r.rows.size(), r.metadata_path.c_str());
  return 0;
}

}  // namespace ws::cli
