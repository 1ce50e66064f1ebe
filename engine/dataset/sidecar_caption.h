// SPDX-License-Identifier: Apache-2.0
// The caption file musubi-tuner, ai-toolkit and diffusion-pipe keep beside a video: the same
// name with `.txt` (or `.caption`).
#pragma once
#include <optional>
#include <string>

#include "dataset/metadata.h"

namespace ws::dataset {

// The sidecar's path for `media`, the first of <stem>.txt and <stem>.caption that exists, or
// nullopt.
std::optional<std::string> sidecar_caption_path(const std::string& media);

// Its text with surrounding white space trimmed, or nullopt when there is none. Throws ws::Error
// for a sidecar that is not a regular file or is not UTF-8 text.
std::optional<std::string> read_sidecar_caption(const std::string& media);

// Writes `text` as <stem>.txt beside `media` (atomically); returns the path.
std::string write_sidecar_caption(const std::string& media, const std::string& text);

// Every row's caption beside its file (rows without a file_path are skipped); returns how many.
size_t write_sidecar_captions(const Metadata& meta);

}  // namespace ws::dataset
