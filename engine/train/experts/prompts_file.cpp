// SPDX-License-Identifier: Apache-2.0
#include "train/experts/prompts_file.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <set>
#include <sstream>

#include "contract/option_values.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/json_depth.h"

namespace ws::train {
namespace {

using json = nlohmann::json;

// A name that stays inside the output folder: letters, digits, '-', '_' and '.', not leading '.'.
bool safe_name(const std::string& s) {
  if (s.empty() || s.size() > 120 || s[0] == '.') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  return true;
}

SamplePrompt from_object(const json& o, const std::string& where) {
  static const std::set<std::string> known = {"prompt",
                                              "prompt_embedding",
                                              "negative_prompt",
                                              "negative_prompt_embedding",
                                              "seed",
                                              "size",
                                              "frame_num",
                                              "image",
                                              "name"};
  for (const auto& [k, v] : o.items())
    if (!known.count(k)) throw Error(where + ": unknown key '" + k + "'");
  auto text = [&](const char* k) -> std::optional<std::string> {
    if (!o.contains(k)) return std::nullopt;
    if (!o[k].is_string()) throw Error(where + ": '" + k + "' must be a string");
    return o[k].get<std::string>();
  };
  auto whole = [&](const char* k, int64_t lo, double hi) -> std::optional<int64_t> {
    if (!o.contains(k)) return std::nullopt;
    if (!o[k].is_number_integer() || o[k].get<double>() < static_cast<double>(lo) || o[k].get<double>() > hi)
      throw Error(where + ": '" + k + "' must be a whole number from " + std::to_string(lo));
    return o[k].get<int64_t>();
  };
  SamplePrompt p;
  p.text = text("prompt").value_or("");
  p.embedding = text("prompt_embedding").value_or("");
  if (p.text.empty() == p.embedding.empty()) throw Error(where + ": give 'prompt' or 'prompt_embedding' (one of them)");
  p.negative = text("negative_prompt");
  p.negative_embedding = text("negative_prompt_embedding");
  p.seed = whole("seed", 0, 9007199254740991.0);
  p.frames = whole("frame_num", 1, 4001);
  if (p.frames && (*p.frames - 1) % 4) throw Error(where + ": 'frame_num' must be 4k+1");
  if (const auto size = text("size")) {
    std::string err;
    p.size_hw = contract::parse_size(*size, err);
    if (!p.size_hw) throw Error(where + ": " + err);
  }
  p.image = text("image").value_or("");
  p.name = text("name").value_or("");
  if (!p.name.empty() && !safe_name(p.name))
    throw Error(where + ": 'name' must be letters, digits, '-', '_' or '.' (no folders), got '" + p.name + "'");
  return p;
}

}  // namespace

std::vector<SamplePrompt> read_prompts_file(const std::string& path) {
  if (!fs::exists(path)) throw Error(path + ": no such prompts file");
  const std::string body = fs::read_file(path);
  std::vector<SamplePrompt> out;
  const bool is_json = path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0;
  if (is_json) {
    check_json_nesting(body, path);
    const json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw Error(path + ": not valid JSON");
    if (!j.is_array()) throw Error(path + ": a JSON prompts file is a list of prompts or objects");
    for (size_t i = 0; i < j.size(); ++i) {
      const std::string where = path + " entry " + std::to_string(i);
      if (j[i].is_string()) {
        SamplePrompt p;
        p.text = j[i].get<std::string>();
        if (p.text.empty()) throw Error(where + ": an empty prompt");
        out.push_back(std::move(p));
      } else if (j[i].is_object()) {
        out.push_back(from_object(j[i], where));
      } else {
        throw Error(where + ": a prompt string or an object");
      }
    }
  } else {
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const auto b = line.find_first_not_of(" \t");
      if (b == std::string::npos || line[b] == '#') continue;
      SamplePrompt p;
      p.text = line.substr(b);
      out.push_back(std::move(p));
    }
  }
  if (out.empty()) throw Error(path + ": no prompt in the file");
  std::set<std::string> names;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].name.empty()) {
      out[i].name = std::to_string(i);
      if (out[i].name.size() < 3) out[i].name.insert(0, 3 - out[i].name.size(), '0');
    }
    if (!names.insert(out[i].name).second) throw Error(path + ": two prompts are named '" + out[i].name + "'");
  }
  return out;
}

}  // namespace ws::train
