// SPDX-License-Identifier: Apache-2.0
#include "dataset/scene_split.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/sidecar_caption.h"
#include "video/video_copy.h"
#include "video/video_decode.h"
#include "video/video_encode.h"

namespace ws::dataset {

std::string scene_clip_name(const std::string& video, size_t index) {
  char num[16];
  std::snprintf(num, sizeof num, "%03zu", index + 1);
  return std::filesystem::path(video).stem().string() + "-scene-" + num + ".mp4";
}

SplitResult split_video(const std::string& video, const SplitOptions& options, bool dry_run,
                        const FrameProgress& progress) {
  SplitResult result;
  result.scan = scan_scenes(video, options.scene, progress);
  const int64_t frames = static_cast<int64_t>(result.scan.scores.size());
  if (options.use_cuts) {
    std::vector<int64_t> cuts;
    for (int64_t c : options.cuts) {
      if (c <= 0 || c >= frames)
        throw UsageError("cut at frame " + std::to_string(c) + " is outside the video's frames 1.." +
                         std::to_string(frames - 1));
      cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    result.scan.cuts = cuts;
  }
  result.ranges = scene_ranges(result.scan.cuts, frames, result.scan.fps, options.min_seconds, options.max_seconds);
  if (dry_run) return result;
  if (result.ranges.empty()) throw Error(video + ": no scene is long enough to keep (see --min_seconds)");

  const std::string& dir = options.output_dir;
  fs::make_dirs(dir);
  for (size_t i = 0; i < result.ranges.size(); ++i) {
    const std::string out = fs::join(dir, scene_clip_name(video, i));
    if (fs::exists(out)) throw Error(out + ": exists; split into an empty folder or remove it first");
  }
  const std::string caption = read_sidecar_caption(video).value_or("");
  video::EncodeOptions enc;
  enc.fps = result.scan.fps > 0 ? result.scan.fps : 16.0;
  enc.crf = options.crf;

  // Scenes cut on keyframes are copied as they are: no generation loss, and fast.
  result.copied.assign(result.ranges.size(), false);
  size_t to_encode = result.ranges.size();
  if (options.stream_copy)
    for (size_t i = 0; i < result.ranges.size(); ++i) {
      std::string why;
      const auto [first, end] = result.ranges[i];
      if (video::copy_video_range(video, first, end, fs::join(dir, scene_clip_name(video, i)), &why)) {
        result.copied[i] = true;
        --to_encode;
      }
    }

  // One sequential pass for the rest: each frame goes to the clip whose range holds it.
  std::vector<std::pair<int, int>> sizes(result.ranges.size(), {0, 0});
  const video::VideoInfo info = video::probe_video(video, false);
  for (auto& s : sizes) s = {info.width, info.height};
  if (to_encode > 0) {
    video::VideoReader reader(video, video::DecodeOptions{0});
    video::RgbFrame frame;
    int64_t index = 0;
    size_t clip = 0;
    std::unique_ptr<video::VideoWriter> writer;
    while (clip < result.ranges.size() && reader.next(frame)) {
      while (clip < result.ranges.size() && result.copied[clip]) ++clip;
      if (clip == result.ranges.size()) break;
      const auto [first, end] = result.ranges[clip];
      if (index >= first && index < end) {
        if (!writer)
          writer = std::make_unique<video::VideoWriter>(fs::join(dir, scene_clip_name(video, clip)), frame.width,
                                                        frame.height, enc);
        writer->write(frame);
        sizes[clip] = {frame.width, frame.height};
      }
      ++index;
      if (index == end) {
        if (writer) writer->finish();
        writer.reset();
        ++clip;
      }
      if (progress && !progress(frames + index)) throw Error(video + ": cancelled");
    }
    while (clip < result.ranges.size() && result.copied[clip]) ++clip;
    if (clip < result.ranges.size())
      throw Error(video + ": decoded " + std::to_string(index) + " frames on the second pass, " +
                  std::to_string(frames) + " on the first");
  }
  for (size_t clip = 0; clip < result.ranges.size(); ++clip) {
    const auto [first, end] = result.ranges[clip];
    MetaRow row = make_row(scene_clip_name(video, clip), caption, "video", sizes[clip].first, sizes[clip].second);
    row.raw["source"] = fs::absolute(video);
    row.raw["frame_range"] = {first, end};
    if (result.scan.fps > 0) row.raw["fps"] = result.scan.fps;
    result.rows.push_back(std::move(row));
  }
  result.metadata_path = fs::join(dir, "metadata.json");
  write_metadata(result.metadata_path, result.rows);
  return result;
}

}  // namespace ws::dataset
