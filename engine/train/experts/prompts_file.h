// SPDX-License-Identifier: Apache-2.0
// Prompts files (docs/design/sampling.md §12.1): `sample --prompts_file` and train-experts'
// `validation_prompts_file` — a text file with one prompt per line (blank lines and lines starting
// with '#' skipped), or a JSON list whose entries are prompts or objects with their own seed,
// size, frame count, image and output name.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ws::train {

struct SamplePrompt {
  std::string text, embedding;  // one of them
  std::optional<std::string> negative, negative_embedding;
  std::optional<int64_t> seed, frames;
  std::optional<std::pair<int64_t, int64_t>> size_hw;  // height, width
  std::string image;                                   // i2v / ti2v
  std::string name;  // the outputs' base name in the folder (default: the index, 000, 001, ...)
};

// ws::Error naming the file and the entry (line or list index) on anything it cannot take.
std::vector<SamplePrompt> read_prompts_file(const std::string& path);

}  // namespace ws::train
