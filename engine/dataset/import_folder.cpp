// SPDX-License-Identifier: Apache-2.0
#include "dataset/import_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/sidecar_caption.h"
#include "video/video_decode.h"

namespace ws::dataset {

namespace stdfs = std::filesystem;

namespace {

std::string lower_extension(const std::string& name) {
  std::string ext = stdfs::path(name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

bool one_of(const std::string& ext, std::initializer_list<const char*> list) {
  return std::any_of(list.begin(), list.end(), [&](const char* e) { return ext == e; });
}

// Every media file under root, skipping hidden names and not descending into linked folders.
std::vector<std::string> media_files(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  stdfs::recursive_directory_iterator it(root, stdfs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(root + ": cannot list (" + ec.message() + ")");
  for (; it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw Error(root + ": cannot list (" + ec.message() + ")");
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    if (is_video_name(name) || is_picture_name(name)) out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// file_path as the metadata stores it: relative to its folder when inside, else absolute.
std::string stored_path(const std::string& file, const std::string& meta_dir) {
  const stdfs::path abs = stdfs::absolute(file).lexically_normal();
  const stdfs::path dir = stdfs::absolute(meta_dir).lexically_normal();
  const stdfs::path rel = abs.lexically_relative(dir);
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  return abs.string();
}

}  // namespace

bool is_video_name(const std::string& name) {
  return one_of(lower_extension(name), {".mp4", ".mov", ".mkv", ".avi", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv",
                                        ".flv", ".gif", ".ts", ".mts", ".m2ts", ".3gp", ".ogv"});
}

bool is_picture_name(const std::string& name) {
  return one_of(lower_extension(name), {".png", ".jpg", ".jpeg", ".webp", ".bmp"});
}

std::optional<MetaRow> media_row(const std::string& file, const std::string& meta_dir, const ImportOptions& options,
                                 std::vector<ImportProblem>& problems) {
  const bool picture = is_picture_name(file);
  video::VideoInfo info;
  try {
    info = video::probe_video(file, options.count_frames && !picture);
  } catch (const Error& e) {
    problems.push_back({file, std::string("unreadable: ") + e.what(), true});
    return std::nullopt;
  }
  if (!picture && info.still_image) {
    problems.push_back({file, "a single picture with a video's extension; left out", true});
    return std::nullopt;
  }
  if (!picture && options.min_frames > 0 && info.frames < options.min_frames) {
    problems.push_back(
        {file,
         "too short: " + std::to_string(info.frames) + " frames, the run needs " + std::to_string(options.min_frames),
         true});
    return std::nullopt;
  }
  std::string caption;
  try {
    auto text = read_sidecar_caption(file);
    if (!text || text->empty())
      problems.push_back({file, text ? "empty caption file" : "no caption (.txt or .caption beside it)"});
    caption = text.value_or("");
  } catch (const Error& e) {
    problems.push_back({file, e.what()});
  }
  MetaRow row = make_row(stored_path(file, meta_dir), caption, picture ? "image" : "video", info.width, info.height);
  if (!picture) {
    row.raw["frames"] = info.frames;
    if (info.fps > 0) row.raw["fps"] = info.fps;
    if (info.duration_s > 0) row.raw["duration_s"] = info.duration_s;
  }
  return row;
}

ImportResult import_folder(const ImportOptions& options, const std::function<bool(size_t, size_t)>& progress) {
  if (!fs::is_dir(options.root)) throw Error(options.root + ": not a folder");
  const std::string meta_dir = fs::dirname(fs::absolute(options.metadata_path));
  ImportResult result;
  const std::vector<std::string> files = media_files(options.root);
  result.media_files = files.size();
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& file = files[i];
    if (progress && !progress(i, files.size())) throw Error(options.root + ": cancelled");
    if (auto row = media_row(file, meta_dir, options, result.problems)) result.rows.push_back(std::move(*row));
  }
  if (progress) progress(files.size(), files.size());
  std::sort(result.rows.begin(), result.rows.end(),
            [](const MetaRow& a, const MetaRow& b) { return a.file_path < b.file_path; });
  return result;
}

}  // namespace ws::dataset
