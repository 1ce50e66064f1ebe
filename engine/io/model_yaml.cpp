// SPDX-License-Identifier: Apache-2.0
#include "io/model_yaml.h"

#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/yaml_limits.h"

namespace ws::io {
namespace {

nlohmann::json node_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      auto a = nlohmann::json::array();
      for (const auto& item : n) a.push_back(node_to_json(item));
      return a;
    }
    case YAML::NodeType::Map: {
      auto o = nlohmann::json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = node_to_json(kv.second);
      return o;
    }
    case YAML::NodeType::Scalar: break;
  }
  const std::string s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: always a string
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == "null" || s == "~" || s == "None" || s.empty()) return nullptr;
  try {
    size_t used = 0;
    long long i = std::stoll(s, &used);
    if (used == s.size()) return i;
  } catch (...) {
  }
  try {
    size_t used = 0;
    double d = std::stod(s, &used);
    if (used == s.size()) return d;
  } catch (...) {
  }
  return s;
}

}  // namespace

nlohmann::json yaml_node_to_json(const YAML::Node& node) { return node_to_json(node); }

nlohmann::json ModelYaml::section(const std::string& name) const {
  if (doc.is_object() && doc.contains(name) && doc[name].is_object()) return doc[name];
  return nlohmann::json::object();
}

nlohmann::json yaml_text_to_json(const std::string& text, const std::string& source) {
  try {
    YAML::Node root = YAML::Load(text);
    check_yaml_size(root, source);
    return node_to_json(root);
  } catch (const YAML::Exception& e) {
    throw Error(source + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML (" + e.msg + ")");
  }
}

ModelYaml read_model_yaml(const std::string& path) {
  ModelYaml m;
  m.path = path;
  m.doc = yaml_text_to_json(fs::read_file(path), path);
  if (m.doc.is_null()) m.doc = nlohmann::json::object();
  if (!m.doc.is_object()) throw Error(path + ": a model YAML must be a mapping of sections");
  return m;
}

}  // namespace ws::io
