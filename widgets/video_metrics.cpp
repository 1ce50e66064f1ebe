// SPDX-License-Identifier: Apache-2.0
#include "video_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#endif

namespace ws {
namespace {

double mean(const QVector<double>& v) {
  return v.isEmpty() ? std::nan("") : std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
}

std::vector<float> luma(const uint8_t* rgb, int width, int height) {
  std::vector<float> y(size_t(width) * size_t(height));
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = 0.299f * float(rgb[3 * i]) + 0.587f * float(rgb[3 * i + 1]) + 0.114f * float(rgb[3 * i + 2]);
  return y;
}

// Separable Gaussian filter, "valid" region only: (w-10) × (h-10) outputs.
std::vector<float> gaussValid(const std::vector<float>& x, int width, int height, const std::vector<float>& k) {
  const int r = int(k.size()) / 2, ow = width - 2 * r, oh = height - 2 * r;
  std::vector<float> tmp(size_t(ow) * size_t(height)), out(size_t(ow) * size_t(oh));
  for (int y = 0; y < height; ++y)
    for (int x0 = 0; x0 < ow; ++x0) {
      float s = 0;
      for (size_t i = 0; i < k.size(); ++i) s += k[i] * x[size_t(y) * size_t(width) + size_t(x0) + i];
      tmp[size_t(y) * size_t(ow) + size_t(x0)] = s;
    }
  for (int y0 = 0; y0 < oh; ++y0)
    for (int x0 = 0; x0 < ow; ++x0) {
      float s = 0;
      for (size_t i = 0; i < k.size(); ++i) s += k[i] * tmp[(size_t(y0) + i) * size_t(ow) + size_t(x0)];
      out[size_t(y0) * size_t(ow) + size_t(x0)] = s;
    }
  return out;
}

}  // namespace

double FrameScores::meanPsnr() const { return mean(psnr); }
double FrameScores::meanSsim() const { return mean(ssim); }

double FrameScores::pooledPsnr() const {
  if (psnr.isEmpty()) return std::nan("");
  double mse = 0;
  for (double p : psnr) mse += 255.0 * 255.0 / std::pow(10.0, p / 10.0);
  mse /= double(psnr.size());
  return mse <= 0 ? 100.0 : std::min(100.0, 10.0 * std::log10(255.0 * 255.0 / mse));
}

double rgbPsnr(const uint8_t* a, const uint8_t* b, int width, int height) {
  const size_t n = size_t(width) * size_t(height) * 3;
  double se = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = double(a[i]) - double(b[i]);
    se += d * d;
  }
  const double mse = se / double(std::max<size_t>(n, 1));
  return mse <= 0 ? 100.0 : std::min(100.0, 10.0 * std::log10(255.0 * 255.0 / mse));
}

double lumaSsim(const uint8_t* a, const uint8_t* b, int width, int height) {
  std::vector<float> k(11);
  for (int i = 0; i < 11; ++i) k[size_t(i)] = float(std::exp(-double((i - 5) * (i - 5)) / (2 * 1.5 * 1.5)));
  const float ks = std::accumulate(k.begin(), k.end(), 0.0f);
  for (float& v : k) v /= ks;
  if (width < 11 || height < 11) {  // too small for the window: one global window
    k.assign(1, 1.0f);
  }
  const std::vector<float> x = luma(a, width, height), y = luma(b, width, height);
  std::vector<float> xx(x.size()), yy(x.size()), xy(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    xx[i] = x[i] * x[i];
    yy[i] = y[i] * y[i];
    xy[i] = x[i] * y[i];
  }
  const auto mx = gaussValid(x, width, height, k), my = gaussValid(y, width, height, k);
  const auto sxx = gaussValid(xx, width, height, k), syy = gaussValid(yy, width, height, k),
             sxy = gaussValid(xy, width, height, k);
  const double c1 = std::pow(0.01 * 255, 2), c2 = std::pow(0.03 * 255, 2);
  double total = 0;
  for (size_t i = 0; i < mx.size(); ++i) {
    const double ux = mx[i], uy = my[i];
    const double vx = sxx[i] - ux * ux, vy = syy[i] - uy * uy, cxy = sxy[i] - ux * uy;
    total += ((2 * ux * uy + c1) * (2 * cxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
  }
  return mx.empty() ? std::nan("") : total / double(mx.size());
}

bool scoreVideos(const QString& video, const QString& reference, FrameScores* out, QString* error,
                 const std::atomic_bool* abort) {
#ifdef WANSTUDIO_HAVE_VIDEO
  try {
    video::VideoReader a(video.toStdString()), b(reference.toStdString());
    const int64_t n = std::min(a.frame_count(), b.frame_count());
    FrameScores s;
    for (int64_t i = 0; i < n; ++i) {
      if (abort && abort->load()) return false;
      const video::RgbFrame fa = a.read(i), fb = b.read(i);
      if (fa.width != fb.width || fa.height != fb.height) {
        if (error)
          *error = QStringLiteral("the videos differ in size (%1×%2 and %3×%4)")
                       .arg(fa.width)
                       .arg(fa.height)
                       .arg(fb.width)
                       .arg(fb.height);
        return false;
      }
      s.psnr << rgbPsnr(fa.data.data(), fb.data.data(), fa.width, fa.height);
      s.ssim << lumaSsim(fa.data.data(), fb.data.data(), fa.width, fa.height);
    }
    *out = s;
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
#else
  Q_UNUSED(video)
  Q_UNUSED(reference)
  Q_UNUSED(out)
  Q_UNUSED(abort)
  if (error) *error = QStringLiteral("this build has no video support");
  return false;
#endif
}

}  // namespace ws
