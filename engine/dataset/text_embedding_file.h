// SPDX-License-Identifier: Apache-2.0
// Where a row's text embedding lives and which encoder made it (docs/design/umt5.md §7), without
// LibTorch: the trainer, `encode-text` and the studio's dataset page share these rules.
#pragma once
#include <cstdint>
#include <string>

#include "dataset/metadata.h"

namespace ws::dataset {

// The row's own `text_embedding_path` (relative to the data folder), else
// <dir>/<hex SHA-256 of the caption's UTF-8>.safetensors.
std::string text_embedding_path(const std::string& dir, const Metadata& meta, const MetaRow& row);

// "<file name>:<bytes>" of an encoder checkpoint, as an embedding file records it (`encoder` in its
// safetensors metadata).
std::string encoder_identity(const std::string& encoder_path);

enum class EmbeddingState { Missing, Ready, OtherEncoder };
// Missing: no file. OtherEncoder: a file another encoder (or the demo's synthetic stand-in) made,
// or one whose header cannot be read. Ready: made by `encoder` (an encoder_identity).
EmbeddingState embedding_state(const std::string& path, const std::string& encoder);

}  // namespace ws::dataset
