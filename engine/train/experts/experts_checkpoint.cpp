// SPDX-License-Identifier: Apache-2.0
#include "train/experts/experts_checkpoint.h"

#include <map>

#include "train/run_setup.h"

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/wan_dit_config.h"
#include "train/experts/expert_routing.h"

namespace ws::train {

using json = nlohmann::json;

json ExpertsState::to_json() const {
  json j = {{"format_version", format_version},
            {"global_step", global_step},
            {"steps_high", steps_high},
            {"steps_low", steps_low},
            {"epoch", epoch},
            {"cursor", cursor.to_json()},
            {"seed", seed},
            {"eval_seed", eval_seed},
            {"boundary_ratio", boundary_ratio},
            {"boundary", boundary},
            {"routing_mode", routing_mode},
            {"shift", shift},
            {"sigma_min", kSigmaMin},
            {"app_version", WANSTUDIO_VERSION_STRING},
            {"options_sha256", options_sha256},
            {"options", options}};
  for (auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

ExpertsState ExpertsState::from_json(const json& j, const std::string& source) {
  ExpertsState s;
  try {
    s.format_version = j.at("format_version").get<int64_t>();
    if (s.format_version != 1) throw Error(source + ": unknown format_version " + std::to_string(s.format_version));
    s.global_step = j.at("global_step").get<int64_t>();
    s.steps_high = j.at("steps_high").get<int64_t>();
    s.steps_low = j.at("steps_low").get<int64_t>();
    if (s.steps_high < 0 || s.steps_low < 0 || s.steps_high + s.steps_low != s.global_step)
      throw Error(source + ": steps_high + steps_low must equal global_step");
    s.epoch = j.at("epoch").get<int64_t>();
    s.cursor = data::LoaderCursor::from_json(j.at("cursor"), source);
    s.seed = j.at("seed").get<int64_t>();
    s.eval_seed = j.value("eval_seed", s.seed);
    s.boundary_ratio = j.at("boundary_ratio").get<double>();
    s.boundary = j.at("boundary").get<int64_t>();
    s.routing_mode = j.at("routing_mode").get<std::string>();
    s.shift = j.at("shift").get<double>();
    s.options_sha256 = j.value("options_sha256", std::string());
    s.options = j.value("options", json::object());
    for (const char* k : {"lr", "dtypes", "fp8", "sources", "lora"})
      if (j.contains(k)) s.extra[k] = j[k];
  } catch (const json::exception& e) {
    throw Error(source + ": " + e.what());
  }
  return s;
}

json expert_config_json(const models::WanConfig& cfg) {
  json c = cfg.to_json();
  c["_class_name"] = "WanModel";
  return c;
}

std::string lora_file_name(bool high, models::LoraFormat format) {
  return std::string(high ? "high" : "low") + "_noise_lora" + (format == models::LoraFormat::Peft ? "_diffusers" : "") +
         ".safetensors";
}

void write_experts_checkpoint(const std::string& dir, ExpertStep& high, ExpertStep& low, const ExpertsState& state,
                              const CheckpointBases& bases) {
  const std::string ts = fs::join(dir, "trainer_state");
  fs::make_dirs(ts);
  for (ExpertStep* e : {&high, &low}) {
    const bool h = e == &high;
    if (e->lora())
      for (auto f : {models::LoraFormat::Musubi, models::LoraFormat::Peft})
        e->lora()->save(fs::join(dir, lora_file_name(h, f)), f);
    if (!e->lora() || (h ? bases.high : bases.low))
      io::write_model_dir(fs::join(dir, h ? "high_noise_transformer" : "low_noise_transformer"),
                          expert_config_json(e->model()->config()), e->weights_state());
  }
  io::write_safetensors(fs::join(ts, "optimizer_high.safetensors"), high.optimizer_state());
  io::write_safetensors(fs::join(ts, "optimizer_low.safetensors"), low.optimizer_state());
  fs::write_file_atomic(fs::join(ts, "state.json"), state.to_json().dump(2) + "\n");
}

LoadedExperts read_experts_checkpoint(const std::string& dir) {
  LoadedExperts c;
  const std::string ts = fs::join(dir, "trainer_state");
  const std::string state_path = fs::join(ts, "state.json");
  const json j = read_trainer_state_json(dir);
  c.state = ExpertsState::from_json(j, state_path);
  for (const bool high : {true, false}) {
    const std::string name = high ? "high_noise_transformer" : "low_noise_transformer";
    const std::string sub = fs::join(dir, name), lora = fs::join(dir, lora_file_name(high));
    if (fs::exists(lora)) (high ? c.high_lora : c.low_lora) = io::read_safetensors(lora);
    if (!fs::is_dir(sub)) {
      if (!fs::exists(lora)) throw Error(dir + ": " + name + "/ is missing");
      continue;
    }
    io::ModelDir md = io::read_model_dir(sub);
    (high ? c.high_config : c.low_config) = md.config;
    (high ? c.high_weights : c.low_weights) = std::move(md.weights);
    (high ? c.has_weights_high : c.has_weights_low) = true;
  }
  for (const char* name : {"optimizer_high.safetensors", "optimizer_low.safetensors"}) {
    const std::string p = fs::join(ts, name);
    if (!fs::exists(p)) throw Error(dir + ": trainer_state/" + name + " is missing");
    (std::string(name) == "optimizer_high.safetensors" ? c.high_optimizer : c.low_optimizer) = io::read_safetensors(p);
  }
  return c;
}

void restore_expert(ExpertStep& e, bool h, const LoadedExperts& ck, const std::string& dir) {
  const std::string name = h ? "high_noise_transformer" : "low_noise_transformer";
  const io::StateDict& lora_sd = h ? ck.high_lora : ck.low_lora;
  if (e.lora()) {
    // The base is the run's own (its weights file, or the seed's fresh experts); the adapters
    // come back in place, so the optimizer and the model keep reading the same tensors.
    if (lora_sd.empty())
      throw Error(dir + ": no " + lora_file_name(h) + " for this LoRA run (a full fine-tuning checkpoint?)");
    const std::string src = dir + "/" + lora_file_name(h);
    const models::WanLora saved = models::WanLora::from_state_dict(lora_sd, src);
    const auto& have = e.lora()->entries();
    std::map<std::string, const models::WanLora::Entry*> got;
    for (const auto& g : saved.entries()) got[g.path] = &g;
    if (have.size() != got.size())
      throw Error(src + ": " + std::to_string(got.size()) + " adapters, this run has " + std::to_string(have.size()));
    torch::NoGradGuard ng;
    for (const auto& h : have) {
      auto it = got.find(h.path);
      if (it == got.end()) throw Error(src + ": no adapter on " + h.path + ", which this run adapts");
      const auto& g = *it->second;
      if (!h.down.sizes().equals(g.down.sizes()) || !h.up.sizes().equals(g.up.sizes()) || h.alpha != g.alpha)
        throw Error(src + ": the adapter on " + h.path + " has rank " + std::to_string(g.down.size(0)) + " and alpha " +
                    std::to_string(g.alpha) + ", this run's rank " + std::to_string(h.down.size(0)) + " and alpha " +
                    std::to_string(h.alpha));
      h.down.copy_(g.down);
      h.up.copy_(g.up);
    }
  } else {
    if (!lora_sd.empty() || !(h ? ck.has_weights_high : ck.has_weights_low))
      throw Error(dir + ": a LoRA checkpoint; resume it with lora: true");
    nlohmann::json a =
        models::WanConfig::from_json(h ? ck.high_config : ck.low_config, dir + "/" + name + "/config.json").to_json();
    nlohmann::json b = e.model()->config().to_json();
    if (a != b) throw Error(dir + ": " + name + "'s config " + a.dump() + " differs from this run's " + b.dump());
    e.load_weights(h ? ck.high_weights : ck.low_weights, dir + "/" + name);
  }
  e.model()->refresh_fp8();
  e.optimizer().load_state_dict(h ? ck.high_optimizer : ck.low_optimizer,
                                dir + "/trainer_state/optimizer_" + (h ? "high" : "low") + ".safetensors");
  const int64_t steps = h ? ck.state.steps_high : ck.state.steps_low;
  if (e.optimizer().step_count() != steps)
    throw Error(dir + ": optimizer_" + std::string(h ? "high" : "low") + " has step " +
                std::to_string(e.optimizer().step_count()) + ", state.json says " + std::to_string(steps));
  e.set_global_step(steps);
}

}  // namespace ws::train
