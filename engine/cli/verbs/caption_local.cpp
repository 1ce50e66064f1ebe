// SPDX-License-Identifier: Apache-2.0
#include "cli/verbs/caption_local.h"

#include <torch/torch.h>

#include <cstring>

#include "cli/device_option.h"
#include "core/error.h"
#include "core/fs.h"
#include "io/weights.h"
#include "models/qwen_vl.h"
#include "models/qwen_vl_preprocess.h"
#include "text/qwen_tokenizer.h"
#include "video/video_resize.h"

namespace ws::cli {

namespace {

// The dtype the release stores its weights in (bf16 as Qwen ships them). On the CPU that is the
// compute dtype `auto` picks: computing in fp32 from bf16 weights converts every matrix at every
// token (a 7B layer's MLP matrix: 140 ms to convert against 12 ms for its bf16 product).
torch::ScalarType stored_dtype(const std::string& dir) {
  std::string file = fs::join(dir, "model.safetensors");
  if (!fs::exists(file)) file = fs::join(dir, "model.safetensors.index.json");
  if (!fs::exists(file)) return torch::kFloat;           // QwenVl::load says what is missing
  const io::StateDict weights = io::load_weights(file);  // mapped, not read
  for (const auto& [key, t] : weights)
    if (t.is_floating_point()) return t.scalar_type() == torch::kBFloat16 ? torch::kBFloat16 : torch::kFloat;
  return torch::kFloat;
}

}  // namespace

// Qwen2.5-VL's video processor bounds a frame's pixels to [128, 768] merged 28×28 cells.
constexpr int64_t kDefaultMinPixels = 128 * 28 * 28, kDefaultMaxPixels = 768 * 28 * 28;

struct LocalCaptioner::Impl {
  LocalCaptionOptions options;
  torch::Device device{torch::kCPU};
  torch::ScalarType dtype = torch::kFloat;
  std::unique_ptr<models::QwenVl> model;
  std::unique_ptr<text::QwenTokenizer> tokenizer;
};

LocalCaptioner::LocalCaptioner(const LocalCaptionOptions& o) : impl_(std::make_unique<Impl>()) {
  impl_->options = o;
  const std::string& dir = o.model_path;
  check_folder(dir);
  impl_->device = parse_device_option(o.device);
  if (o.dtype == "bf16") impl_->dtype = torch::kBFloat16;
  else if (o.dtype == "auto") impl_->dtype = impl_->device.is_cuda() ? torch::kBFloat16 : stored_dtype(dir);
  else if (o.dtype != "fp32") throw UsageError("--dtype: auto, fp32 or bf16, got '" + o.dtype + "'");
  impl_->tokenizer = std::make_unique<text::QwenTokenizer>(fs::join(dir, "tokenizer.json"));
  impl_->model = std::make_unique<models::QwenVl>(models::QwenVl::load(dir, impl_->dtype, impl_->device));
}

LocalCaptioner::~LocalCaptioner() = default;

void LocalCaptioner::check_folder(const std::string& dir) {
  if (!fs::is_dir(dir))
    throw Error("--model_path " + dir +
                ": not a folder (a Qwen2.5-VL release: config.json, *.safetensors, tokenizer.json)");
  for (const char* f : {"config.json", "tokenizer.json"})
    if (!fs::exists(fs::join(dir, f)))
      throw Error("--model_path " + dir + ": no " + f + " (not a Qwen2.5-VL release folder)");
}

std::string LocalCaptioner::device() const { return impl_->device.str(); }
std::string LocalCaptioner::dtype() const { return impl_->dtype == torch::kBFloat16 ? "bf16" : "fp32"; }

std::string LocalCaptioner::caption(const std::string& prompt, const std::vector<video::RgbFrame>& frames,
                                    double seconds_between,
                                    const std::function<bool(const std::string&)>& on_text) const {
  if (frames.empty()) throw Error("no frames");
  const models::QwenVlConfig& cfg = impl_->model->config();
  const auto& vc = cfg.vision;
  const int64_t factor = vc.patch_size * vc.spatial_merge_size;
  const LocalCaptionOptions& o = impl_->options;
  const auto size = models::qwen_smart_resize(frames[0].height, frames[0].width, factor,
                                              o.min_pixels > 0 ? o.min_pixels : kDefaultMinPixels,
                                              o.max_pixels > 0 ? o.max_pixels : kDefaultMaxPixels);
  auto pixels = torch::empty({static_cast<int64_t>(frames.size()), size.height, size.width, 3}, torch::kUInt8);
  for (size_t i = 0; i < frames.size(); ++i) {
    const video::RgbFrame f = video::resize_rgb(frames[i], static_cast<int>(size.width), static_cast<int>(size.height),
                                                video::ResizeFilter::Bicubic);
    std::memcpy(pixels[static_cast<int64_t>(i)].data_ptr<uint8_t>(), f.data.data(), f.data.size());
  }
  models::QwenVideoInput video;
  video.patches = models::qwen_video_patches(pixels, vc, &video.grid);
  // M-RoPE's time positions: seconds per temporal patch (two frames).
  video.second_per_grid = vc.temporal_patch_size * (seconds_between > 0 ? seconds_between : 1.0);
  const int64_t tokens = video.grid[0] * video.grid[1] * video.grid[2] / vc.merge_unit();
  const std::vector<int64_t> ids = impl_->tokenizer->encode(models::qwen_chat_prompt(prompt, {tokens}));

  models::QwenGenerateOptions g;
  g.max_new_tokens = o.max_new_tokens;
  g.temperature = o.temperature;
  g.top_p = o.top_p;
  g.top_k = o.top_k;
  g.seed = o.seed;
  std::vector<int64_t> answer;
  const auto out = impl_->model->generate(ids, {video}, g, [&](int64_t id) {
    answer.push_back(id);
    return !on_text || on_text(impl_->tokenizer->decode(answer, true));
  });
  return impl_->tokenizer->decode(out, true);
}

}  // namespace ws::cli
