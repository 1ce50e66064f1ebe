// SPDX-License-Identifier: Apache-2.0
#include "dataset/metadata.h"

#include <cmath>
#include <filesystem>

#include "core/json_depth.h"
#include "core/error.h"
#include "core/fs.h"

namespace ws::dataset {
namespace {

using ojson = nlohmann::ordered_json;

std::string type_name(const ojson& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "a list";
  return "an object";
}

// A positive whole number (512 or 512.0); anything else is a problem.
std::optional<int64_t> read_size(const ojson& obj, const char* key, std::vector<std::string>& problems) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  const ojson& v = *it;
  if (v.is_number_integer() && v.get<int64_t>() > 0) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d > 0 && d < 1e9 && std::floor(d) == d) return static_cast<int64_t>(d);
  }
  problems.push_back(std::string("`") + key + "` must be a positive whole number, got " +
                     (v.is_number() ? v.dump() : type_name(v)));
  return std::nullopt;
}

MetaRow parse_row(const ojson& obj) {
  MetaRow row;
  row.raw = obj;
  if (!obj.is_object()) {
    row.problems.push_back("row is " + type_name(obj) + ", expected an object");
    return row;
  }
  auto fp = obj.find("file_path");
  if (fp == obj.end() || fp->is_null()) row.problems.push_back("`file_path` is missing");
  else if (!fp->is_string()) row.problems.push_back("`file_path` must be a string, got " + type_name(*fp));
  else if (fp->get<std::string>().empty()) row.problems.push_back("`file_path` is empty");
  else if (fp->get<std::string>().find('\0') != std::string::npos)
    // The C library would stop at the NUL and open another file.
    row.problems.push_back("`file_path` contains a NUL character");
  else row.file_path = fp->get<std::string>();
  auto tx = obj.find("text");
  if (tx != obj.end() && !tx->is_null()) {
    if (tx->is_string()) row.text = tx->get<std::string>();
    else row.problems.push_back("`text` must be a string, got " + type_name(*tx));
  }
  auto ty = obj.find("type");
  if (ty != obj.end() && !ty->is_null()) {
    if (!ty->is_string()) {
      row.problems.push_back("`type` must be \"video\" or \"image\", got " + type_name(*ty));
    } else if (ty->get<std::string>() != "video" && ty->get<std::string>() != "image") {
      row.problems.push_back("`type` must be \"video\" or \"image\", got \"" + ty->get<std::string>() + "\"");
    } else {
      row.type = ty->get<std::string>();
    }
  }
  row.width = read_size(obj, "width", row.problems);
  row.height = read_size(obj, "height", row.problems);
  bool has_w = obj.contains("width") && !obj["width"].is_null(),
       has_h = obj.contains("height") && !obj["height"].is_null();
  if (has_w != has_h) row.problems.push_back(has_w ? "`width` without `height`" : "`height` without `width`");
  if (auto tr = obj.find("trim"); tr != obj.end() && !tr->is_null()) {
    const bool ok = tr->is_array() && tr->size() == 2 && (*tr)[0].is_number_integer() && (*tr)[1].is_number_integer() &&
                    (*tr)[0].get<int64_t>() >= 0 && (*tr)[0].get<int64_t>() < (*tr)[1].get<int64_t>();
    if (ok) row.trim = std::make_pair((*tr)[0].get<int64_t>(), (*tr)[1].get<int64_t>());
    else row.problems.push_back("`trim` must be [first, end) frame numbers with 0 <= first < end, got " + tr->dump());
  }
  return row;
}

}  // namespace

std::string Metadata::resolve(const MetaRow& row) const {
  if (row.file_path.empty()) return {};
  if (std::filesystem::path(row.file_path).is_absolute() || data_dir.empty()) return row.file_path;
  return fs::join(data_dir, row.file_path);
}

Metadata parse_metadata(const std::string& text, const std::string& path, const std::string& train_data_dir) {
  Metadata m;
  m.path = path;
  m.data_dir = train_data_dir.empty() ? fs::dirname(path) : train_data_dir;
  check_json_nesting(text, path);
  ojson doc;
  try {
    doc = ojson::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse errors, and numbers like 1e999 (out_of_range)
    // e.what() reads "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
    std::string what = e.what();
    auto pos = what.find("] ");
    throw Error(path + ": not valid JSON (" + (pos == std::string::npos ? what : what.substr(pos + 2)) + ")");
  }
  if (!doc.is_array())
    throw Error(path + ": expected a JSON list of rows ({\"file_path\", \"text\", \"type\", ...}), got " +
                type_name(doc));
  m.rows.reserve(doc.size());
  for (const auto& obj : doc) m.rows.push_back(parse_row(obj));
  return m;
}

Metadata read_metadata(const std::string& path, const std::string& train_data_dir) {
  if (!fs::exists(path)) throw Error(path + ": no such file");
  if (fs::is_dir(path)) {
    // A dataset's folder stands for the metadata.json inside it.
    const std::string inside = fs::join(path, "metadata.json");
    if (fs::exists(inside) && !fs::is_dir(inside)) return read_metadata(inside, train_data_dir);
    throw Error(path +
                ": is a folder without a metadata.json (make one from its clips and .txt captions with "
                "`wanstudio-engine dataset import " +
                path + " --output " + inside + "`, or the studio's New from folder)");
  }
  return parse_metadata(fs::read_file(path), path, train_data_dir);
}

std::string metadata_to_json(const std::vector<MetaRow>& rows) {
  ojson doc = ojson::array();
  for (const auto& row : rows) {
    if (!row.raw.is_object() && !row.raw.is_null()) {
      doc.push_back(row.raw);  // a malformed row is kept as it was, never dropped
      continue;
    }
    ojson obj = row.raw.is_object() ? row.raw : ojson::object();
    // Fields whose stored value is mistyped stay as they are, for the user to fix.
    if (!row.file_path.empty()) obj["file_path"] = row.file_path;
    bool text_ok = !obj.contains("text") || obj["text"].is_null() || obj["text"].is_string();
    if (text_ok && (!row.text.empty() || obj.contains("text"))) obj["text"] = row.text;
    bool type_ok = !obj.contains("type") || obj["type"] == "video" || obj["type"] == "image";
    if (type_ok) obj["type"] = row.type;  // written out: VideoX-Fun's sampler reads a missing type as "image"
    if (row.width) obj["width"] = *row.width;
    if (row.height) obj["height"] = *row.height;
    if (row.trim) obj["trim"] = {row.trim->first, row.trim->second};
    else if (obj.contains("trim") && obj["trim"].is_array()) obj.erase("trim");  // cleared in the studio
    doc.push_back(std::move(obj));
  }
  return doc.dump(4, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void write_metadata(const std::string& path, const std::vector<MetaRow>& rows) {
  fs::write_file_with_backup(path, metadata_to_json(rows));
}

MetaRow make_row(const std::string& file_path, const std::string& text, const std::string& type,
                 std::optional<int64_t> width, std::optional<int64_t> height) {
  MetaRow row;
  row.file_path = file_path;
  row.text = text;
  row.type = type;
  row.width = width;
  row.height = height;
  row.raw = ojson::object();
  row.raw["file_path"] = file_path;
  row.raw["text"] = text;
  row.raw["type"] = type;
  return row;
}

}  // namespace ws::dataset
