// SPDX-License-Identifier: Apache-2.0
// Procedural video for the demo dataset and the tests: gradients, scrolling noise texture,
// moving circles and rectangles, a camera pan. Plain RGB8 frames (no FFmpeg, no LibTorch);
// the same spec and seed always give the same pixels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::data {

enum class Background { Gradient, Noise };

struct SyntheticSpec {
  int width = 256;
  int height = 144;
  int frames = 33;
  uint64_t seed = 0;
};

// Everything the seed decided, so a caption can describe the clip.
struct SyntheticScene {
  struct Shape {
    bool circle = true;
    double x = 0, y = 0, vx = 0, vy = 0;  // centre and velocity (pixels, pixels per frame)
    double size = 0;                      // radius, or half the side
    double aspect = 1;                    // rectangles: width / height
    uint8_t rgb[3] = {0, 0, 0};
    std::string color;
  };
  Background background = Background::Gradient;
  uint8_t bg_a[3] = {0, 0, 0}, bg_b[3] = {0, 0, 0};
  std::string bg_a_name, bg_b_name;
  double gradient_angle = 0, gradient_spin = 0;  // radians, radians per frame
  double pan_x = 0, pan_y = 0;                   // camera motion, pixels per frame
  double noise_scale = 24;                       // noise cell size in pixels
  std::vector<Shape> shapes;
};

SyntheticScene make_scene(const SyntheticSpec& spec);
video::RgbFrame render_frame(const SyntheticSpec& spec, const SyntheticScene& scene, int index);
std::vector<video::RgbFrame> make_synthetic_clip(const SyntheticSpec& spec);
// One sentence describing the clip, e.g. "A red circle moving right and a blue square ...";
// `still` describes a single frame (no motion words).
std::string describe_scene(const SyntheticScene& scene, bool still = false);

// Test pattern whose frame number survives lossy coding: `bits` vertical bars, bar k white
// when bit k of `index` is set, else black, over a mid-grey top strip.
video::RgbFrame make_index_frame(int width, int height, int index, int bits = 8);
// Reads the number back (bar centres thresholded at mid grey); -1 when unreadable.
int read_index_frame(const video::RgbFrame& frame, int bits = 8);

// SplitMix64: the deterministic generator behind the scenes (also a seed mixer).
uint64_t splitmix64(uint64_t& state);

}  // namespace ws::data
