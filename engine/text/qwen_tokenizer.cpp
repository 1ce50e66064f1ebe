// SPDX-License-Identifier: Apache-2.0
#include "text/qwen_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <queue>
#include <tuple>

#include "core/error.h"
#include "core/fs.h"
#include "text/byte_level.h"
#include "text/qwen_pretokenize.h"
#include "text/unicode.h"
#include "text/utf8.h"

namespace ws::text {
namespace {

using nlohmann::json;

// Qwen2's pre-tokenizer regex, which text/qwen_pretokenize.cpp implements.
constexpr std::string_view kQwenPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Ids past this are no vocabulary's (Qwen's end at 151665): a bound before sizing tables by them.
constexpr int64_t kMaxId = int64_t{1} << 24;

uint64_t pair_key(int64_t a, int64_t b) { return static_cast<uint64_t>(a) << 32 | static_cast<uint64_t>(b); }

bool is_type(const json& j, std::string_view type) {
  return j.is_object() && j.contains("type") && j["type"].is_string() && j["type"].get<std::string>() == type;
}

bool is_false(const json& j, const char* key) { return !j.contains(key) || j[key].is_null() || j[key] == false; }

bool is_empty_string(const json& j, const char* key) {
  return !j.contains(key) || j[key].is_null() || (j[key].is_string() && j[key].get<std::string>().empty());
}

// Split on Qwen2's regex (isolated), then ByteLevel without a prefix space or a regex of its own.
bool is_qwen_pre_tokenizer(const json& p) {
  if (!is_type(p, "Sequence") || !p.contains("pretokenizers") || !p["pretokenizers"].is_array() ||
      p["pretokenizers"].size() != 2)
    return false;
  const json& split = p["pretokenizers"][0];
  const json& bytes = p["pretokenizers"][1];
  return is_type(split, "Split") && split.contains("pattern") && split["pattern"].is_object() &&
         split["pattern"].value("Regex", std::string()) == kQwenPattern &&
         split.value("behavior", std::string()) == "Isolated" && is_false(split, "invert") &&
         is_type(bytes, "ByteLevel") && is_false(bytes, "add_prefix_space") && is_false(bytes, "use_regex");
}

}  // namespace

QwenTokenizer::QwenTokenizer(const std::string& path) {
  path_ = fs::is_dir(path) ? fs::join(path, "tokenizer.json") : path;
  if (!fs::exists(path_))
    throw Error(path_ + ": no tokenizer.json (the Qwen2 / Qwen2.5-VL tokenizer, or a folder holding it)");
  try {
    load(fs::read_json_text(path_));
  } catch (const json::exception& e) {
    throw Error(path_ + ": not a HuggingFace tokenizer.json (" + e.what() + ")");
  }
}

