// SPDX-License-Identifier: Apache-2.0
#include "text/umt5_tokenizer.h"

#include "core/error.h"
#include "core/fs.h"
#include "text/caption_clean.h"

namespace ws::text {
namespace {

// A special-token string at `pos` ("<pad>", "</s>", "<unk>", "<extra_id_N>"): its length and id.
bool special_at(std::string_view s, size_t pos, int64_t pieces, const Umt5Tokenizer& t, size_t* len, int64_t* id) {
  auto starts = [&](std::string_view w) { return s.substr(pos, w.size()) == w; };
  if (starts("<pad>")) return *len = 5, *id = t.pad_id(), true;
  if (starts("</s>")) return *len = 4, *id = t.eos_id(), true;
  if (starts("<unk>")) return *len = 5, *id = t.unk_id(), true;
  if (starts("<extra_id_")) {
    size_t k = pos + 10;
    int n = 0, digits = 0;
    while (k < s.size() && s[k] >= '0' && s[k] <= '9' && digits < 3) n = n * 10 + (s[k++] - '0'), ++digits;
    if (digits > 0 && k < s.size() && s[k] == '>' && n < 300) {
      *len = k + 1 - pos;
      *id = pieces + 299 - n;  // HF's added sentinels follow the SentencePiece pieces (T5 convention)
      return true;
    }
  }
  return false;
}

}  // namespace

Umt5Tokenizer::Umt5Tokenizer(const std::string& path) {
  path_ = fs::is_dir(path) ? fs::join(path, "spiece.model") : path;
  if (!fs::exists(path_))
    throw Error(path_ + ": no tokenizer model (spiece.model of google/umt5-xxl, or a folder holding it)");
  sp_ = std::make_unique<SpmModel>(path_);
  if (sp_->eos_id() < 0 || sp_->pad_id() < 0 || sp_->unk_id() < 0)
    throw Error(path_ + ": the tokenizer needs <pad>, </s> and <unk> pieces (a T5 SentencePiece model)");
}

Umt5Tokenizer::~Umt5Tokenizer() = default;

int64_t Umt5Tokenizer::pad_id() const { return sp_->pad_id(); }
int64_t Umt5Tokenizer::eos_id() const { return sp_->eos_id(); }
int64_t Umt5Tokenizer::unk_id() const { return sp_->unk_id(); }
int64_t Umt5Tokenizer::piece_count() const { return sp_->piece_size(); }

std::vector<int64_t> Umt5Tokenizer::encode_segment(std::string_view text) const {
  const std::vector<int> ids = sp_->encode(text);
  // HF's fast tokenizer has no byte fallback: a run of byte pieces is one <unk> (§6.4).
  std::vector<int64_t> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (sp_->is_byte(ids[i])) {
      if (i == 0 || !sp_->is_byte(ids[i - 1])) out.push_back(unk_id());
      continue;
    }
    out.push_back(ids[i]);
  }
  return out;
}

CaptionTokens Umt5Tokenizer::encode(std::string_view caption, int64_t text_len, bool clean) const {
  if (text_len < 1) throw Error("text_len must be at least 1");
  CaptionTokens t;
  t.cleaned = clean ? clean_caption(caption) : std::string(caption);
  const std::string_view s = t.cleaned;
  // Special-token strings are whole tokens; the text between them is encoded piece by piece.
  std::vector<int64_t> ids;
  size_t seg = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    size_t len = 0;
    int64_t id = 0;
    if (s[i] == '<' && special_at(s, i, piece_count(), *this, &len, &id)) {
      if (i > seg) {
        auto part = encode_segment(s.substr(seg, i - seg));
        ids.insert(ids.end(), part.begin(), part.end());
      }
      ids.push_back(id);
      i += len - 1;
      seg = i + 1;
    }
  }
  if (seg < s.size()) {
    auto part = encode_segment(s.substr(seg));
    ids.insert(ids.end(), part.begin(), part.end());
  }
  t.content_tokens = static_cast<int64_t>(ids.size());
  if (t.content_tokens > text_len - 1) {
    ids.resize(static_cast<size_t>(text_len - 1));
    t.truncated = true;
  }
  ids.push_back(eos_id());
  t.ids = std::move(ids);
  return t;
}

void pad_tokens(const std::vector<int64_t>& ids, int64_t text_len, int64_t pad_id, std::vector<int64_t>* padded,
                std::vector<int64_t>* mask) {
  padded->assign(static_cast<size_t>(text_len), pad_id);
  mask->assign(static_cast<size_t>(text_len), 0);
  for (size_t i = 0; i < ids.size() && i < padded->size(); ++i) (*padded)[i] = ids[i], (*mask)[i] = 1;
}

}  // namespace ws::text
