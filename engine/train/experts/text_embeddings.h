// SPDX-License-Identifier: Apache-2.0
// Cached text conditioning of the dual-expert trainer (docs/design/dual-expert-training.md §9): one
// `.safetensors` per caption, named by the hex SHA-256 of the row's `text` (UTF-8), holding
// `context` [L_true, text_dim] (F32 or BF16, unpadded; the DiT zero-pads to text_len). A row's
// own `text_embedding_path` (relative to train_data_dir) wins. The files come from UMT5
// (train/experts/text_encoding.h); without an encoder, `demo_data: auto` writes synthetic stand-ins.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "dataset/metadata.h"
#include "dataset/text_embedding_file.h"

namespace ws::train {

// The embedding file of a metadata row: dataset::text_embedding_path (dataset/text_embedding_file.h).
using dataset::text_embedding_path;

// Loads and checks `context`: 2-D, text_dim columns, 1..text_len rows. ws::Error naming the file.
torch::Tensor load_text_embedding(const std::string& path, int64_t text_len, int64_t text_dim);

// A deterministic stand-in for a UMT5 output (the demo): rows = min(text_len, words + 1), values
// N(0, 1) from a stream keyed by the caption's hash. Written atomically.
void write_synthetic_text_embedding(const std::string& path, const std::string& text, int64_t text_len,
                                    int64_t text_dim);

// Loaded embeddings, read once per file (captions repeat across epochs).
class TextEmbeddings {
 public:
  TextEmbeddings(std::string dir, int64_t text_len, int64_t text_dim)
      : dir_(std::move(dir)), text_len_(text_len), text_dim_(text_dim) {}
  torch::Tensor get(const dataset::Metadata& meta, const dataset::MetaRow& row);

 private:
  std::string dir_;
  int64_t text_len_, text_dim_;
  std::mutex mu_;
  std::map<std::string, torch::Tensor> cache_;
};

}  // namespace ws::train
