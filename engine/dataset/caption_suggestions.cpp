// SPDX-License-Identifier: Apache-2.0
#include "dataset/caption_suggestions.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/fs.h"

namespace ws::dataset {

const char* const kDefaultCaptionPrompt =
    "These are {frames} frames of one video clip, in order. Describe the clip in one dense paragraph "
    "for a text-to-video model: the main subject and how it looks, what moves and how, the camera "
    "(framing, angle, movement), the scene and its lighting, and the visual style. Plain prose, no "
    "lists, no preamble, no mention of frames.";

namespace {

bool has_suggestion(const MetaRow& row) {
  if (!row.raw.is_object()) return false;
  auto it = row.raw.find(kSuggestedKey);
  return it != row.raw.end() && it->is_string() && !it->get<std::string>().empty();
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

std::vector<size_t> rows_to_caption(const Metadata& meta, const std::vector<size_t>& selected, bool overwrite) {
  std::vector<size_t> out;
  for (size_t i : selected)
    if (i >= meta.rows.size())
      throw Error("row " + std::to_string(i) + " is not in " + meta.path + " (" + std::to_string(meta.rows.size()) +
                  " rows)");
  auto want = [&](size_t i) {
    const MetaRow& r = meta.rows[i];
    if (overwrite) return true;
    return !has_suggestion(r) && (!selected.empty() || blank(r.text));
  };
  if (selected.empty()) {
    for (size_t i = 0; i < meta.rows.size(); ++i)
      if (want(i)) out.push_back(i);
  } else {
    for (size_t i : selected)
      if (want(i) && std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  return out;
}

std::vector<size_t> parse_row_list(const std::string& text) {
  std::vector<size_t> out;
  std::stringstream ss(text);
  std::string part;
  auto number = [&](const std::string& s) -> size_t {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      throw Error("rows: '" + text + "' is not a list like 0,3,5-9");
    return static_cast<size_t>(std::stoul(s));
  };
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      out.push_back(number(part));
      continue;
    }
    const size_t a = number(part.substr(0, dash)), b = number(part.substr(dash + 1));
    if (b < a || b - a > 10000000) throw Error("rows: '" + part + "' is not a range low-high");
    for (size_t i = a; i <= b; ++i) out.push_back(i);
  }
  if (out.empty()) throw Error("rows: '" + text + "' names no row");
  return out;
}

std::vector<int64_t> caption_frame_indices(int64_t total, int64_t n) {
  if (total <= 0 || n <= 0) return {};
  n = std::min(n, total);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(std::min(total - 1, (2 * i + 1) * total / (2 * n)));
  return out;
}

std::string expand_caption_prompt(const std::string& prompt, const std::string& file_path, int64_t frames) {
  std::string out = prompt;
  auto replace = [&](const std::string& key, const std::string& value) {
    for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + value.size()))
      out.replace(at, key.size(), value);
  };
  replace("{file_name}", fs::basename(file_path));
  replace("{frames}", std::to_string(frames));
  return out;
}

std::string caption_sidecar_path(const std::string& metadata_path) {
  const std::string ext = ".json";
  if (metadata_path.size() > ext.size() &&
      metadata_path.compare(metadata_path.size() - ext.size(), ext.size(), ext) == 0)
    return metadata_path.substr(0, metadata_path.size() - ext.size()) + ".captions.json";
  return metadata_path + ".captions.json";
}

nlohmann::ordered_json read_caption_sidecar(const std::string& metadata_path) {
  const std::string path = caption_sidecar_path(metadata_path);
  if (!fs::exists(path)) return nlohmann::ordered_json::object();
  const std::string text = fs::read_json_text(path);
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw Error(path + ": not a JSON object");
  return j;
}

void write_caption_suggestions(const std::string& metadata_path, const std::vector<MetaRow>& rows,
                               const nlohmann::ordered_json& sidecar) {
  write_metadata(metadata_path, rows);
  fs::write_file_atomic(caption_sidecar_path(metadata_path), sidecar.dump(2) + "\n");
}

}  // namespace ws::dataset
