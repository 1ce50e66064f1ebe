// SPDX-License-Identifier: Apache-2.0
#include "train/run_setup.h"

#include "core/error.h"
#include "core/fs.h"
#include "data/demo_data.h"
#include "models/wan_vae.h"
#include "runtime/run_dir.h"

namespace ws::train {

using json = nlohmann::json;

bool make_demo_data_if_asked(const io::Config& cfg) {
  if (cfg.opt_str("demo_data").value_or("") != "auto" || !cfg.is_set("train_data_meta")) return false;
  const std::string meta = cfg.str("train_data_meta");
  if (fs::exists(meta)) return false;
  const std::string dir = cfg.opt_str("train_data_dir").value_or(fs::dirname(meta));
  data::write_demo_dataset(dir, 0, {}, meta);
  return true;
}

std::string resolve_vae_file(io::Config& cfg, const json& vae_config) {
  std::string file;
  if (cfg.is_set("vae_path")) {
    file = cfg.str("vae_path");
    if (!fs::exists(file)) cfg.error("vae_path", "file not found: " + file);
  } else if (cfg.is_set("pretrained_model_name_or_path")) {
    // The declared type picks the default file (docs/design/wan21-vae.md §7).
    std::string sub = "Wan2.2_VAE.pth";
    if (vae_config.contains("vae_type") && vae_config["vae_type"].is_string()) {
      try {
        if (models::parse_vae_type(vae_config["vae_type"].get<std::string>(), "vae_type") == models::VaeType::Wan21)
          sub = "Wan2.1_VAE.pth";
      } catch (const Error& e) {
        cfg.error("vae_type", e.what());
      }
    }
    if (vae_config.contains("vae_subpath") && vae_config["vae_subpath"].is_string())
      sub = vae_config["vae_subpath"].get<std::string>();
    file = fs::join(cfg.str("pretrained_model_name_or_path"), sub);
    if (!fs::exists(file)) cfg.error("pretrained_model_name_or_path", "no VAE at " + file);
  } else {
    cfg.add_error(
        "no VAE: set pretrained_model_name_or_path (a folder holding Wan2.2_VAE.pth or Wan2.1_VAE.pth) or vae_path");
  }
  return file;
}

std::optional<std::string> find_resume_checkpoint(const std::string& value, const std::string& output_dir,
                                                  std::string* warning, std::string* error) {
  if (value == "latest") {
    auto c = runtime::latest_checkpoint(output_dir);
    if (!c) {
      if (warning) *warning = "resume_from_checkpoint latest: no checkpoint in " + output_dir + "; starting fresh";
      return std::nullopt;
    }
    return c->path;
  }
  if (fs::is_dir(value)) return value;
  const std::string under = fs::join(output_dir, fs::basename(value));
  if (fs::is_dir(under)) return under;
  if (error) *error = "checkpoint '" + value + "' not found (nor " + under + ")";
  return std::nullopt;
}

json read_trainer_state_json(const std::string& dir) {
  const std::string state_path = fs::join(fs::join(dir, "trainer_state"), "state.json");
  if (!fs::exists(state_path))
    throw Error(dir + ": not a resumable Wan Studio checkpoint (no trainer_state/state.json)");
  try {
    return json::parse(fs::read_json_text(state_path));
  } catch (const json::exception& e) {
    throw Error(state_path + ": invalid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace ws::train
