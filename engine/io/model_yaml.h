// SPDX-License-Identifier: Apache-2.0
// VideoX-Fun model YAMLs (`config_path`, e.g. config/wan2.2/wan_civitai_5b.yaml) as JSON
// sections. Sections and keys the engine does not use are ignored (docs/design/architecture.md, Formats);
// a used key with the wrong type is an error the caller raises when it reads it.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace YAML {
class Node;
}

namespace ws::io {

struct ModelYaml {
  std::string path;
  nlohmann::json doc = nlohmann::json::object();  // the whole file, scalars typed

  // A top-level section (`latent_upsampler_kwargs`, `vae_kwargs`, ...) or {} when absent.
  nlohmann::json section(const std::string& name) const;
};

// Throws ws::Error naming the file on a missing file or bad YAML.
ModelYaml read_model_yaml(const std::string& path);
// A YAML document as JSON: integers, floats, booleans and null typed; everything else a string.
nlohmann::json yaml_text_to_json(const std::string& text, const std::string& source);
// The same for a parsed node (quoted scalars stay strings).
nlohmann::json yaml_node_to_json(const YAML::Node& node);

}  // namespace ws::io