void QwenTokenizer::load(const std::string& text) {
  const json doc = json::parse(text);
  auto fail = [&](const std::string& what) { throw Error(path_ + ": " + what); };
  if (!doc.is_object() || !doc.contains("model")) fail("not a HuggingFace tokenizer.json (no \"model\")");
  const json& model = doc["model"];
  if (!is_type(model, "BPE")) fail("the model is no BPE (Qwen2's tokenizer is a byte-level BPE)");
  if (!is_false(model, "dropout")) fail("BPE dropout is not supported (it makes encoding random)");
  if (!is_empty_string(model, "continuing_subword_prefix") || !is_empty_string(model, "end_of_word_suffix"))
    fail("BPE subword prefixes/suffixes are not supported (Qwen2's BPE has none)");
  ignore_merges_ = model.contains("ignore_merges") && model["ignore_merges"] == true;
  if (!doc.contains("pre_tokenizer") || !is_qwen_pre_tokenizer(doc["pre_tokenizer"]))
    fail("the pre_tokenizer is not Qwen2's (a Sequence: Split on its regex, then ByteLevel without regex)");
  const json norm = doc.value("normalizer", json());
  if (!norm.is_null() && !is_type(norm, "NFC")) fail("the normalizer is neither NFC nor none");
  nfc_ = !norm.is_null();
  if (!is_type(doc.value("decoder", json()), "ByteLevel")) fail("the decoder is not ByteLevel");

  // The vocabulary: token text (byte alphabet) -> id.
  if (!model.contains("vocab") || !model["vocab"].is_object()) fail("the BPE model has no \"vocab\" object");
  int64_t top = -1;
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxId)
      fail("vocab entry \"" + token + "\" has no valid id");
    vocab_[token] = id.get<int64_t>();
    top = std::max(top, id.get<int64_t>());
  }
  for (int b = 0; b < 256; ++b) {
    auto it = vocab_.find(byte_level_char(static_cast<uint8_t>(b)));
    if (it == vocab_.end()) fail("not a byte-level BPE: byte " + std::to_string(b) + " has no token");
    byte_ids_[static_cast<size_t>(b)] = it->second;
  }

  // Merges, as "a b" strings (older files) or ["a", "b"] pairs; the rank is the place in the list.
  if (!model.contains("merges") || !model["merges"].is_array()) fail("the BPE model has no \"merges\" list");
  const json& merges = model["merges"];
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    std::string a, b;
    if (m.is_string()) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ');
      if (sp == std::string::npos || s.find(' ', sp + 1) != std::string::npos)
        fail("merge " + std::to_string(rank) + " (\"" + s + "\") is not two tokens");
      a = s.substr(0, sp), b = s.substr(sp + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>(), b = m[1].get<std::string>();
    } else {
      fail("merge " + std::to_string(rank) + " is neither \"a b\" nor [\"a\", \"b\"]");
    }
    auto ia = vocab_.find(a), ib = vocab_.find(b), iab = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || iab == vocab_.end())
      fail("merge " + std::to_string(rank) + " (\"" + a + " " + b + "\") names a token not in the vocab");
    merges_[pair_key(ia->second, ib->second)] = Merge{static_cast<int32_t>(rank), iab->second};
  }

  // Added tokens: matched whole before the model sees the text.
  const json added = doc.value("added_tokens", json::array());
  if (!added.is_array()) fail("\"added_tokens\" is not a list");
  for (const json& t : added) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || !t.contains("content") ||
        !t["content"].is_string() || t["id"].get<int64_t>() < 0 || t["id"].get<int64_t>() >= kMaxId)
      fail("an added token has no valid id and content");
    Added a{t["content"].get<std::string>(), t["id"].get<int64_t>(), t.value("special", false),
            t.value("normalized", false)};
    if (!is_false(t, "lstrip") || !is_false(t, "rstrip") || !is_false(t, "single_word"))
      fail("added token \"" + a.content + "\" strips spaces or matches single words, which is not supported");
    if (a.normalized && nfc_) a.content = utf8_encode(nfc(utf8_decode(a.content)));
    top = std::max(top, a.id);
    if (!a.content.empty()) added_.push_back(std::move(a));
  }
  std::stable_sort(added_.begin(), added_.end(),
                   [](const Added& x, const Added& y) { return x.content.size() > y.content.size(); });

  // Ids are dense in a real vocabulary; a stray huge one must not size the table.
  const size_t count = vocab_.size() + added_.size();
  if (static_cast<size_t>(top) >= 2 * count + 1024)
    fail("token ids run to " + std::to_string(top) + " for only " + std::to_string(count) + " tokens");
  tokens_.assign(static_cast<size_t>(top + 1), std::string());
  kinds_.assign(tokens_.size(), Kind::kNone);
  for (const auto& [token, id] : vocab_)
    tokens_[static_cast<size_t>(id)] = token, kinds_[static_cast<size_t>(id)] = Kind::kModel;
  for (const Added& a : added_) {
    tokens_[static_cast<size_t>(a.id)] = a.content;
    kinds_[static_cast<size_t>(a.id)] = a.special ? Kind::kSpecial : Kind::kAdded;
  }
}

std::vector<std::pair<std::string_view, int64_t>> QwenTokenizer::split_added(std::string_view text,
                                                                             bool normalized) const {
  std::vector<std::pair<std::string_view, int64_t>> parts;  // id -1: text for the model
  size_t from = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const Added* hit = nullptr;
    for (const Added& a : added_)  // longest first
      if (a.normalized == normalized && text.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    if (!hit) continue;
    if (i > from) parts.emplace_back(text.substr(from, i - from), -1);
    parts.emplace_back(text.substr(i, hit->content.size()), hit->id);
    from = i + hit->content.size();
    i = from - 1;
  }
  if (from < text.size()) parts.emplace_back(text.substr(from), -1);
  return parts;
}

