// SPDX-License-Identifier: Apache-2.0
// Captions to text embeddings (docs/design/umt5.md §1, dual-expert-training.md §9): each distinct
// caption cleaned, tokenized and run through the UMT5 encoder at its own length, written as
// `context` [L, dim] to the file the dual-expert trainer looks it up by (text_embedding_path).
// Files already there are kept, so a run after a kill continues; each file is written whole
// (temporary name, then renamed).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dataset/metadata.h"

namespace ws::train {

// Longer captions are refused (ws::Error naming the row) rather than cleaned and cut.
inline constexpr size_t kMaxCaptionBytes = 20000;

struct TextEncoderOptions {
  std::string encoder_path;    // models_t5_umt5-xxl-enc-bf16.pth, a .safetensors, or a transformers folder
  std::string tokenizer_path;  // spiece.model or the folder holding it (google/umt5-xxl/)
  int64_t text_len = 512;
  bool bf16 = false;  // compute (and store) in bf16, as Wan does; fp32 otherwise
};

// One caption to encode and where its embedding goes; `label` names it in warnings ("row 3").
struct CaptionJob {
  std::string text;
  std::string path;
  std::string label;
};

struct EncodeReport {
  int64_t total = 0, encoded = 0, existing = 0, truncated = 0, empty = 0;
  bool cancelled = false;
  int64_t dim = 0;  // the encoder's output width
};

// Distinct embedding files of the rows (text_embedding_path), in row order.
std::vector<CaptionJob> caption_jobs(const dataset::Metadata& meta, const std::string& embeddings_dir);

// Encodes every job whose file is missing or was made by another encoder (dataset::embedding_state). `progress(done,
// total)` after each caption, counting the files that were already there; `cancel()` is asked between captions. The
// encoder is loaded only when something is missing and freed on return. `expect_dim` > 0: the encoder's width must be
// that (the experts' text_dim) — ws::Error otherwise.
EncodeReport encode_captions(const std::vector<CaptionJob>& jobs, const TextEncoderOptions& options,
                             const std::function<void(int64_t, int64_t)>& progress = {},
                             const std::function<bool()>& cancel = {}, int64_t expect_dim = 0);

// train-experts with text_encoder_path: the distinct captions of these metadata files whose
// embedding is missing, encoded (progress in the log every tenth). `text_dim` is the experts'.
EncodeReport encode_missing_captions(const std::vector<std::string>& metadata_files, const std::string& data_dir,
                                     const std::string& embeddings_dir, const TextEncoderOptions& options,
                                     int64_t text_dim, const std::function<bool()>& cancel = {});

}  // namespace ws::train
