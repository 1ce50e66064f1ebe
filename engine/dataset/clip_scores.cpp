// SPDX-License-Identifier: Apache-2.0
#include "dataset/clip_scores.h"

#include "core/error.h"

#ifdef WANSTUDIO_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include <algorithm>
#include <cmath>

#include "video/video_decode.h"
#endif

namespace ws::dataset {

#ifdef WANSTUDIO_HAVE_OPENCV

bool clip_scores_built() { return true; }

namespace {

cv::Mat grey(const video::RgbFrame& f) {
  const cv::Mat rgb(f.height, f.width, CV_8UC3, const_cast<uint8_t*>(f.data.data()));
  cv::Mat g;
  cv::cvtColor(rgb, g, cv::COLOR_RGB2GRAY);
  return g;
}

// Sharpness and brightness of one grey frame, added to the running sums.
void add_still_scores(const cv::Mat& g, ClipScores& s) {
  cv::Mat lap;
  cv::Laplacian(g, lap, CV_64F);
  cv::Scalar mean, dev;
  cv::meanStdDev(lap, mean, dev);
  s.sharpness += dev[0] * dev[0];
  s.brightness += cv::mean(g)[0];
  ++s.sampled_frames;
}

}  // namespace

ClipScores score_clip(const std::string& path, double sampling_fps) {
  if (!(sampling_fps > 0) || !std::isfinite(sampling_fps)) throw UsageError("sampling_fps must be a number > 0");
  video::VideoReader reader(path, video::DecodeOptions{0});
  ClipScores s;
  if (reader.info().still_image) {
    add_still_scores(grey(reader.read(0)), s);
  } else {
    // Every interval-th frame, as the reference's loop skips the ones between.
    const double fps = reader.info().fps > 0 ? reader.info().fps : sampling_fps;
    const int64_t interval =
        std::max<int64_t>(1, static_cast<int64_t>(fps / std::min(std::max(sampling_fps, 1.0), fps)));
    cv::Mat prev, flow, mag, ang;
    std::vector<cv::Mat> xy;
    double motion = 0;
    int pairs = 0;
    video::RgbFrame frame;
    for (int64_t i = 0; reader.next(frame); ++i) {
      if (i % interval != 0) continue;
      cv::Mat g = grey(frame);
      add_still_scores(g, s);
      if (!prev.empty()) {
        cv::calcOpticalFlowFarneback(prev, g, flow, 0.5, 3, 15, 3, 5, 1.2, 0);
        cv::split(flow, xy);
        cv::cartToPolar(xy[0], xy[1], mag, ang);
        motion += cv::mean(mag)[0];
        ++pairs;
      }
      prev = g;
    }
    if (s.sampled_frames == 0) throw Error(path + ": no frames decoded");
    s.motion = pairs > 0 ? motion / pairs : 0.0;
  }
  s.sharpness /= s.sampled_frames;
  s.brightness /= s.sampled_frames;
  return s;
}

#else

bool clip_scores_built() { return false; }

ClipScores score_clip(const std::string&, double) {
  throw Error("clip scores need OpenCV's optical flow: install libopencv-video-dev and configure again");
}

#endif

}  // namespace ws::dataset
