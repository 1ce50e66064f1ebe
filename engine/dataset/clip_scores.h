// SPDX-License-Identifier: Apache-2.0
// `dataset score`: numbers to sort and filter clips by. Motion is VideoX-Fun's (and data-juicer's)
// motion filter: the mean Farneback optical-flow magnitude between frames sampled at about 2 fps
// (OpenCV's calcOpticalFlowFarneback with pyr_scale 0.5, 3 levels, window 15, 3 iterations,
// poly_n 5, sigma 1.2), averaged over the pairs. Sharpness is the variance of the Laplacian of the
// grey frame; brightness its mean (0..255); both averaged over the sampled frames.
#pragma once
#include <string>

namespace ws::dataset {

struct ClipScores {
  double motion = 0.0;  // pixels per sampled step; 0 for a picture
  double sharpness = 0.0;
  double brightness = 0.0;
  int sampled_frames = 0;
};

// Whether this build has OpenCV's optical flow (Debian's libopencv-video-dev).
bool clip_scores_built();

// Decodes the clip once. Throws ws::Error naming the file.
ClipScores score_clip(const std::string& path, double sampling_fps = 2.0);

}  // namespace ws::dataset
