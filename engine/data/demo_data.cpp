// SPDX-License-Identifier: Apache-2.0
#include "data/demo_data.h"

#include <cstdio>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/metadata.h"
#include "data/synthetic.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_encode.h"
#endif

namespace ws::data {

#ifdef WANSTUDIO_HAVE_VIDEO
namespace {

struct ClipShape {
  int width, height, frames;
};

// Aspect ratios 16:9, 9:16, 1:1, 4:3, 3:4 and a wide 2.35:1; lengths 4k+1 from 17 to 65.
constexpr ClipShape kClips[] = {
    {384, 216, 33}, {320, 180, 49}, {256, 144, 65}, {216, 384, 41}, {144, 256, 25}, {256, 256, 65},
    {288, 288, 17}, {320, 320, 29}, {320, 240, 25}, {288, 216, 57}, {240, 320, 33}, {384, 164, 21},
};
constexpr ClipShape kImages[] = {{384, 256, 1}, {256, 384, 1}};

uint64_t clip_seed(uint64_t seed, uint64_t i) {
  uint64_t s = seed ^ (0xD1B54A32D192ED03ULL * (i + 1));
  return splitmix64(s);
}

}  // namespace

DemoDataSummary write_demo_dataset(const std::string& out_dir, uint64_t seed,
                                   const std::function<void(int, int)>& progress, const std::string& metadata_path) {
  fs::make_dirs(fs::join(out_dir, "videos"));
  fs::make_dirs(fs::join(out_dir, "images"));
  const int n_videos = static_cast<int>(std::size(kClips)), n_images = static_cast<int>(std::size(kImages));
  const int total = n_videos + n_images;
  DemoDataSummary sum;
  std::vector<dataset::MetaRow> rows;
  video::EncodeOptions enc;
  enc.fps = 16;
  enc.crf = 20;
  enc.deterministic = true;  // the same seed gives the same files, byte for byte, on every machine
  int done = 0;
  for (int i = 0; i < n_videos; ++i) {
    SyntheticSpec spec{kClips[i].width, kClips[i].height, kClips[i].frames, clip_seed(seed, static_cast<uint64_t>(i))};
    char name[64];
    std::snprintf(name, sizeof name, "videos/clip_%02d.mp4", i);
    std::string path = fs::join(out_dir, name);
    video::write_video(path, make_synthetic_clip(spec), enc);
    sum.bytes += fs::file_size(path);
    rows.push_back(dataset::make_row(name, describe_scene(make_scene(spec)), "video", spec.width, spec.height));
    ++sum.videos;
    if (progress) progress(++done, total);
  }
  for (int i = 0; i < n_images; ++i) {
    SyntheticSpec spec{kImages[i].width, kImages[i].height, 1, clip_seed(seed, static_cast<uint64_t>(100 + i))};
    char name[64];
    std::snprintf(name, sizeof name, "images/image_%02d.png", i);
    std::string path = fs::join(out_dir, name);
    SyntheticScene scene = make_scene(spec);
    video::write_png(path, render_frame(spec, scene, 0));
    sum.bytes += fs::file_size(path);
    rows.push_back(dataset::make_row(name, describe_scene(scene, true), "image", spec.width, spec.height));
    ++sum.images;
    if (progress) progress(++done, total);
  }
  sum.metadata_path = metadata_path.empty() ? fs::join(out_dir, "metadata.json") : metadata_path;
  if (!metadata_path.empty()) fs::make_dirs(fs::dirname(metadata_path));
  dataset::write_metadata(sum.metadata_path, rows);
  sum.bytes += fs::file_size(sum.metadata_path);
  return sum;
}

#else

DemoDataSummary write_demo_dataset(const std::string&, uint64_t, const std::function<void(int, int)>&,
                                   const std::string&) {
  throw Error("video support is not built into this wanstudio-engine (configure with -DWANSTUDIO_VIDEO=ON and FFmpeg)");
}

#endif

}  // namespace ws::data
