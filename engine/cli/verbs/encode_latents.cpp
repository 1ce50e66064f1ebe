// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine encode-latents`: a dataset through the VAE once, for train-experts runs that
// then need no VAE (train/experts/latent_encoding.h). Either VAE; the weights say which.
//   encode-latents --metadata META.json --vae Wan2.1_VAE.pth --out DIR [training options]
// Events on stdout (`progress` after each row with rate and ETA, then `finished`); SIGTERM or a
// `cancel` line stops after the current row (exit 130); a re-run keeps what is already written.

#include <cstdio>

#include "cli/args.h"
#include "cli/vae_cli.h"
#include "cli/verb.h"
#include "contract/option_values.h"
#include "core/error.h"
#include "core/log.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/progress.h"
#include "train/memory_plan.h"
#include "train/experts/latent_encoding.h"

namespace ws::cli {
namespace {

int run_encode_latents(const std::vector<std::string>& argv) {
  Args a("encode-latents", "encode-latents --metadata META.json --vae WEIGHTS --out DIR [options]",
         "Encodes every row of a dataset with the VAE (Wan2.1 or Wan2.2; the weights say which) into\n"
         "DIR/latents/row<N>.safetensors (`latents` [z, F, h, w], and `y` with --i2v) and writes\n"
         "DIR/metadata.json naming them (`latent_path`): train-experts on it needs no VAE. Clips are cut\n"
         "as a train-experts run with latent_cache_dir and the same options cuts them (the row's frame\n"
         "window drawn from --seed, the bucket size from --video-sample-size), or from frame 0.");
  a.value("metadata", "META.json", "the dataset (required)");
  a.value("train_data_dir", "DIR", "folder the metadata's file paths are relative to (default: its folder)");
  a.value("vae", "WEIGHTS", "VAE weights: Wan2.1_VAE.pth (A14B experts), Wan2.2_VAE.pth, or .safetensors (required)");
  a.value("vae_type", "TYPE", "auto (default), wan2.1 or wan2.2; must match the weights");
  a.value("out", "DIR", "output folder (required)");
  a.value("seed", "N", "the training run's seed: it draws each row's frame window (default 42)",
          int_range(0, 9007199254740991.0));
  a.value("video_sample_size", "S", "bucket edge, as train-experts (default 512)", int_range(48, 4096));
  a.value("video_sample_n_frames", "N", "frames per clip, 4k+1 (default 81)", frames_upto(1025));
  a.value("video_sample_stride", "S", "frame stride (default 2)", int_range(1, 1000));
  a.flag("no_bucket", "one square size for every row (train-experts' enable_bucket false)");
  a.flag("from_start", "every clip from frame 0 instead of the row's drawn window");
  a.flag("i2v", "also write `y` (mask + first-frame latent) for i2v experts");
  a.flag("force", "encode even when the estimate says the memory will not suffice");
  a.value("threads", "N", "CPU threads (default: all cores)", int_range(0, 1024));
  a.value("device", "DEV", "cpu (default) or cuda[:N] in CUDA builds");
  a.flag("bf16", "bf16 VAE compute (CUDA builds)");
  if (!a.parse(argv)) return 0;
  for (const char* k : {"metadata", "vae", "out"})
    if (!a.has(k)) throw UsageError(std::string("--") + k + " is required");
  train::LatentEncodeOptions o;
  o.metadata = a.str("metadata");
  o.data_dir = a.str("train_data_dir");
  o.vae_path = a.str("vae");
  o.out_dir = a.str("out");
  if (a.has("vae_type")) o.vae_config["vae_type"] = a.str("vae_type");
  o.seed = static_cast<uint64_t>(a.integer("seed", 42));
  o.sample_size = a.integer("video_sample_size", 512);
  o.n_frames = a.integer("video_sample_n_frames", 81);
  o.stride = a.integer("video_sample_stride", 2);
  if (o.sample_size < 32) throw UsageError("--video_sample_size must be at least 32");
  if (!contract::is_4k_plus_1(o.n_frames)) throw UsageError("--video_sample_n_frames must be 4k+1 (1, 5, 9, ...)");
  if (o.stride < 1) throw UsageError("--video_sample_stride must be at least 1");
  o.enable_bucket = !a.boolean("no_bucket");
  o.from_start = a.boolean("from_start");
  o.i2v = a.boolean("i2v");
  o.vae.device = a.str("device", "cpu");
  o.vae.bf16 = a.boolean("bf16");
  vae_cli_threads(a.integer("threads", 0));
  if (!a.boolean("force")) {  // before the VAE loads: its weights, one encode and one clip at this size
    train::MemoryEstimate m;
    try {
      train::add_vae_memory(m, o.vae_path, o.vae_config, o.sample_size, o.vae.bf16);
    } catch (const std::exception&) {  // unreadable weights: the load below says why
    }
    train::DataOptions d;
    d.sample_size = o.sample_size;
    d.n_frames = o.n_frames;
    m.add("clip", train::clip_bytes(d), "one decoded clip");
    train::refuse_unless_fits(
        m, "encoding " + std::to_string(o.sample_size) + "-pixel clips of " + std::to_string(o.n_frames) + " frames");
  }

  runtime::install_cancel_handlers();
  runtime::stop_inside_computations();
  auto& events = runtime::EventStream::global();
  runtime::Heartbeat heartbeat;  // alive while a 508 MB VAE loads or a long clip encodes
  runtime::ProgressReporter progress("encode-latents");
  train::LatentEncodeReport r;
  try {
    r = train::encode_latent_rows(
        o, [&](int64_t d, int64_t t) { progress(d, t); }, [] { return runtime::cancel_requested(); });
  } catch (const std::exception& e) {
    events.error(e.what());
    events.finished("failed", 0);
    throw;
  }
  for (const auto& f : r.failed) ws::log::warn("not encoded: {}", f);
  ws::log::info("{} rows ({} {}-channel latents): {} encoded, {} already there, {} failed{}", r.rows, r.vae_type,
                r.z_dim, r.encoded, r.existing, r.failed.size(), r.metadata_out.empty() ? "" : "; " + r.metadata_out);
  events.finished(r.cancelled ? "cancelled" : "completed", r.encoded + r.existing);
  return r.cancelled ? 130 : 0;
}

}  // namespace

WS_VERB("encode-latents", "a dataset through the VAE once: latent files and a metadata.json naming them",
        &run_encode_latents);

}  // namespace ws::cli
