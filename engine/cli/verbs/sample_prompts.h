// SPDX-License-Identifier: Apache-2.0
// The prompts of one `sample` run (docs/design/sampling.md §12.1): one from --prompt, or many
// from --prompts_file — a text file with one prompt per line (blank lines and lines starting
// with '#' skipped), or a JSON list whose entries are prompts or objects with their own seed,
// size, frame count, image and output name.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ws::cli {

struct SamplePrompt {
  std::string text, embedding;  // one of them
  std::optional<std::string> negative, negative_embedding;
  std::optional<int64_t> seed, frames;
  std::optional<std::string> size;  // "WxH"
  std::string image;                // i2v / ti2v
  std::string name;                 // the outputs' base name in the folder (default: the index, 000, 001, ...)
};

// ws::Error naming the file and the entry (line or list index) on anything it cannot take.
std::vector<SamplePrompt> read_prompts_file(const std::string& path);

}  // namespace ws::cli
