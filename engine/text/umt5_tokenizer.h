// SPDX-License-Identifier: Apache-2.0
// The UMT5 tokenizer (docs/design/umt5.md §6): the caption cleaned, encoded by SentencePiece
// (`spiece.model` of google/umt5-xxl) with the rules that make it give what Wan's HF fast
// tokenizer gives — a run of byte-fallback pieces is one <unk>, special-token strings are matched
// whole — then cut to text_len − 1 ids and closed with EOS. Thread-safe once loaded.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "text/spm_library.h"

namespace ws::text {

struct CaptionTokens {
  std::string cleaned;         // the text the ids spell
  std::vector<int64_t> ids;    // the real ids, EOS last; at most text_len
  int64_t content_tokens = 0;  // ids before truncation, EOS not counted
  bool truncated = false;
};

class Umt5Tokenizer {
 public:
  // `path`: spiece.model, or a folder holding it. ws::Error names the file when it is missing or
  // no SentencePiece model.
  explicit Umt5Tokenizer(const std::string& path);
  ~Umt5Tokenizer();
  Umt5Tokenizer(const Umt5Tokenizer&) = delete;
  Umt5Tokenizer& operator=(const Umt5Tokenizer&) = delete;

  CaptionTokens encode(std::string_view caption, int64_t text_len = 512, bool clean = true) const;

  int64_t pad_id() const;
  int64_t eos_id() const;
  int64_t unk_id() const;
  int64_t piece_count() const;
  const std::string& path() const { return path_; }

 private:
  std::vector<int64_t> encode_segment(std::string_view text) const;
  std::unique_ptr<SpmModel> sp_;
  std::string path_;
};

// Padded to text_len with pad_id; the mask is 1 on the real ids.
void pad_tokens(const std::vector<int64_t>& ids, int64_t text_len, int64_t pad_id, std::vector<int64_t>* padded,
                std::vector<int64_t>* mask);

}  // namespace ws::text
