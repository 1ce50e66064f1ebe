// SPDX-License-Identifier: Apache-2.0
#include "data/clip_tensor.h"

#include <cstring>

#include "core/error.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#endif

namespace ws::data {

torch::Tensor frames_to_tensor(const std::vector<video::RgbFrame>& frames) {
  if (frames.empty()) throw Error("no frames to convert");
  const int w = frames.front().width, h = frames.front().height;
  const size_t bytes = static_cast<size_t>(w) * static_cast<size_t>(h) * 3;
  auto u8 = torch::empty({static_cast<int64_t>(frames.size()), h, w, 3}, torch::kUInt8);
  uint8_t* dst = u8.data_ptr<uint8_t>();
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    if (f.width != w || f.height != h || f.data.size() != bytes)
      throw Error("frame " + std::to_string(i) + " is " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                  ", frame 0 is " + std::to_string(w) + "x" + std::to_string(h));
    std::memcpy(dst + i * bytes, f.data.data(), bytes);
  }
  return u8.permute({0, 3, 1, 2}).to(torch::kFloat32).div_(255.0).contiguous();
}

torch::Tensor resize_cover_crop(const torch::Tensor& x, int64_t out_h, int64_t out_w, bool antialias) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == 3, "resize_cover_crop expects [T, 3, H, W], got ", x.sizes());
  TORCH_CHECK(out_h > 0 && out_w > 0, "resize_cover_crop: bad target size ", out_h, "x", out_w);
  const int64_t h0 = x.size(2), w0 = x.size(3);
  auto [rh, rw] = video::cover_size(h0, w0, out_h, out_w);
  torch::Tensor r = x;
  if (rh != h0 || rw != w0) {
    namespace F = torch::nn::functional;
    r = F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{rh, rw})
                              .mode(torch::kBilinear)
                              .align_corners(false)
                              .antialias(antialias));
  }
  const int64_t top = video::center_crop_offset(rh, out_h), left = video::center_crop_offset(rw, out_w);
  return r.narrow(2, top, out_h).narrow(3, left, out_w).contiguous();
}

torch::Tensor to_model_clip(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(1) == 3, "to_model_clip expects [T, 3, H, W], got ", x.sizes());
  return x.sub(0.5).div_(0.5).permute({1, 0, 2, 3}).contiguous();
}

std::vector<video::RgbFrame> clip_to_frames(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(0) == 3, "clip_to_frames expects [3, T, H, W], got ", x.sizes());
  torch::Tensor u8 = x.detach()
                         .to(torch::kCPU, torch::kFloat)
                         .add(1)
                         .div_(2)
                         .clamp_(0, 1)
                         .mul_(255)
                         .round_()
                         .to(torch::kUInt8)
                         .permute({1, 2, 3, 0})
                         .contiguous();  // [T, H, W, 3]
  const int64_t T = u8.size(0), H = u8.size(1), W = u8.size(2);
  std::vector<video::RgbFrame> frames;
  frames.reserve(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    video::RgbFrame f(static_cast<int>(W), static_cast<int>(H));
    std::memcpy(f.data.data(), u8[t].data_ptr<uint8_t>(), f.data.size());
    frames.push_back(std::move(f));
  }
  return frames;
}

#ifdef WANSTUDIO_HAVE_VIDEO
torch::Tensor read_clip(const std::string& path, const std::vector<int64_t>& indices, int64_t out_h, int64_t out_w) {
  video::VideoReader reader(path);
  torch::Tensor x = frames_to_tensor(reader.read(indices));
  if (out_h > 0 && out_w > 0) x = resize_cover_crop(x, out_h, out_w);
  return to_model_clip(x);
}
#else
torch::Tensor read_clip(const std::string&, const std::vector<int64_t>&, int64_t, int64_t) {
  throw Error("video support is not built into this wanstudio-engine (configure with -DWANSTUDIO_VIDEO=ON and FFmpeg)");
}
#endif

}  // namespace ws::data
