// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_validation_setup.h"

#include <algorithm>
#include <tuple>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/metadata.h"
#include "sampling/flow_schedule.h"
#include "train/experts/sample_render.h"

namespace ws::train {
namespace {

// validation_images: one per prompt, each a file (a picture, a video's first frame, an
// image_latent .safetensors) or row:N of train_data_meta; i2v needs them, t2v takes none.
void resolve_validation_images(io::Config& cfg, ExpertsSetup& s, const std::string& model_type) {
  ExpertsValidationOptions& v = s.validation;
  v.model_type = model_type;
  std::vector<std::string> given = cfg.strs("validation_images");
  const auto all = v.all();
  const size_t prompts = all.size();
  if (!given.empty() && given.size() != prompts)
    return cfg.error("validation_images", std::to_string(given.size()) + " images for " + std::to_string(prompts) +
                                              " validation prompts: give one per prompt");
  if (given.empty()) {  // a prompts file's entries may name their own
    given.resize(prompts);
    for (size_t i = 0; i < prompts; ++i) given[i] = all[i].image;
  }
  const bool any = std::any_of(given.begin(), given.end(), [](const std::string& g) { return !g.empty(); });
  const bool every = std::none_of(given.begin(), given.end(), [](const std::string& g) { return g.empty(); });
  if (model_type == "i2v" && !every)
    return cfg.error("validation_images",
                     "i2v experts render validation videos from start images: give one per prompt (" +
                         std::to_string(prompts) + "), a picture, a video or row:N");
  if (!any) return;
  if (model_type == "t2v") return cfg.error("validation_images", "t2v experts take no start image");
  bool needs_vae = false;
  for (const auto& g : given) {
    if (g.empty()) {
      v.images.emplace_back();
      continue;
    }
    std::string path = g;
    if (g.rfind("row:", 0) == 0) {
      try {
        const auto meta = dataset::read_metadata(s.data.meta, s.data.dir);
        const size_t row = std::stoul(g.substr(4));
        if (row >= meta.rows.size()) throw Error("train_data_meta has " + std::to_string(meta.rows.size()) + " rows");
        path = meta.resolve(meta.rows[row]);
      } catch (const std::exception& e) {
        cfg.error("validation_images", g + ": " + e.what());
        continue;
      }
    }
    if (!fs::exists(path)) cfg.error("validation_images", "not found: " + path);
    needs_vae = needs_vae || !(path.size() > 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0);
    v.images.push_back(path);
  }
  if (needs_vae && s.vae_file.empty())
    cfg.error("validation_images", "pictures need the VAE to encode them: set vae_path (or give image_latent files)");
}

}  // namespace

void resolve_validation(io::Config& cfg, ExpertsSetup& s, const models::WanConfig& mc, const nlohmann::json& sched,
                        bool have_model) {
  // Validation videos (docs/design/sampling.md §12.3): the preset's sampler with the run's routing.
  ExpertsValidationOptions& v = s.validation;
  v.prompts = cfg.strs("validation_prompts");
  v.prompt_files = cfg.strs("validation_prompt_embeddings");
  if (cfg.is_set("validation_prompts_file")) {
    try {
      v.from_file = read_prompts_file(cfg.str("validation_prompts_file"));
      for (const auto& p : v.from_file)
        if (p.negative || p.negative_embedding)
          throw Error(cfg.str("validation_prompts_file") +
                      ": validation takes no per-prompt negative prompt (validation_negative_prompt is every video's)");
    } catch (const Error& e) {
      cfg.error("validation_prompts_file", e.what());
    }
  }
  v.negative_prompt = cfg.str("validation_negative_prompt");
  v.every = cfg.integer("validation_steps");
  v.at_start = cfg.boolean("validation_at_start");
  v.seed = static_cast<uint64_t>(cfg.opt_integer("validation_seed").value_or(cfg.integer("seed")));
  if (v.active() && have_model) {
    try {
      SampleSettings& st = v.settings;
      st = sample_preset("t2v-A14B");
      st.sampler.boundary = s.routing.boundary_ratio;
      st.sampler.shift = cfg.opt_real("validation_sample_shift").value_or(sched.value("shift", st.sampler.shift));
      st.sampler.solver = sampling::parse_solver(cfg.str("validation_sample_solver"));
      if (cfg.str("validation_mode") == "preview") {
        apply_preview(st);
      } else {
        st.width = 832, st.height = 480;
      }
      if (cfg.is_set("validation_size")) {
        const std::string sz = cfg.str("validation_size");
        const auto x = sz.find_first_of("x*");
        if (x == std::string::npos) throw Error("validation_size must be WxH, got '" + sz + "'");
        st.width = std::stoll(sz.substr(0, x));
        st.height = std::stoll(sz.substr(x + 1));
      }
      if (cfg.is_set("validation_frames")) st.frames = cfg.integer("validation_frames");
      if (cfg.is_set("validation_sample_steps")) st.sampler.steps = cfg.integer("validation_sample_steps");
      const auto g = cfg.reals("validation_guide_scale");
      if (g.size() > 2) throw Error("validation_guide_scale takes one scale, or low and high");
      if (!g.empty()) st.sampler.guide_low = g.front(), st.sampler.guide_high = g.back();
      st.task = "validation";
      sample_latent_shape(st, mc.out_dim);  // size and frames fit the experts
      for (const auto& p : v.from_file) {   // and each entry's own
        SampleSettings e = st;
        if (p.size_hw) std::tie(e.height, e.width) = *p.size_hw;
        if (p.frames) e.frames = *p.frames;
        sample_latent_shape(e, mc.out_dim);
      }
    } catch (const std::exception& e) {
      cfg.error("validation_prompts", e.what());
    }
    resolve_validation_images(cfg, s, mc.model_type);
    // Texts need their embeddings, or the encoder to make them before the first step.
    if (!s.text_encoder && !s.text_dir.empty())
      for (const auto& [text, file] : v.text_files(s.text_dir))
        if (!fs::exists(file))
          cfg.error("validation_prompts", "no embedding for \"" + text.substr(0, 60) + "\" (" + file +
                                              "): set text_encoder_path and tokenizer_path to encode it");
  }
}

}  // namespace ws::train
