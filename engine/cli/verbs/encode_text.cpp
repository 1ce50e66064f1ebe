// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine encode-text`: captions to UMT5 text embeddings, one file per distinct caption,
// named and placed as train-experts looks them up, plus the negative prompt's (docs/design/umt5.md).
//   encode-text --metadata META.json --text_embeddings_dir DIR --text_encoder_path T5.pth --tokenizer_path TOK
//   encode-text --prompt "a fox" "a cat" --text_embeddings_dir DIR ...
// Events on stdout (`progress` after each caption, then `finished`); SIGTERM or a `cancel` line
// stops after the current caption (exit 130); a re-run skips what is already written.

#include <cstdio>

#include "cli/args.h"
#include "cli/verb.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/sha256.h"
#include "dataset/metadata.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/progress.h"
#include "text/prompts.h"
#include "train/experts/text_encoding.h"

namespace ws::cli {
namespace {

int run_encode_text(const std::vector<std::string>& argv) {
  Args a("encode-text",
         "encode-text (--metadata META.json | --prompt TEXT ...) --text_embeddings_dir DIR "
         "--text_encoder_path FILE --tokenizer_path PATH",
         "Encodes captions with the UMT5 text encoder into DIR/<sha256 of the caption>.safetensors (`context`\n"
         "[L, dim]), the files train-experts reads, plus the negative prompt's. Existing files are kept.");
  a.value("metadata", "META.json", "every distinct caption of a dataset (rows' own text_embedding_path wins)");
  a.value("train_data_dir", "DIR", "folder the metadata's file paths are relative to (default: its folder)");
  a.list("prompt", "TEXT", "captions given directly");
  a.value("text_embeddings_dir", "DIR", "where the embeddings go (required)");
  a.value("text_encoder_path", "FILE",
          "models_t5_umt5-xxl-enc-bf16.pth, a .safetensors, or a transformers folder (required)");
  a.value("tokenizer_path", "PATH", "spiece.model, or the google/umt5-xxl folder holding it (required)");
  a.value("negative_prompt", "TEXT", "also encoded (default: Wan's sample_neg_prompt; \"\" for none)");
  a.value("text_len", "N", "tokens per caption, EOS included (default 512)", int_range(1, 4096));
  a.value("dtype", "fp32|bf16", "compute and storage precision (default fp32; Wan runs bf16)");
  if (!a.parse(argv)) return 0;
  for (const char* k : {"text_embeddings_dir", "text_encoder_path", "tokenizer_path"})
    if (!a.has(k)) throw UsageError(std::string("--") + k + " is required");
  if (a.has("metadata") == !a.strs("prompt").empty()) throw UsageError("give --metadata or --prompt (one of them)");
  const std::string dtype = a.str("dtype", "fp32");
  if (dtype != "fp32" && dtype != "bf16") throw UsageError("--dtype: fp32 or bf16, got '" + dtype + "'");
  train::TextEncoderOptions o;
  o.encoder_path = a.str("text_encoder_path");
  o.tokenizer_path = a.str("tokenizer_path");
  o.text_len = a.integer("text_len", 512);
  if (o.text_len < 1 || o.text_len > 4096) throw UsageError("--text_len must be 1..4096");
  o.bf16 = dtype == "bf16";
  if (!fs::exists(o.encoder_path)) throw Error(o.encoder_path + ": no such text encoder checkpoint");
  const std::string dir = a.str("text_embeddings_dir");

  std::vector<train::CaptionJob> jobs;
  if (a.has("metadata")) {
    jobs = train::caption_jobs(dataset::read_metadata(a.str("metadata"), a.str("train_data_dir")), dir);
  } else {
    int i = 0;
    for (const auto& p : a.strs("prompt"))
      jobs.push_back({p, fs::join(dir, sha256_hex(p) + ".safetensors"), "prompt " + std::to_string(i++)});
  }
  const std::string neg = a.has("negative_prompt") ? a.str("negative_prompt") : std::string(text::kWanNegativePrompt);
  if (!neg.empty()) jobs.push_back({neg, fs::join(dir, sha256_hex(neg) + ".safetensors"), "the negative prompt"});

  runtime::install_cancel_handlers();
  auto& events = runtime::EventStream::global();
  runtime::Heartbeat heartbeat;  // a supervisor's watchdog sees it alive while an 11 GB checkpoint loads
  runtime::ProgressReporter progress("encode-text");
  train::EncodeReport r;
  try {
    r = train::encode_captions(
        jobs, o, [&](int64_t d, int64_t t) { progress(d, t); }, [] { return runtime::cancel_requested(); });
  } catch (const std::exception& e) {
    events.error(e.what());
    events.finished("failed", 0);
    throw;
  }
  ws::log::info("{} captions: {} encoded, {} already there{}{}", r.total, r.encoded, r.existing,
                r.truncated ? ", " + std::to_string(r.truncated) + " truncated" : std::string(),
                r.empty ? ", " + std::to_string(r.empty) + " empty" : std::string());
  events.finished(r.cancelled ? "cancelled" : "completed", r.encoded + r.existing);
  return r.cancelled ? 130 : 0;
}

}  // namespace

WS_VERB("encode-text", "captions to UMT5 text embeddings (the files train-experts reads)", &run_encode_text);

}  // namespace ws::cli
