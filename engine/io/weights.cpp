// SPDX-License-Identifier: Apache-2.0
#include "io/weights.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>
#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "io/pth.h"
#include "io/safetensors.h"

namespace ws::io {
namespace {

const char* const kWeightsName = "diffusion_pytorch_model.safetensors";
const char* const kIndexName = "diffusion_pytorch_model.safetensors.index.json";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The weights file of a model directory: the single file wins over an index.
std::string model_dir_weights(const std::string& dir) {
  std::string single = fs::join(dir, kWeightsName), index = fs::join(dir, kIndexName);
  if (fs::exists(single)) return single;
  if (fs::exists(index)) return index;
  // A training checkpoint holds its models one level down (high_noise_transformer/, latent_upsampler/ ...).
  std::vector<std::string> models;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory(ec) &&
        (fs::exists(fs::join(e.path().string(), kWeightsName)) || fs::exists(fs::join(e.path().string(), kIndexName))))
      models.push_back(e.path().filename().string() + "/");
  std::sort(models.begin(), models.end());
  std::string inner;
  for (const auto& m : models) inner += (inner.empty() ? "" : ", ") + m;
  if (!inner.empty())
    throw Error(dir + ": a checkpoint folder, not a model folder; its models are in " + inner +
                " (name one of them, e.g. " + fs::join(dir, inner.substr(0, inner.find('/'))) + ")");
  throw Error(dir + ": model folder has neither " + kWeightsName + " nor " + kIndexName);
}

std::string first_shard(const std::string& index_path) {
  nlohmann::json idx;
  try {
    idx = nlohmann::json::parse(fs::read_json_text(index_path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(index_path + ": not valid JSON (" + e.what() + ")");
  }
  auto wm = idx.is_object() ? idx.find("weight_map") : idx.end();
  if (wm == idx.end() || !wm->is_object() || wm->empty() || !wm->begin()->is_string())
    throw Error(index_path + ": no \"weight_map\" object");
  return shard_path(index_path, wm->begin()->get<std::string>());
}

}  // namespace

WeightsFormat detect_weights_format(const std::string& path) {
  if (!fs::exists(path)) throw Error(path + ": no such file or folder");
  if (fs::is_dir(path)) return WeightsFormat::ModelDir;
  if (ends_with(path, ".safetensors.index.json")) return WeightsFormat::ShardedSafetensors;
  if (ends_with(path, ".safetensors")) return WeightsFormat::Safetensors;
  // Other names are sniffed: torch.save writes a zip ("PK"), safetensors a JSON header after 8 bytes.
  fs::check_regular_file(path);  // a FIFO would block the read below
  std::ifstream in(path, std::ios::binary);
  char head[9] = {};
  in.read(head, 9);
  if (in.gcount() >= 2 && head[0] == 'P' && head[1] == 'K') return WeightsFormat::Pth;
  if (in.gcount() >= 2 && head[0] == '\x80' && head[1] == '\x02')
    return WeightsFormat::Pth;  // legacy: read_pth says so
  if (in.gcount() == 9 && head[8] == '{') return WeightsFormat::Safetensors;
  throw Error(path +
              ": not a weights file (expected .safetensors, .safetensors.index.json, a torch.save "
              "zip checkpoint or a model folder)");
}

StateDict load_weights(const std::string& path) {
  switch (detect_weights_format(path)) {
    case WeightsFormat::Safetensors: return read_safetensors(path);
    case WeightsFormat::ShardedSafetensors: return read_sharded_safetensors(path);
    case WeightsFormat::Pth: return read_pth(path);
    case WeightsFormat::ModelDir: {
      std::string w = model_dir_weights(path);
      return ends_with(w, ".json") ? read_sharded_safetensors(w) : read_safetensors(w);
    }
  }
  throw Error(path + ": unknown weights format");
}

std::map<std::string, std::string> weights_metadata(const std::string& path) {
  switch (detect_weights_format(path)) {
    case WeightsFormat::Safetensors: return read_safetensors_metadata(path);
    case WeightsFormat::ShardedSafetensors: return read_safetensors_metadata(first_shard(path));
    case WeightsFormat::Pth: return {};
    case WeightsFormat::ModelDir: return weights_metadata(model_dir_weights(path));
  }
  return {};
}

ModelDir read_model_dir(const std::string& dir) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a model folder");
  std::string cfg = fs::join(dir, "config.json");
  ModelDir m;
  try {
    m.config = nlohmann::json::parse(fs::read_json_text(cfg));
  } catch (const nlohmann::json::exception& e) {
    throw Error(cfg + ": not valid JSON (" + e.what() + ")");
  }
  if (!m.config.is_object()) throw Error(cfg + ": not a JSON object");
  m.weights = load_weights(dir);
  return m;
}

void write_model_dir(const std::string& dir, const nlohmann::json& config, const StateDict& weights) {
  fs::make_dirs(dir);
  write_safetensors(fs::join(dir, kWeightsName), weights);
  fs::write_file_atomic(fs::join(dir, "config.json"), config.dump(2) + "\n");
  // A stale index from an earlier sharded save would describe other weights.
  std::remove(fs::join(dir, kIndexName).c_str());
}

}  // namespace ws::io
