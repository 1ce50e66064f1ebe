// SPDX-License-Identifier: Apache-2.0
#include "data/degradation.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/error.h"
#include "data/degradation_kernels.h"

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_jpeg.h"
#endif

namespace ws::data {
namespace F = torch::nn::functional;

namespace {

using namespace degradation_kernels;

constexpr double kPi = 3.14159265358979323846;
const char* const kKnownOps = "blur, resize, gaussian_noise, poisson_noise, jpeg";

// ---- parameters ---------------------------------------------------------------------------

[[noreturn]] void bad_param(const DegradationOp& op, const std::string& what) {
  throw Error("degradation op '" + op.name + "': " + what);
}

const nlohmann::json& param(const DegradationOp& op, const char* key) {
  if (!op.params.is_object() || !op.params.contains(key)) bad_param(op, std::string("missing parameter '") + key + "'");
  return op.params.at(key);
}

double num_param(const DegradationOp& op, const char* key) {
  const auto& v = param(op, key);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    bad_param(op, std::string("parameter '") + key + "' is not a number");
  return v.get<double>();
}

bool bool_param(const DegradationOp& op, const char* key) {
  const auto& v = param(op, key);
  if (!v.is_boolean()) bad_param(op, std::string("parameter '") + key + "' is not true/false");
  return v.get<bool>();
}

std::string str_param(const DegradationOp& op, const char* key) {
  const auto& v = param(op, key);
  if (!v.is_string()) bad_param(op, std::string("parameter '") + key + "' is not a string");
  return v.get<std::string>();
}

torch::Tensor index_tensor(const std::vector<int64_t>& v) {
  return torch::tensor(v, torch::TensorOptions().dtype(torch::kInt64));
}

F::InterpolateFuncOptions resize_options(const DegradationOp& op, const std::string& mode, int64_t h, int64_t w) {
  auto o = F::InterpolateFuncOptions().size(std::vector<int64_t>{h, w});
  if (mode == "area") return o.mode(torch::kArea);  // adaptive average pooling
  if (mode == "bilinear") return o.mode(torch::kBilinear).align_corners(false);
  if (mode == "bicubic") return o.mode(torch::kBicubic).align_corners(false);
  bad_param(op, "unknown interpolation '" + mode + "' (area, bilinear or bicubic)");
}

// ---- ops, prepared per clip and applied per frame -------------------------------------------

enum class Kind { blur_iso, blur_aniso, resize, gaussian_noise, poisson_noise, jpeg };

// An op with its parameters checked and its per-clip work done: kernels, padding indices and
// one noise seed per frame (drawn in frame order, so threads do not change the result).
struct PreparedOp {
  Kind kind = Kind::blur_iso;
  int64_t k = 0;
  std::vector<float> g;                // isotropic blur: 1-D kernel
  std::vector<int64_t> ih, iw;         // reflect-padding source rows/columns
  torch::Tensor ih_t, iw_t, kernel_f;  // anisotropic blur: the same as tensors, kernel spectrum
  std::vector<int64_t> fft_hw;
  F::InterpolateFuncOptions down, up;  // resize
  float sigma = 0;                     // gaussian noise, 0..255 scale
  double strength = 0;                 // poisson noise
  bool gray = false;
  std::vector<uint64_t> seeds;  // noise: one per frame
  int qscale = 0;               // jpeg
};

int quality_param(const DegradationOp& op) {
  const double q = num_param(op, "quality");
  if (q != std::floor(q) || q < 1 || q > 100) bad_param(op, "quality must be a whole number in 1..100");
  return static_cast<int>(q);
}

std::vector<uint64_t> frame_seeds(int64_t frames, Rng& rng) {
  std::vector<uint64_t> seeds(static_cast<size_t>(frames));
  for (auto& s : seeds) s = rng.derive_seed();
  return seeds;
}

PreparedOp prepare(const DegradationOp& op, int64_t t, int64_t h, int64_t w, Rng& rng) {
  PreparedOp p;
  if (op.name == "blur") {
    const double kd = num_param(op, "kernel_size");
    p.k = static_cast<int64_t>(kd);
    if (static_cast<double>(p.k) != kd || p.k < 1 || p.k % 2 == 0 || p.k > 101)
      bad_param(op, "kernel_size must be an odd whole number in 1..101");
    const int64_t r = p.k / 2;
    p.ih = reflect_indices(h, r);
    p.iw = reflect_indices(w, r);
    if (bool_param(op, "isotropic")) {
      const double sigma = num_param(op, "sigma");
      if (!(sigma > 0)) bad_param(op, "sigma must be > 0");
      p.kind = Kind::blur_iso;
      p.g = gaussian_1d(p.k, sigma);
    } else {
      const double sx = num_param(op, "sigma_x"), sy = num_param(op, "sigma_y"), theta = num_param(op, "theta");
      if (!(sx > 0) || !(sy > 0)) bad_param(op, "sigma_x and sigma_y must be > 0");
      p.kind = Kind::blur_aniso;
      const auto kern = bivariate_gaussian(p.k, sx, sy, theta);
      p.ih_t = index_tensor(p.ih);
      p.iw_t = index_tensor(p.iw);
      p.fft_hw = {fft_size(h + 2 * r), fft_size(w + 2 * r)};
      // Circular convolution with the flipped kernel at the origin is the correlation we
      // want, shifted by k - 1; the zero tail past the padded picture keeps the wrap out.
      torch::Tensor kt = torch::zeros({p.fft_hw[0], p.fft_hw[1]}, torch::kFloat32);
      auto ka = kt.accessor<float, 2>();
      for (int64_t j = 0; j < p.k; ++j)
        for (int64_t i = 0; i < p.k; ++i)
          ka[j][i] = static_cast<float>(kern[static_cast<size_t>((p.k - 1 - j) * p.k + (p.k - 1 - i))]);
      p.kernel_f = torch::fft::rfft2(kt);
    }
  } else if (op.name == "resize") {
    const double q = num_param(op, "scale");
    if (!(q > 0 && q <= 1)) bad_param(op, "scale must be in (0, 1]");
    const std::string up = str_param(op, "up");
    if (up == "area") bad_param(op, "'up' must be bilinear or bicubic");
    // Python round (halves to even), at least one pixel.
    const int64_t h2 = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(q * static_cast<double>(h))));
    const int64_t w2 = std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(q * static_cast<double>(w))));
    p.kind = Kind::resize;
    p.down = resize_options(op, str_param(op, "down"), h2, w2);
    p.up = resize_options(op, up, h, w);
  } else if (op.name == "gaussian_noise") {
    p.kind = Kind::gaussian_noise;
    p.sigma = static_cast<float>(num_param(op, "sigma"));
    if (!(p.sigma >= 0)) bad_param(op, "sigma must be >= 0");
    p.gray = bool_param(op, "gray");
    p.seeds = frame_seeds(t, rng);
  } else if (op.name == "poisson_noise") {
    p.kind = Kind::poisson_noise;
    p.strength = num_param(op, "strength");
    if (!(p.strength >= 0)) bad_param(op, "strength must be >= 0");
    p.gray = bool_param(op, "gray");
    p.seeds = frame_seeds(t, rng);
    poisson_sampler();  // build the tables before the frame threads need them
  } else if (op.name == "jpeg") {
    p.kind = Kind::jpeg;
    p.qscale = jpeg_qscale(quality_param(op));
#ifndef WANSTUDIO_HAVE_VIDEO
    throw Error(
        "the jpeg degradation needs video support (FFmpeg), which is not built into this wanstudio-engine "
        "(configure with -DWANSTUDIO_VIDEO=ON and FFmpeg)");
#endif
  } else {
    throw Error("unknown degradation op '" + op.name + "' (known: " + kKnownOps + ")");
  }
  return p;
}

