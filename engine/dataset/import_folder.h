// SPDX-License-Identifier: Apache-2.0
// `dataset import`: a metadata.json from a folder of videos and pictures with a same-named `.txt`
// (or `.caption`) caption beside each, the layout musubi-tuner, ai-toolkit and diffusion-pipe use.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dataset/metadata.h"

namespace ws::dataset {

struct ImportOptions {
  std::string root;           // searched recursively (hidden entries and linked folders skipped)
  std::string metadata_path;  // file_path values are relative to its folder when the file is inside it
  int64_t min_frames = 0;     // videos with fewer frames are left out (0: keep all)
  bool count_frames = true;   // exact frame counts (reads every packet); false trusts the headers
};

struct ImportProblem {
  std::string file;
  std::string message;
  bool excluded = false;  // the file has no row (unreadable, too short); else the row is kept
};

struct ImportResult {
  std::vector<MetaRow> rows;  // sorted by file_path
  std::vector<ImportProblem> problems;
  size_t media_files = 0;  // files with a video or picture extension
};

// Whether a file name is one import treats as a video / a picture (by extension, any case).
bool is_video_name(const std::string& name);
bool is_picture_name(const std::string& name);

// One file's row (probed, its sidecar caption as text) with file_path relative to meta_dir when
// inside it; nullopt when the file is left out. Problems are appended to `problems`.
std::optional<MetaRow> media_row(const std::string& file, const std::string& meta_dir, const ImportOptions& options,
                                 std::vector<ImportProblem>& problems);

// Rows for every video and picture under root, probed (displayed width/height, frames, fps,
// duration). `progress` (done, total) returning false stops with ws::Error "cancelled".
ImportResult import_folder(const ImportOptions& options, const std::function<bool(size_t, size_t)>& progress = {});

}  // namespace ws::dataset
