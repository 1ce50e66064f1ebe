// SPDX-License-Identifier: Apache-2.0
#include "models/qwen_vl.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/fs.h"
#include "core/json_depth.h"
#include "io/weights.h"
#include "models/qwen_vl_rope_index.h"

namespace ws::models {
namespace {

using json = nlohmann::json;

bool has_prefix(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

json read_json(const std::string& path) {
  const std::string text = fs::read_json_text(path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": invalid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace

QwenVl::QwenVl(QwenVlConfig config, QwenVisionTower vision, QwenDecoder decoder)
    : config_(std::move(config)),
      vision_(std::make_unique<QwenVisionTower>(std::move(vision))),
      decoder_(std::make_unique<QwenDecoder>(std::move(decoder))) {}

QwenVl QwenVl::load(const std::string& dir, torch::ScalarType dtype, const torch::Device& device) {
  if (!fs::is_dir(dir)) throw Error(dir + ": not a folder (a Qwen2.5-VL release is a folder with config.json)");
  const std::string config_path = fs::join(dir, "config.json");
  if (!fs::exists(config_path)) throw Error(dir + ": no config.json in this folder");
  QwenVlConfig config = QwenVlConfig::from_json(read_json(config_path), config_path);
  // generate() stops at generation_config.json's eos ids when the release ships one (the 7B's
  // config.json names only <|im_end|>; its generation config adds <|endoftext|>).
  const std::string gen_path = fs::join(dir, "generation_config.json");
  if (fs::exists(gen_path)) {
    const json g = read_json(gen_path);
    if (g.is_object() && g.contains("eos_token_id") && !g["eos_token_id"].is_null()) {
      QwenVlConfig eos = QwenVlConfig::from_json(json{{"eos_token_id", g["eos_token_id"]}}, gen_path);
      config.eos_token_ids = eos.eos_token_ids;
      config.validate(gen_path);
    }
  }

  std::string file;
  for (const char* n : {"model.safetensors.index.json", "model.safetensors"})
    if (file.empty() && fs::exists(fs::join(dir, n))) file = fs::join(dir, n);
  if (file.empty()) throw Error(dir + ": no model.safetensors or model.safetensors.index.json in this folder");

  // Split by prefix: the release's names, or transformers 5's.
  io::StateDict vision, text;
  for (auto& [k, v] : io::load_weights(file)) {
    if (has_prefix(k, "model.visual.")) vision[k.substr(13)] = v;
    else if (has_prefix(k, "visual.")) vision[k.substr(7)] = v;
    else if (has_prefix(k, "model.language_model.")) text[k.substr(21)] = v;
    else if (has_prefix(k, "model.")) text[k.substr(6)] = v;
    else if (k == "lm_head.weight") text[k] = v;
    else throw Error(file + ": unexpected key " + k + " (not a Qwen2.5-VL checkpoint)");
  }
  // A tied checkpoint may still carry lm_head.weight; transformers ties it to embed_tokens anyway.
  if (config.text.tie_word_embeddings) text.erase("lm_head.weight");

  QwenVisionTower tower(config.vision, std::move(vision), file);
  QwenDecoder decoder(config.text, std::move(text), file);
  tower.set_compute_dtype(dtype);
  decoder.set_compute_dtype(dtype);
  tower.to(device);
  decoder.to(device);
  return QwenVl(std::move(config), std::move(tower), std::move(decoder));
}

int64_t qwen_pick_token(const torch::Tensor& logits_in, const QwenGenerateOptions& o, at::Generator& generator) {
  const torch::Tensor logits = logits_in.reshape({-1}).to(torch::kCPU, torch::kFloat);
  if (o.temperature <= 0) return logits.argmax().item<int64_t>();  // the first of equal maxima
  torch::Tensor s = logits / o.temperature;
  const double inf = std::numeric_limits<double>::infinity();
  if (o.top_k > 0) {
    // TopKLogitsWarper: below the k-th largest (ties kept).
    const int64_t k = std::min(o.top_k, s.size(0));
    const torch::Tensor kth = std::get<0>(torch::topk(s, k)).narrow(0, k - 1, 1);
    s = s.masked_fill(s < kth, -inf);
  }
  if (o.top_p < 1.0) {
    // TopPLogitsWarper: ascending, drop while the cumulative probability stays ≤ 1 − top_p, and
    // always keep the most likely token.
    auto [sorted, order] = torch::sort(s, /*dim=*/0, /*descending=*/false);
    torch::Tensor drop = torch::softmax(sorted, 0).cumsum(0) <= (1.0 - o.top_p);
    drop.narrow(0, drop.size(0) - 1, 1).fill_(false);
    s = s.masked_fill(drop.scatter(0, order, drop), -inf);
  }
  const torch::Tensor probs = torch::softmax(s, 0);
  return torch::multinomial(probs, 1, /*replacement=*/false, generator).item<int64_t>();
}

std::vector<int64_t> QwenVl::generate(const std::vector<int64_t>& ids, const std::vector<QwenVideoInput>& videos,
                                      const QwenGenerateOptions& options, const std::function<bool(int64_t)>& on_token,
                                      QwenGenerateTrace* trace) const {
  torch::NoGradGuard no_grad;
  const QwenVlConfig& c = config_;
  if (ids.empty()) throw Error("Qwen2.5-VL generate: the prompt has no ids");
  if (options.max_new_tokens < 1) throw Error("Qwen2.5-VL generate: max_new_tokens must be at least 1");
  if (!(options.temperature >= 0)) throw Error("Qwen2.5-VL generate: temperature must not be negative");
  if (!(options.top_p > 0 && options.top_p <= 1)) throw Error("Qwen2.5-VL generate: top_p must be in (0, 1]");
  if (options.top_k < 0) throw Error("Qwen2.5-VL generate: top_k must not be negative");

  std::vector<int64_t> pad_rows;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == c.image_token_id)
      throw Error("Qwen2.5-VL generate: the prompt holds image pads; only videos are taken");
    if (ids[i] == c.video_token_id) pad_rows.push_back(static_cast<int64_t>(i));
  }

  // The tower's output, video by video, in place of the pads (in order, as masked_scatter does).
  const QwenDecoder& dec = *decoder_;
  torch::Tensor embeds = dec.embed(torch::tensor(ids, torch::kInt64));
  std::vector<std::array<int64_t, 3>> grids;
  std::vector<double> seconds;
  std::vector<torch::Tensor> feats;
  int64_t tokens = 0;
  for (size_t i = 0; i < videos.size(); ++i) {
    const QwenVideoInput& v = videos[i];
    const auto& g = v.grid;
    if (!v.patches.defined() || v.patches.dim() != 2 || v.patches.size(0) != g[0] * g[1] * g[2] ||
        v.patches.size(1) != c.vision.patch_values())
      throw Error("Qwen2.5-VL generate: video " + std::to_string(i + 1) + "'s patches must be [t·h·w, " +
                  std::to_string(c.vision.patch_values()) + "] for its grid");
    feats.push_back(vision_->forward(v.patches, g));
    tokens += feats.back().size(0);
    grids.push_back(g);
    seconds.push_back(v.second_per_grid);
  }
  if (tokens != static_cast<int64_t>(pad_rows.size()))
    throw Error("Qwen2.5-VL generate: the prompt has " + std::to_string(pad_rows.size()) +
                " video pads, the videos give " + std::to_string(tokens) + " tokens");
  if (tokens) {
    const torch::Tensor rows = torch::tensor(pad_rows, torch::kInt64).to(embeds.device());
    embeds.index_copy_(0, rows, torch::cat(feats, 0).to(embeds.device(), embeds.scalar_type()));
  }
  feats.clear();
  const QwenRopeIndex rope = qwen_rope_index(ids, grids, seconds, c, options.positions);

  at::Generator gen = at::detail::createCPUGenerator(options.seed);
  QwenKvCache cache;
  torch::Tensor logits = dec.forward(embeds, rope.positions, cache, /*last_only=*/trace == nullptr);
  if (trace) {
    trace->prefill_logits = logits.to(torch::kCPU);
    trace->step_logits.clear();
  }
  const std::vector<int64_t>& eos = options.eos_token_ids.empty() ? c.eos_token_ids : options.eos_token_ids;
  std::vector<int64_t> out;
  for (int64_t n = 0; n < options.max_new_tokens; ++n) {
    if (trace) trace->step_logits.push_back(logits[-1].to(torch::kCPU));
    const int64_t id = qwen_pick_token(logits[-1], options, gen);
    if (options.stop_at_eos && std::find(eos.begin(), eos.end(), id) != eos.end()) break;
    out.push_back(id);
    if (on_token && !on_token(id)) break;
    if (n + 1 == options.max_new_tokens) break;  // no forward for a token nobody reads
    // The next token's three streams all sit at cache length + delta.
    const torch::Tensor pos = torch::full({3, 1}, cache.length + rope.delta, torch::kInt64);
    logits = dec.forward(dec.embed(torch::tensor({id}, torch::kInt64)), pos, cache, /*last_only=*/true);
  }
  return out;
}

std::string qwen_chat_prompt(const std::string& user_text, const std::vector<int64_t>& video_tokens) {
  std::string p = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n";
  for (int64_t n : video_tokens) {
    if (n < 1) throw Error("Qwen2.5-VL prompt: a video needs at least one <|video_pad|>");
    p += "<|vision_start|>";
    for (int64_t i = 0; i < n; ++i) p += "<|video_pad|>";
    p += "<|vision_end|>";
  }
  return p + user_text + "<|im_end|>\n<|im_start|>assistant\n";
}

}  // namespace ws::models