// Per-thread working memory.
struct Scratch {
  std::vector<float> row, tmp;
#ifdef WANSTUDIO_HAVE_VIDEO
  std::unique_ptr<video::JpegRoundTrip> jpeg;
#endif
};

// Clamp to [0, 255] and round halves to even (torch::round and std::nearbyint both do).
torch::Tensor clamp_round_(torch::Tensor f) { return f.clamp_(0.0, 255.0).round_(); }
// The same for one value: adding and removing 2^23 rounds a float in [0, 2^23) to a whole number,
// halves to even, and unlike std::nearbyint (a libm call on baseline x86-64) it vectorizes.
inline float clamp_round(float v) {
  const float c = std::min(std::max(v, 0.0f), 255.0f);
  return (c + 8388608.0f) - 8388608.0f;
}

// Two 1-D passes over the reflect-padded planes of one frame.
torch::Tensor blur_separable(const torch::Tensor& f, const PreparedOp& p, Scratch& s) {
  const int64_t h = f.size(1), w = f.size(2), k = p.k, hp = h + k - 1, wp = w + k - 1;
  s.row.resize(static_cast<size_t>(wp));
  s.tmp.resize(static_cast<size_t>(hp * w));
  torch::Tensor out = torch::empty_like(f);
  for (int64_t c = 0; c < 3; ++c) {
    const float* src = f.data_ptr<float>() + c * h * w;
    float* dst = out.data_ptr<float>() + c * h * w;
    for (int64_t y = 0; y < hp; ++y) {
      const float* sr = src + p.ih[static_cast<size_t>(y)] * w;
      for (int64_t x = 0; x < wp; ++x) s.row[static_cast<size_t>(x)] = sr[p.iw[static_cast<size_t>(x)]];
      float* __restrict t = s.tmp.data() + y * w;
      std::fill(t, t + w, 0.0f);
      for (int64_t dx = 0; dx < k; ++dx) {
        const float g = p.g[static_cast<size_t>(dx)];
        const float* __restrict in = s.row.data() + dx;
        for (int64_t x = 0; x < w; ++x) t[x] += g * in[x];
      }
    }
    for (int64_t y = 0; y < h; ++y) {
      float* __restrict o = dst + y * w;
      std::fill(o, o + w, 0.0f);
      for (int64_t dy = 0; dy < k; ++dy) {
        const float g = p.g[static_cast<size_t>(dy)];
        const float* __restrict in = s.tmp.data() + (y + dy) * w;
        for (int64_t x = 0; x < w; ++x) o[x] += g * in[x];
      }
    }
  }
  return clamp_round_(out);
}

