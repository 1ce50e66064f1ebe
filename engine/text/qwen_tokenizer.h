// SPDX-License-Identifier: Apache-2.0
// The Qwen2 / Qwen2.5-VL tokenizer (the captioner's), read from the HuggingFace tokenizer.json the
// models ship: a byte-level BPE. Encoding gives the ids `tokenizers` gives: added tokens
// (<|im_start|>, <|video_pad|>, ...) are matched whole in the text first (longest at the leftmost
// place), the rest is NFC-normalized, split by Qwen2's pre-tokenizer regex, spelled in GPT-2's
// byte alphabet and merged by merge rank. No special tokens are added around the text (Qwen's
// post-processor adds none). Thread-safe once loaded.
#pragma once
#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ws::text {

class QwenTokenizer {
 public:
  // `path`: tokenizer.json, or the folder holding it. ws::Error names the file when it is missing,
  // no JSON, or not a Qwen2-style byte-level BPE (another pre-tokenizer would give other ids).
  explicit QwenTokenizer(const std::string& path);
  QwenTokenizer(const QwenTokenizer&) = delete;
  QwenTokenizer& operator=(const QwenTokenizer&) = delete;

  std::vector<int64_t> encode(std::string_view text) const;
  // Ids back to text as `tokenizers` decodes them; ids with no token are left out, and with
  // `skip_special` so are the special added tokens (the non-special ones, <tool_call>..., stay).
  std::string decode(const std::vector<int64_t>& ids, bool skip_special = false) const;
  // The id of an added token ("<|im_end|>") or of a vocabulary entry spelled in the byte alphabet
  // ("Ġthe" is " the"); -1 when there is none.
  int64_t token_id(std::string_view token) const;
  // One past the highest id, added tokens included (151665 for Qwen2.5-VL; its embedding table is
  // padded further, to 151936).
  int64_t vocab_size() const { return static_cast<int64_t>(tokens_.size()); }
  const std::string& path() const { return path_; }

 private:
  struct Added {
    std::string content;
    int64_t id = 0;
    bool special = false;
    bool normalized = false;  // matched after NFC instead of in the raw text
  };
  struct Merge {
    int32_t rank = 0;
    int64_t id = 0;  // the merged token
  };
  enum class Kind : uint8_t { kNone, kModel, kAdded, kSpecial };

  void load(const std::string& text);
  // The text cut at the added tokens of one kind (matched in the raw or the normalized text):
  // each part's text, and its id when it is an added token (-1 when not).
  std::vector<std::pair<std::string_view, int64_t>> split_added(std::string_view text, bool normalized) const;
  void encode_piece(const std::string& bytes, std::vector<int64_t>& out) const;
  std::vector<int64_t> merge(const std::string& bytes) const;

  std::string path_;
  std::unordered_map<std::string, int64_t> vocab_;  // model tokens, byte-alphabet spelling
  std::unordered_map<uint64_t, Merge> merges_;      // (left id << 32 | right id) -> merge
  std::array<int64_t, 256> byte_ids_{};             // the one-byte tokens
  std::vector<Added> added_;                        // longest first
  std::vector<std::string> tokens_;                 // id -> token text
  std::vector<Kind> kinds_;
  bool nfc_ = true;
  bool ignore_merges_ = false;

  // Pre-tokenized pieces repeat (" the", " a"): their ids are kept, up to kCacheLimit pieces.
  static constexpr size_t kCacheLimit = 20000;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

}  // namespace ws::text
