// SPDX-License-Identifier: Apache-2.0
#include "train/vae/vae_setup.h"

#include "core/error.h"
#include "core/fs.h"
#include "dataset/row_check.h"
#include "models/wan_vae_config.h"
#include "train/training_verb.h"
#include "train/vae/vae_trainer.h"

namespace ws::train {

std::string find_vae_checkpoint(const std::string& output_dir, const std::string& r) {
  for (const std::string& d : {r.rfind('/', 0) == 0 ? r : fs::join(output_dir, r), fs::absolute(r)})
    if (fs::exists(fs::join(d, kVaeWeightsFile))) return d;
  return {};
}

VaeSetup resolve_vae_setup(io::Config& cfg) {
  VaeSetup s;
  s.run = parse_run_options(cfg);
  s.data = parse_data_options(cfg);
  s.optimizer = parse_optimizer_options(cfg);
  s.kl_weight = cfg.real("kl_weight");
  s.random_crop_size = cfg.opt_integer("random_crop_size").value_or(0);
  s.save_path = cfg.opt_str("save_path").value_or(fs::join(s.run.output_dir, kVaeWeightsFile));

  // Frames 4k+1 and sizes a multiple of 16 are the schema's shape rules, checked while loading.
  if (s.random_crop_size > s.data.sample_size)
    cfg.error("random_crop_size", "must not exceed video_sample_size (" + std::to_string(s.data.sample_size) + ")");
  check_data_options(cfg, s.data);
  if (cfg.is_set("config_path")) {
    s.widths_source = cfg.str("config_path");
    try {
      s.widths = models::read_vae_config_yaml(s.widths_source);
      models::WanVaeConfig::from_json(s.widths, s.widths_source, tiny_vae_config()).validate(s.widths_source);
    } catch (const Error& e) {
      cfg.error("config_path", e.what());
    }
  }
  if (cfg.is_set("vae_path")) {
    s.warm_start = cfg.str("vae_path");
    if (!fs::exists(*s.warm_start)) cfg.error("vae_path", "no such file: " + *s.warm_start);
  }
  if (auto r = s.run.resume_from_checkpoint; r && *r != "latest") {
    const std::string dir = find_vae_checkpoint(s.run.output_dir, *r);
    if (dir.empty())
      cfg.error("resume_from_checkpoint", "no checkpoint with " + std::string(kVaeWeightsFile) + " at " + *r);
    else s.resume_dir = dir;
  }
  if (!dataset::video_support_built())
    cfg.add_error("train-vae needs video support, which is not built into this wanstudio-engine");
  check_output_dir_free(cfg, s.run);
  check_batch_fits(cfg, s.data);
  return s;
}

}  // namespace ws::train