// A rotated kernel is not separable and k^2 taps per pixel cost seconds per clip: filter in
// the frequency domain instead (cost independent of k).
torch::Tensor blur_fft(const torch::Tensor& f, const PreparedOp& p) {
  const int64_t h = f.size(1), w = f.size(2);
  const torch::Tensor padded = f.index_select(1, p.ih_t).index_select(2, p.iw_t);
  torch::Tensor spec = torch::fft::rfft2(padded, c10::IntArrayRef(p.fft_hw));
  const torch::Tensor y = torch::fft::irfft2(spec.mul_(p.kernel_f), c10::IntArrayRef(p.fft_hw));
  return clamp_round_(y.narrow(1, p.k - 1, h).narrow(2, p.k - 1, w).contiguous());
}

void gaussian_noise_(torch::Tensor& f, const PreparedOp& p, int64_t t) {
  const int64_t hw = f.size(1) * f.size(2);
  float* fr = f.data_ptr<float>();
  Rng r(p.seeds[static_cast<size_t>(t)]);
  if (p.gray) {
    for (int64_t i = 0; i < hw; ++i) {
      const float n = p.sigma * static_cast<float>(r.normal());
      for (int64_t c = 0; c < 3; ++c) fr[c * hw + i] = clamp_round(fr[c * hw + i] + n);
    }
  } else {
    for (int64_t i = 0; i < 3 * hw; ++i) fr[i] = clamp_round(fr[i] + p.sigma * static_cast<float>(r.normal()));
  }
}

// u + strength * (Poisson(256 u) / 256 - u) with u = v / 255; gray: the noise of the luma,
// added to every channel.
void poisson_noise_(torch::Tensor& f, const PreparedOp& p, int64_t t) {
  const int64_t hw = f.size(1) * f.size(2);
  float* fr = f.data_ptr<float>();
  Rng r(p.seeds[static_cast<size_t>(t)]);
  const PoissonSampler& ps = poisson_sampler();
  const double s255 = 255.0 * p.strength;
  if (p.gray) {
    for (int64_t i = 0; i < hw; ++i) {
      const double luma = (0.299 * fr[i] + 0.587 * fr[hw + i] + 0.114 * fr[2 * hw + i]) / 255.0;
      const double noise = static_cast<double>(ps.sample(256.0 * luma, r)) / 256.0 - luma;
      const float add = static_cast<float>(s255 * noise);
      for (int64_t c = 0; c < 3; ++c) fr[c * hw + i] = clamp_round(fr[c * hw + i] + add);
    }
  } else {
    for (int64_t i = 0; i < 3 * hw; ++i) {
      const int v = static_cast<int>(fr[i]);  // whole numbers 0..255 between ops
      const double noise = static_cast<double>(ps.sample_value(v, r)) / 256.0 - v / 255.0;
      fr[i] = clamp_round(static_cast<float>(v + s255 * noise));
    }
  }
}

