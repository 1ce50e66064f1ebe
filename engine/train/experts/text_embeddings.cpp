// SPDX-License-Identifier: Apache-2.0
#include "train/experts/text_embeddings.h"

#include <sstream>

#include "core/error.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "data/random_streams.h"
#include "dataset/text_embedding_file.h"
#include "io/safetensors.h"

namespace ws::train {

torch::Tensor load_text_embedding(const std::string& path, int64_t text_len, int64_t text_dim) {
  if (!fs::exists(path)) throw Error(path + ": text embedding not found");
  auto sd = io::read_safetensors(path);
  auto it = sd.find("context");
  if (it == sd.end()) throw Error(path + ": no tensor 'context' (a text embedding holds context [L, text_dim])");
  const torch::Tensor& c = it->second;
  if (c.dim() != 2 || c.size(1) != text_dim || c.size(0) < 1 || c.size(0) > text_len)
    throw Error(path + ": context has shape " + io::shape_str(c.sizes().vec()) + ", expected [L, " +
                std::to_string(text_dim) + "] with 1 ≤ L ≤ " + std::to_string(text_len));
  return c.to(torch::kFloat).contiguous();
}

void write_synthetic_text_embedding(const std::string& path, const std::string& text, int64_t text_len,
                                    int64_t text_dim) {
  std::istringstream ss(text);
  int64_t words = 0;
  for (std::string w; ss >> w;) ++words;
  const int64_t rows = std::max<int64_t>(1, std::min(text_len, words + 1));  // + EOS, as UMT5 cuts
  const std::string h = sha256_hex(text);
  data::Rng r = data::Rng::keyed(std::stoull(h.substr(0, 15), nullptr, 16), "synthetic-text");
  auto gen = at::detail::createCPUGenerator(r.derive_seed());
  io::StateDict sd;
  sd["context"] = torch::randn({rows, text_dim}, gen, torch::TensorOptions().dtype(torch::kFloat));
  fs::make_dirs(fs::dirname(path));
  io::write_safetensors(path, sd, {{"text", text}, {"synthetic", "true"}});
}

torch::Tensor TextEmbeddings::get(const dataset::Metadata& meta, const dataset::MetaRow& row) {
  const std::string path = text_embedding_path(dir_, meta, row);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(path);
  if (it != cache_.end()) return it->second;
  auto t = load_text_embedding(path, text_len_, text_dim_);
  cache_.emplace(path, t);
  return t;
}

}  // namespace ws::train
