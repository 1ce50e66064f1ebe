// SPDX-License-Identifier: Apache-2.0
#include "dataset/row_check.h"

#include "core/error.h"
#include "core/fs.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#endif

namespace ws::dataset {

#ifdef WANSTUDIO_HAVE_VIDEO

bool video_support_built() { return true; }

RowReport check_row(const Metadata& meta, size_t index, const CheckOptions& options) {
  const MetaRow& row = meta.rows.at(index);
  RowReport r;
  r.index = index;
  r.problems = row.problems;
  r.file = meta.resolve(row);
  if (r.file.empty()) return r;
  try {
    video::VideoInfo vi = video::probe_video(r.file, options.count_frames && !row.is_image());
    r.readable = true;
    r.width = vi.width;
    r.height = vi.height;
    r.rotation = vi.rotation;
    r.frames = row.is_image() ? 1 : vi.frames;
    r.fps = vi.fps;
    r.duration_s = vi.duration_s;
    r.codec = vi.codec;
  } catch (const Error& e) {
    // The message already names the file; the report names the row.
    std::string msg = e.what();
    if (msg.compare(0, r.file.size() + 2, r.file + ": ") == 0) msg = msg.substr(r.file.size() + 2);
    r.problems.push_back(msg);
    return r;
  }
  if (r.frames < 1) r.problems.push_back("no frames");
  if (row.trim && row.is_image()) r.problems.push_back("`trim` on a picture");
  else if (row.trim && r.frames > 0 && row.trim->second > r.frames)
    r.problems.push_back("`trim` [" + std::to_string(row.trim->first) + ", " + std::to_string(row.trim->second) +
                         ") is past the file's " + std::to_string(r.frames) + " frames");
  if (row.width && row.height && (*row.width != r.width || *row.height != r.height))
    r.problems.push_back("metadata says " + std::to_string(*row.width) + "x" + std::to_string(*row.height) +
                         ", the file is " + std::to_string(r.width) + "x" + std::to_string(r.height) +
                         (r.rotation ? " (displayed, after " + std::to_string(r.rotation) + "° rotation)" : ""));
  return r;
}

#else

bool video_support_built() { return false; }

RowReport check_row(const Metadata&, size_t, const CheckOptions&) {
  throw Error("video support is not built into this wanstudio-engine (configure with -DWANSTUDIO_VIDEO=ON and FFmpeg)");
}

#endif

std::vector<RowReport> check_rows(const Metadata& meta, const CheckOptions& options,
                                  const std::function<void(size_t, size_t)>& progress) {
  std::vector<RowReport> out;
  out.reserve(meta.rows.size());
  for (size_t i = 0; i < meta.rows.size(); ++i) {
    out.push_back(check_row(meta, i, options));
    if (progress) progress(i + 1, meta.rows.size());
  }
  return out;
}

}  // namespace ws::dataset