torch::Tensor jpeg(const torch::Tensor& f, const PreparedOp& p, Scratch& s) {
#ifdef WANSTUDIO_HAVE_VIDEO
  const int64_t h = f.size(1), w = f.size(2);
  // Packed RGB24; the values are whole numbers already, so the cast is exact.
  torch::Tensor rgb = f.permute({1, 2, 0}).to(torch::kUInt8).contiguous();
  if (!s.jpeg) s.jpeg = std::make_unique<video::JpegRoundTrip>(static_cast<int>(w), static_cast<int>(h), p.qscale);
  s.jpeg->run(rgb.data_ptr<uint8_t>(), rgb.data_ptr<uint8_t>());
  return rgb.permute({2, 0, 1}).to(torch::kFloat32).contiguous();
#else
  (void)p;
  (void)s;
  return f;  // unreachable: prepare() refuses the op without video support
#endif
}

// f: one frame [3, H, W], contiguous float32 holding whole numbers 0..255, owned by the caller.
torch::Tensor apply_frame(torch::Tensor f, const PreparedOp& p, int64_t t, Scratch& s) {
  switch (p.kind) {
    case Kind::blur_iso: return blur_separable(f, p, s);
    case Kind::blur_aniso: return blur_fft(f, p);
    case Kind::resize:
      return clamp_round_(F::interpolate(F::interpolate(f.unsqueeze(0), p.down), p.up).squeeze(0).contiguous());
    case Kind::gaussian_noise: gaussian_noise_(f, p, t); return f;
    case Kind::poisson_noise: poisson_noise_(f, p, t); return f;
    case Kind::jpeg: return jpeg(f, p, s);
  }
  return f;
}

// Quantise each frame as the reference does, run the ops, and convert back. Frame by frame: the
// working set stays in cache. The frames run in turn (at::parallel_for is serial in a file built
// without -fopenmp, and the loader's threads run one OpenMP thread each): the loader's decode
// threads are the parallelism.
torch::Tensor run_ops(const torch::Tensor& x, const std::vector<PreparedOp>& ops) {
  const torch::Tensor xf = x.to(torch::kCPU).to(torch::kFloat32).contiguous();
  const int64_t t = xf.size(1), h = xf.size(2), w = xf.size(3), hw = h * w;
  torch::Tensor out = torch::empty({3, t, h, w}, torch::kFloat32);
  const float* src = xf.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, t, 1, [&](int64_t begin, int64_t end) {
    Scratch s;
    for (int64_t i = begin; i < end; ++i) {
      torch::Tensor f = torch::empty({3, h, w}, torch::kFloat32);
      float* fp = f.data_ptr<float>();
      for (int64_t c = 0; c < 3; ++c) {
        const float* in = src + (c * t + i) * hw;
        float* o = fp + c * hw;
        // ((x * 0.5 + 0.5) * 255).clamp(0, 255), then the uint8 cast's truncation.
        // (An int cast truncates like the uint8 one in 0..255, and vectorizes where std::trunc may not.)
        for (int64_t j = 0; j < hw; ++j)
          o[j] = static_cast<float>(static_cast<int>(std::min(std::max((in[j] * 0.5f + 0.5f) * 255.0f, 0.0f), 255.0f)));
      }
      for (const auto& op : ops) f = apply_frame(std::move(f), op, i, s);
      fp = f.data_ptr<float>();
      for (int64_t c = 0; c < 3; ++c) {
        const float* in = fp + c * hw;
        float* o = dst + (c * t + i) * hw;
        for (int64_t j = 0; j < hw; ++j) o[j] = (in[j] / 255.0f - 0.5f) / 0.5f;  // /255, then (x - 0.5) / 0.5
      }
    }
  });
  return out.to(x.device());
}

