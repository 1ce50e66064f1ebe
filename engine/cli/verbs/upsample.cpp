// SPDX-License-Identifier: Apache-2.0
// `wanstudio-engine upsample`: what an upsampler run's validation writes, for any checkpoint and
// any video (train/upsampler/upsampler_validation.h): the clip squared to the sample size, encoded at high
// and low resolution, the low-res latent upsampled, the three decodes as MP4s and the PSNRs.
//   upsample --checkpoint RUN/checkpoint-N [--ema] --vae W --video clip.mp4 --out DIR
// Events: started (job upsample), validation, finished; SIGTERM or `cancel` before the
// videos are written exits 130 (each MP4 is written under a temporary name, then renamed).

#include <cstdio>

#include "cli/args.h"
#include "cli/vae_cli.h"
#include "cli/verb.h"
#include "contract/events.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "models/latent_upsampler.h"
#include "models/wan_vae.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "train/memory_plan.h"
#include "train/upsampler/upsampler_validation.h"

namespace ws::cli {
namespace {

int run_upsample(const std::vector<std::string>& argv) {
  Args a("upsample", "upsample --checkpoint DIR [--ema] --vae WEIGHTS --video FILE --out DIR [options]",
         "Runs an upsampler checkpoint on a video exactly as validation does: the first frames squared to the\n"
         "sample size, encoded at high and low resolution, the low-res latent upsampled, and the low-res,\n"
         "upsampled and high-res decodes written as DIR/sample/step<N>_val<I>_{lowres,upsampled,highres}.mp4\n"
         "with their PSNR against the high-res decode.");
  a.value("checkpoint", "DIR", "a checkpoint-<N>/ of train-upsampler, or a latent_upsampler/ model folder (required)");
  a.flag("ema", "use the checkpoint's EMA weights (latent_upsampler_ema/; what validation renders with use_ema)");
  a.value("vae", "WEIGHTS", "the Wan2.2 VAE (required)");
  a.value("video", "FILE", "the clip (required)");
  a.value("out", "DIR", "where sample/ goes (required)");
  a.value("video_sample_size", "S", "square edge, as the run's (default 640)", int_range(48, 4096));
  a.value("video_sample_n_frames", "N", "frames, 4k+1, as the run's (default 81)", frames_upto(1025));
  a.value("step", "N", "the step in the file names (default: the checkpoint's, else 0)", int_range(0, 1000000000));
  a.value("index", "I", "the index in the file names (default 0)", int_range(0, 1000000));
  a.value("fps", "F", "frame rate of the MP4s (default 24)", real_range(1, 240));
  a.flag("force", "run even when the estimate says the memory will not suffice");
  a.value("threads", "N", "CPU threads (default: all cores)", int_range(0, 1024));
  if (!a.parse(argv)) return 0;
  for (const char* k : {"checkpoint", "vae", "video", "out"})
    if (!a.has(k)) throw UsageError(std::string("--") + k + " is required");
  vae_cli_threads(a.integer("threads", 0));
  runtime::install_cancel_handlers();
  runtime::stop_inside_computations();
  auto& events = runtime::EventStream::global();
  try {
    std::string model_dir = a.str("checkpoint");
    const std::string sub = a.boolean("ema") ? "latent_upsampler_ema" : "latent_upsampler";
    if (fs::is_dir(fs::join(model_dir, sub))) model_dir = fs::join(model_dir, sub);
    else if (a.boolean("ema"))
      throw Error(a.str("checkpoint") + ": no latent_upsampler_ema/ (was the run trained with use_ema?)");
    int64_t step = 0;
    const std::string base = fs::basename(a.str("checkpoint"));
    if (base.rfind("checkpoint-", 0) == 0) step = std::atoll(base.c_str() + 11);
    step = a.integer("step", step);
    train::ValidationSettings vs;
    vs.sample_size = a.integer("video_sample_size", 640);
    vs.n_frames = a.integer("video_sample_n_frames", 81);
    vs.fps = a.real("fps", 24.0);
    const int64_t index = a.integer("index", 0);
    if (vs.sample_size < 16) throw UsageError("--video_sample_size must be at least 16");
    if (vs.n_frames < 1) throw UsageError("--video_sample_n_frames must be at least 1");
    if (!a.boolean("force")) {  // the VAE at this size, and the clip at its three stages (input, low-res, output)
      train::MemoryEstimate m;
      try {
        train::add_vae_memory(m, a.str("vae"), nlohmann::json::object(), vs.sample_size, false);
      } catch (const std::exception&) {  // unreadable weights: the load below says why
      }
      train::DataOptions d;
      d.sample_size = vs.sample_size;
      d.n_frames = vs.n_frames;
      m.add("clips", 3 * train::clip_bytes(d), "the clip, its low-res input and the decode");
      train::refuse_unless_fits(
          m, "upsampling at " + std::to_string(vs.sample_size) + " pixels, " + std::to_string(vs.n_frames) + " frames");
    }
    contract::StartedEvent st;
    st.job = "upsample";
    st.config = {{"checkpoint", a.str("checkpoint")},
                 {"ema", a.boolean("ema")},
                 {"vae", a.str("vae")},
                 {"video", a.str("video")},
                 {"video_sample_size", vs.sample_size},
                 {"video_sample_n_frames", vs.n_frames},
                 {"step", step},
                 {"index", index}};
    events.emit(st);
    std::vector<std::string> warnings;
    models::LatentUpsampler model = models::load_latent_upsampler(model_dir, &warnings);
    for (const auto& w : warnings) ws::log::warn("{}", w);
    auto vae = models::WanVae::load(a.str("vae"));
    if (vae->z_dim() != model->config().in_channels)
      throw Error(a.str("vae") + ": the VAE has " + std::to_string(vae->z_dim()) + " latent channels, the upsampler " +
                  std::to_string(model->config().in_channels));
    if (runtime::cancel_requested()) {
      events.finished("cancelled", 0);
      return 130;
    }
    fs::make_dirs(a.str("out"));
    train::ValidationResult r = train::run_validation(a.str("video"), index, step, *vae, model, vs, a.str("out"));
    const contract::ValidationEvent ev = train::validation_event(r, step, index, a.str("video"));
    events.emit(ev);
    ws::log::info("against the high-res decode: upsampled PSNR {:.2f} dB, bilinear baseline {:.2f} dB", r.psnr,
                  r.psnr_lowres);
    ws::log::info(
        "against the source: upsampled {:.2f} dB, bilinear {:.2f} dB, ceiling (the high-res decode) {:.2f} dB",
        r.psnr_source, r.psnr_lowres_source, r.psnr_ceiling);
    events.finished("completed", step);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    events.error(e.what());
    events.finished("failed", 0);
    throw;
  }
  return 0;
}

}  // namespace

WS_VERB("upsample", "an upsampler checkpoint on any video: the validation decodes and PSNR", &run_upsample);

}  // namespace ws::cli