std::vector<int64_t> QwenTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  // As `tokenizers` does: the tokens kept as written are found in the raw text, the text between
  // them is normalized and then searched for the normalized ones (Qwen's have none).
  for (const auto& [raw, raw_id] : split_added(text, false)) {
    if (raw_id >= 0) {
      ids.push_back(raw_id);
      continue;
    }
    const std::string normal = nfc_ ? utf8_encode(nfc(utf8_decode(raw))) : std::string(raw);
    for (const auto& [part, id] : split_added(normal, true)) {
      if (id >= 0) {
        ids.push_back(id);
        continue;
      }
      const std::u32string chars = utf8_decode(part);  // the pieces are views into it
      for (std::u32string_view piece : qwen_pretokenize(chars)) encode_piece(utf8_encode(piece), ids);
    }
  }
  return ids;
}

void QwenTokenizer::encode_piece(const std::string& bytes, std::vector<int64_t>& out) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = cache_.find(bytes);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int64_t> ids = merge(bytes);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() < kCacheLimit) cache_.emplace(bytes, std::move(ids));
}

// BPE as `tokenizers` runs it: one byte token per byte, then always the pair of lowest merge rank
// (the leftmost of equal ones) merged, until no adjacent pair has a merge.
std::vector<int64_t> QwenTokenizer::merge(const std::string& bytes) const {
  if (ignore_merges_) {
    std::string spelled;
    for (char c : bytes) spelled += byte_level_char(static_cast<uint8_t>(c));
    auto it = vocab_.find(spelled);
    if (it != vocab_.end()) return {it->second};
  }
  const int n = static_cast<int>(bytes.size());
  std::vector<int64_t> id(bytes.size());
  std::vector<int> prev(bytes.size()), next(bytes.size());
  for (int i = 0; i < n; ++i) {
    id[static_cast<size_t>(i)] = byte_ids_[static_cast<uint8_t>(bytes[static_cast<size_t>(i)])];
    prev[static_cast<size_t>(i)] = i - 1;
    next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
  }
  using Candidate = std::tuple<int32_t, int, int64_t>;  // rank, left position, merged id
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  auto offer = [&](int left) {
    if (left < 0 || next[static_cast<size_t>(left)] < 0) return;
    auto it =
        merges_.find(pair_key(id[static_cast<size_t>(left)], id[static_cast<size_t>(next[static_cast<size_t>(left)])]));
    if (it != merges_.end()) queue.emplace(it->second.rank, left, it->second.id);
  };
  for (int i = 0; i + 1 < n; ++i) offer(i);
  std::vector<bool> gone(bytes.size(), false);
  while (!queue.empty()) {
    const auto [rank, left, merged] = queue.top();
    queue.pop();
    const auto l = static_cast<size_t>(left);
    if (gone[l] || next[l] < 0) continue;
    // A stale candidate: its pair changed since it was offered.
    auto it = merges_.find(pair_key(id[l], id[static_cast<size_t>(next[l])]));
    if (it == merges_.end() || it->second.id != merged || it->second.rank != rank) continue;
    const auto r = static_cast<size_t>(next[l]);
    id[l] = merged;
    gone[r] = true;
    next[l] = next[r];
    if (next[r] >= 0) prev[static_cast<size_t>(next[r])] = left;
    offer(prev[l]);
    offer(left);
  }
  std::vector<int64_t> out;
  for (int i = n > 0 ? 0 : -1; i >= 0; i = next[static_cast<size_t>(i)]) out.push_back(id[static_cast<size_t>(i)]);
  return out;
}

std::string QwenTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special) const {
  std::vector<std::string_view> tokens;
  tokens.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    const Kind k = kinds_[static_cast<size_t>(id)];
    if (k == Kind::kNone || (skip_special && k == Kind::kSpecial)) continue;
    tokens.push_back(tokens_[static_cast<size_t>(id)]);
  }
  return byte_level_decode(tokens);
}

int64_t QwenTokenizer::token_id(std::string_view token) const {
  for (const Added& a : added_)
    if (a.content == token) return a.id;
  auto it = vocab_.find(std::string(token));
  return it == vocab_.end() ? -1 : it->second;
}

}  // namespace ws::text