void check_clip(const torch::Tensor& x) {
  TORCH_CHECK(x.dim() == 4 && x.size(0) == 3 && x.size(1) > 0 && x.size(2) > 0 && x.size(3) > 0,
              "degradation expects a [3, T, H, W] clip, got ", x.sizes());
}

}  // namespace

int jpeg_qscale(int quality) {
  const double q = std::nearbyint(2.0 + (95.0 - quality) * 18.0 / 65.0);
  return static_cast<int>(std::min(std::max(q, 2.0), 31.0));
}

DegradationOp draw_degradation_op(const std::string& name, Rng& rng) {
  DegradationOp op{name, nlohmann::json::object()};
  auto& pr = op.params;
  if (name == "blur") {
    pr["kernel_size"] = 7 + 2 * rng.uniform_int(0, 7);  // 7, 9, ..., 21
    const bool iso = rng.bernoulli(0.7);
    pr["isotropic"] = iso;
    if (iso) {
      pr["sigma"] = rng.uniform(0.2, 3.0);
    } else {
      pr["sigma_x"] = rng.uniform(0.2, 3.0);
      pr["sigma_y"] = rng.uniform(0.2, 3.0);
      pr["theta"] = rng.uniform(-kPi, kPi);
    }
  } else if (name == "resize") {
    static const char* const down[] = {"area", "bilinear", "bicubic"};
    static const char* const up[] = {"bilinear", "bicubic"};
    pr["scale"] = rng.uniform(0.3, 1.0);
    pr["down"] = down[rng.uniform_int(0, 2)];
    pr["up"] = up[rng.uniform_int(0, 1)];
  } else if (name == "gaussian_noise") {
    pr["sigma"] = rng.uniform(1.0, 30.0);
    pr["gray"] = rng.bernoulli(0.4);
  } else if (name == "poisson_noise") {
    pr["strength"] = rng.uniform(0.05, 3.0);
    pr["gray"] = rng.bernoulli(0.4);
  } else if (name == "jpeg") {
    const int quality = static_cast<int>(rng.uniform_int(30, 95));
    pr["quality"] = quality;
    pr["qscale"] = jpeg_qscale(quality);
  } else {
    throw Error("unknown degradation op '" + name + "' (known: " + kKnownOps + ")");
  }
  return op;
}

std::vector<DegradationOp> draw_degradation_ops(int64_t min_ops, int64_t max_ops, Rng& rng) {
  if (min_ops < 0 || max_ops < min_ops)
    throw Error("degradation_ops_range [" + std::to_string(min_ops) + ", " + std::to_string(max_ops) +
                "] is not a range of op counts (need 0 <= min <= max)");
  constexpr int64_t pool = static_cast<int64_t>(kDegradationOps.size());
  const int64_t n = std::min(rng.uniform_int(min_ops, max_ops), pool);
  // A uniformly random n-subset: the first n slots of a partial Fisher-Yates shuffle.
  std::array<size_t, kDegradationOps.size()> idx;
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::array<bool, kDegradationOps.size()> chosen{};
  for (int64_t i = 0; i < n; ++i) {
    std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(rng.uniform_int(i, pool - 1))]);
    chosen[idx[static_cast<size_t>(i)]] = true;
  }
  std::vector<DegradationOp> ops;
  for (size_t i = 0; i < chosen.size(); ++i)  // canonical order
    if (chosen[i]) ops.push_back(draw_degradation_op(kDegradationOps[i], rng));
  return ops;
}

torch::Tensor apply_degradation_op(const torch::Tensor& x, const DegradationOp& op, Rng& rng) {
  check_clip(x);
  return run_ops(x, {prepare(op, x.size(1), x.size(2), x.size(3), rng)});
}

DegradationResult degrade_clip(const torch::Tensor& x, int64_t min_ops, int64_t max_ops, Rng& rng) {
  check_clip(x);
  DegradationResult r;
  r.ops = draw_degradation_ops(min_ops, max_ops, rng);
  std::vector<PreparedOp> prepared;
  for (const auto& op : r.ops) prepared.push_back(prepare(op, x.size(1), x.size(2), x.size(3), rng));
  r.clip = run_ops(x, prepared);
  return r;
}

nlohmann::json degradation_ops_json(const std::vector<DegradationOp>& ops) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& op : ops) {
    nlohmann::json o = {{"op", op.name}};
    if (op.params.is_object()) o.update(op.params);
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace ws::data
