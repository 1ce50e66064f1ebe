// SPDX-License-Identifier: Apache-2.0
#include "train/upsampler/upsampler_validation.h"

#include <cmath>

#include "core/error.h"
#include "core/fs.h"
#include "dataset/buckets.h"
#include "data/clip_tensor.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#include "video/video_encode.h"
#include "contract/run_layout.h"
#endif

namespace ws::train {

namespace F = torch::nn::functional;

double clip_psnr(const torch::Tensor& a, const torch::Tensor& b) {
  auto to01 = [](const torch::Tensor& x) { return x.to(torch::kCPU, torch::kFloat).clamp(-1, 1).add(1).div(2); };
  const double mse = (to01(a) - to01(b)).pow(2).mean().item<double>();
  if (mse <= 0) return 100.0;
  return std::min(100.0, 10.0 * std::log10(1.0 / mse));
}

#ifdef WANSTUDIO_HAVE_VIDEO

// Frame-wise bilinear resize of [3, T, H, W] to a square, align_corners false, no antialias.
static torch::Tensor resize_square(const torch::Tensor& x, int64_t edge) {
  return F::interpolate(x.permute({1, 0, 2, 3}), F::InterpolateFuncOptions()
                                                     .size(std::vector<int64_t>{edge, edge})
                                                     .mode(torch::kBilinear)
                                                     .align_corners(false))
      .permute({1, 0, 2, 3})
      .contiguous();
}

ValidationResult run_validation(const std::string& video, int64_t index, int64_t step, models::WanVae& vae,
                                models::LatentUpsampler& model, const ValidationSettings& st,
                                const std::string& run_dir) {
  torch::NoGradGuard no_grad;
  ValidationResult r;
  const double scale = model->config().rational_spatial_scale;
  const int64_t A = dataset::bucket_alignment(scale);
  const int64_t edge = std::max(A, st.sample_size / A * A);  // [D] aligned, so the latents match
  const int64_t edge_lr =
      std::max<int64_t>(16, static_cast<int64_t>(std::floor(static_cast<double>(edge) / scale / 16.0)) * 16);

  video::VideoInfo info = video::probe_video(video, true);
  int64_t num = std::min<int64_t>(info.still_image ? 1 : info.frames, st.n_frames);
  num = std::max<int64_t>(1, (num - 1) / 4 * 4 + 1);
  std::vector<int64_t> idx(static_cast<size_t>(num));
  for (int64_t i = 0; i < num; ++i) idx[static_cast<size_t>(i)] = i;
  torch::Tensor x = resize_square(data::read_clip(video, idx), edge);  // [3, T, S', S']
  torch::Tensor x_lr = resize_square(x, edge_lr);

  torch::Tensor z_hr = vae.encode(x.unsqueeze(0));
  torch::Tensor z_lr = vae.encode(x_lr.unsqueeze(0));
  const torch::Device dev = model->parameters().front().device();
  torch::Tensor z_up = model->forward(z_lr.to(dev, torch::kFloat)).to(z_hr.device(), torch::kFloat);
  if (z_up.sizes() != z_hr.sizes())
    throw Error("validation: upsampled latent " + io::shape_str(z_up.sizes().vec()) +
                " does not match the high-res latent " + io::shape_str(z_hr.sizes().vec()));
  r.latent_mse = (z_up - z_hr).pow(2).mean().item<double>();
  torch::Tensor d_hr = vae.decode(z_hr)[0];
  torch::Tensor d_up = vae.decode(z_up)[0];
  torch::Tensor d_lr = vae.decode(z_lr)[0];
  r.psnr = clip_psnr(d_up, d_hr);
  const torch::Tensor d_bilinear = resize_square(d_lr, edge);
  r.psnr_lowres = clip_psnr(d_bilinear, d_hr);
  const torch::Tensor source = x.to(d_hr.device(), torch::kFloat);
  r.psnr_ceiling = clip_psnr(d_hr, source);
  r.psnr_source = clip_psnr(d_up, source);
  r.psnr_lowres_source = clip_psnr(d_bilinear, source);
  r.frames = num;
  r.size = edge;
  r.size_lr = edge_lr;

  fs::make_dirs(fs::join(run_dir, contract::kSampleDir));
  video::EncodeOptions eo;
  eo.fps = st.fps;
  r.upsampled = contract::validation_video_name(step, index, "upsampled");
  r.lowres = contract::validation_video_name(step, index, "lowres");
  r.highres = contract::validation_video_name(step, index, "highres");
  video::write_video(fs::join(run_dir, r.upsampled), data::clip_to_frames(d_up), eo);
  video::write_video(fs::join(run_dir, r.lowres), data::clip_to_frames(d_lr), eo);
  video::write_video(fs::join(run_dir, r.highres), data::clip_to_frames(d_hr), eo);
  return r;
}

#else

ValidationResult run_validation(const std::string&, int64_t, int64_t, models::WanVae&, models::LatentUpsampler&,
                                const ValidationSettings&, const std::string&) {
  throw Error("validation videos need video support (configure with -DWANSTUDIO_VIDEO=ON and FFmpeg)");
}

#endif

contract::ValidationEvent validation_event(const ValidationResult& r, int64_t step, int64_t index,
                                           const std::string& source) {
  contract::ValidationEvent ev;
  ev.step = step;
  ev.index = index;
  ev.source = source;
  ev.lowres = r.lowres;
  ev.upsampled = r.upsampled;
  ev.highres = r.highres;
  ev.psnr = r.psnr;
  ev.psnr_lowres = r.psnr_lowres;
  ev.latent_mse = r.latent_mse;
  ev.psnr_ceiling = r.psnr_ceiling;
  ev.psnr_source = r.psnr_source;
  ev.psnr_lowres_source = r.psnr_lowres_source;
  ev.frames = r.frames;
  ev.size = r.size;
  ev.size_lr = r.size_lr;
  return ev;
}

}  // namespace ws::train
