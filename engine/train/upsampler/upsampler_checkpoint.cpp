// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_checkpoint.h"
#include "train/run_setup.h"

#include "core/error.h"
#include "core/fs.h"
#include "io/safetensors.h"
#include "io/weights.h"

namespace ws::train {

using json = nlohmann::json;

json TrainerState::to_json() const {
  return {{"format_version", format_version},
          {"global_step", global_step},
          {"epoch", epoch},
          {"cursor", cursor.to_json()},
          {"ema_optimization_step", ema_optimization_step},
          {"seed", seed},
          {"app_version", WANSTUDIO_VERSION_STRING},
          {"options_sha256", options_sha256},
          {"options", options}};
}

TrainerState TrainerState::from_json(const json& j, const std::string& source) {
  TrainerState s;
  try {
    s.format_version = j.at("format_version").get<int64_t>();
    if (s.format_version != 1) throw Error(source + ": unknown format_version " + std::to_string(s.format_version));
    s.global_step = j.at("global_step").get<int64_t>();
    s.epoch = j.at("epoch").get<int64_t>();
    s.cursor = data::LoaderCursor::from_json(j.at("cursor"), source);
    s.ema_optimization_step = j.value("ema_optimization_step", int64_t{0});
    s.seed = j.at("seed").get<int64_t>();
    s.options_sha256 = j.value("options_sha256", std::string());
    s.options = j.value("options", json::object());
  } catch (const json::exception& e) {
    throw Error(source + ": " + e.what());
  }
  return s;
}

static void put_pickle_int(std::string& out, int64_t v) {
  if (v < 0 || v > 0x7fffffff) throw Error("sampler position out of range for the pickle: " + std::to_string(v));
  if (v < 256) {
    out += 'K';
    out += static_cast<char>(v);
  } else if (v < 65536) {
    out += 'M';
    out += static_cast<char>(v & 0xff);
    out += static_cast<char>((v >> 8) & 0xff);
  } else {
    out += 'J';
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

std::string sampler_pos_pickle(int64_t pos, int64_t epoch) {
  std::string p("\x80\x02\x5d\x71\x00\x28", 6);  // PROTO 2, EMPTY_LIST, BINPUT 0, MARK
  put_pickle_int(p, pos);
  put_pickle_int(p, epoch);
  p += "\x65\x2e";  // APPENDS, STOP
  return p;
}

static json ema_config(const json& model_config, const Ema& ema) {
  json c = model_config;
  c["decay"] = ema.options().decay;
  c["min_decay"] = ema.options().min_decay;
  c["optimization_step"] = ema.optimization_step();
  c["update_after_step"] = ema.options().update_after_step;
  c["use_ema_warmup"] = false;
  c["inv_gamma"] = 1.0;
  c["power"] = 2.0 / 3.0;
  return c;
}

void write_upsampler_checkpoint(const std::string& dir, UpsamplerUpdater& updater, const TrainerState& state,
                                bool final_save) {
  const auto plain = updater.plain_weights();  // files hold the plain order
  auto& model = updater.model();
  const json cfg = model->config().to_json();
  const io::StateDict live = io::module_state_dict(*model);
  Ema* ema = updater.ema();
  const std::string ts = fs::join(dir, "trainer_state");
  fs::make_dirs(ts);
  if (final_save && ema) {
    // The final latent_upsampler/ holds the EMA weights (reference); the live ones stay resumable.
    io::write_model_dir(fs::join(dir, "latent_upsampler"), cfg, ema->shadow());
    io::write_safetensors(fs::join(ts, "online_weights.safetensors"), live);
  } else {
    io::write_model_dir(fs::join(dir, "latent_upsampler"), cfg, live);
  }
  if (ema) {
    io::write_model_dir(fs::join(dir, "latent_upsampler_ema"), ema_config(cfg, *ema), ema->shadow());
    io::write_safetensors(fs::join(ts, "ema_shadow.safetensors"), ema->shadow());
  }
  fs::write_file_atomic(fs::join(dir, "sampler_pos_start.pkl"),
                        sampler_pos_pickle(state.cursor.pos, state.cursor.epoch));
  io::write_safetensors(fs::join(ts, "optimizer.safetensors"), updater.optimizer().state_dict());
  fs::write_file_atomic(fs::join(ts, "state.json"), state.to_json().dump(2) + "\n");
}

LoadedCheckpoint read_upsampler_checkpoint(const std::string& dir) {
  LoadedCheckpoint c;
  const std::string ts = fs::join(dir, "trainer_state");
  const std::string state_path = fs::join(ts, "state.json");
  const json j = read_trainer_state_json(dir);
  c.state = TrainerState::from_json(j, state_path);
  const std::string online = fs::join(ts, "online_weights.safetensors");
  const std::string model_dir = fs::join(dir, "latent_upsampler");
  c.weights = fs::exists(online) ? io::read_safetensors(online) : io::read_model_dir(model_dir).weights;
  const std::string cfg_path = fs::join(model_dir, "config.json");
  try {
    c.model_config = json::parse(fs::read_json_text(cfg_path));
  } catch (const json::exception& e) {
    throw Error(cfg_path + ": invalid JSON (" + std::string(e.what()) + ")");
  }
  const std::string opt = fs::join(ts, "optimizer.safetensors");
  if (!fs::exists(opt)) throw Error(dir + ": trainer_state/optimizer.safetensors is missing");
  c.optimizer = io::read_safetensors(opt);
  const std::string shadow = fs::join(ts, "ema_shadow.safetensors");
  if (fs::exists(shadow)) c.ema_shadow = io::read_safetensors(shadow);
  return c;
}

}  // namespace ws::train
