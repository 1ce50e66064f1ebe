// SPDX-License-Identifier: Apache-2.0
// VideoX-Fun `metadata.json`: a JSON list of rows {file_path, text, type, width, height}
// (docs/design/upsampler-training.md §3.1, docs/design/architecture.md "Formats"). Reading never drops a row: field
// problems are recorded per row so `probe` can report all of them, and keys we do not know
// are kept (in order) when the file is written back.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace ws::dataset {

struct MetaRow {
  std::string file_path;
  std::string text;
  std::string type = "video";  // a missing type means "video" (docs/design/upsampler-training.md §3.1 [D])
  std::optional<int64_t> width, height;
  // In and out points: the frames [first, end) of this row's own file that training uses (the
  // `trim` key; the file itself is never cut). A clip cut by `dataset split` records where it came
  // from in `frame_range`, which is provenance, not a trim.
  std::optional<std::pair<int64_t, int64_t>> trim;
  nlohmann::ordered_json raw;         // the object as read
  std::vector<std::string> problems;  // wrong or missing fields ("`width` must be ...")

  bool is_image() const { return type == "image"; }
};

struct Metadata {
  std::string path;      // the metadata.json
  std::string data_dir;  // relative file_path values resolve against this
  std::vector<MetaRow> rows;

  // The file a row names: absolute as is, else joined to data_dir.
  std::string resolve(const MetaRow& row) const;
};

// Throws ws::Error naming the file when it cannot be read, is not JSON or is not a list.
// `train_data_dir` empty: paths resolve against the folder of the metadata.json.
Metadata read_metadata(const std::string& path, const std::string& train_data_dir = {});
Metadata parse_metadata(const std::string& text, const std::string& path, const std::string& train_data_dir = {});

// Rows back to JSON text (raw objects with file_path/text/type/width/height updated).
std::string metadata_to_json(const std::vector<MetaRow>& rows);
// Atomic write; the previous file is kept as `path + ".bak"`.
void write_metadata(const std::string& path, const std::vector<MetaRow>& rows);

// A fresh row (for writers such as demo-data).
MetaRow make_row(const std::string& file_path, const std::string& text, const std::string& type,
                 std::optional<int64_t> width = std::nullopt, std::optional<int64_t> height = std::nullopt);

}  // namespace ws::dataset
