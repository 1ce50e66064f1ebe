// SPDX-License-Identifier: Apache-2.0
#include "train/experts/text_encoding.h"

#include <set>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "io/safetensors.h"
#include "dataset/text_embedding_file.h"
#include "models/umt5.h"
#include "text/umt5_tokenizer.h"
#include "train/experts/text_embeddings.h"

namespace ws::train {

std::vector<CaptionJob> caption_jobs(const dataset::Metadata& meta, const std::string& embeddings_dir) {
  std::vector<CaptionJob> jobs;
  std::set<std::string> seen;
  for (size_t i = 0; i < meta.rows.size(); ++i) {
    const auto& row = meta.rows[i];
    const std::string path = text_embedding_path(embeddings_dir, meta, row);
    if (!seen.insert(path).second) continue;
    jobs.push_back({row.text, path, "row " + std::to_string(i)});
  }
  return jobs;
}

EncodeReport encode_captions(const std::vector<CaptionJob>& jobs, const TextEncoderOptions& o,
                             const std::function<void(int64_t, int64_t)>& progress, const std::function<bool()>& cancel,
                             int64_t expect_dim) {
  EncodeReport r;
  r.total = static_cast<int64_t>(jobs.size());
  // A file made by another encoder (or a synthetic stand-in) does not count: it is encoded again.
  const std::string encoder = dataset::encoder_identity(o.encoder_path);
  std::vector<const CaptionJob*> todo;
  for (const auto& j : jobs) {
    if (dataset::embedding_state(j.path, encoder) == dataset::EmbeddingState::Ready) ++r.existing;
    else todo.push_back(&j);
  }
  if (progress) progress(r.existing, r.total);
  if (todo.empty()) return r;
  // The tokenizer first: a wrong tokenizer path should not cost an 11 GB load.
  // A caption is a few sentences; 512 tokens are about 2,000 characters. Far longer text is a
  // mistake (a file pasted into `text`), refused before anything loads.
  for (const CaptionJob* j : todo)
    if (j->text.size() > kMaxCaptionBytes)
      throw Error(j->label + ": a caption of " + std::to_string(j->text.size()) + " bytes; more than " +
                  std::to_string(kMaxCaptionBytes) + " is no caption (the encoder reads " + std::to_string(o.text_len) +
                  " tokens, a few thousand characters)");
  const text::Umt5Tokenizer tok(o.tokenizer_path);
  ws::log::info("loading the text encoder from {}", o.encoder_path);
  models::Umt5Encoder enc = models::Umt5Encoder::load(o.encoder_path);
  r.dim = enc.config().dim;
  if (expect_dim > 0 && r.dim != expect_dim)
    throw Error(o.encoder_path + ": the text encoder gives " + std::to_string(r.dim) +
                "-wide embeddings, the experts need text_dim " + std::to_string(expect_dim));
  if (tok.piece_count() > enc.config().vocab)
    throw Error(o.tokenizer_path + ": " + std::to_string(tok.piece_count()) +
                " pieces, more than the encoder's vocabulary of " + std::to_string(enc.config().vocab) +
                " (another model's tokenizer?)");
  enc.set_compute_dtype(o.bf16 ? torch::kBFloat16 : torch::kFloat);
  int64_t done = r.existing;
  for (const CaptionJob* j : todo) {
    if (cancel && cancel()) {
      r.cancelled = true;
      break;
    }
    const auto t = tok.encode(j->text, o.text_len);
    if (t.cleaned.empty()) {
      ++r.empty;
      ws::log::warn("{}: empty caption: it encodes as the end-of-sequence token alone", j->label);
    }
    if (t.truncated) {
      ++r.truncated;
      ws::log::warn("{}: the caption has {} tokens; the first {} are used (text_len {})", j->label, t.content_tokens,
                    o.text_len - 1, o.text_len);
    }
    io::StateDict sd;
    sd["context"] = enc.encode(t.ids).contiguous();
    fs::make_dirs(fs::dirname(j->path));
    io::write_safetensors(j->path, sd,
                          {{"text", j->text},
                           {"encoder", encoder},
                           {"tokens", std::to_string(t.ids.size())},
                           {"truncated", t.truncated ? "true" : "false"}});
    ++r.encoded;
    if (progress) progress(++done, r.total);
  }
  return r;
}

EncodeReport encode_missing_captions(const std::vector<std::string>& metadata_files, const std::string& data_dir,
                                     const std::string& embeddings_dir, const TextEncoderOptions& options,
                                     int64_t text_dim, const std::function<bool()>& cancel) {
  std::vector<CaptionJob> jobs;
  std::set<std::string> seen;
  for (const auto& m : metadata_files)
    for (auto& j : caption_jobs(dataset::read_metadata(m, data_dir), embeddings_dir))
      if (seen.insert(j.path).second) jobs.push_back(std::move(j));
  int64_t last = -1;
  auto progress = [&](int64_t done, int64_t total) {
    if (done == total || done - last >= std::max<int64_t>(1, total / 10)) {
      ws::log::info("text embeddings: {} of {}", done, total);
      last = done;
    }
  };
  const EncodeReport r = encode_captions(jobs, options, progress, cancel, text_dim);
  if (r.encoded) ws::log::info("encoded {} captions with {}", r.encoded, options.encoder_path);
  return r;
}

}  // namespace ws::train
