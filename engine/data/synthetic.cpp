// SPDX-License-Identifier: Apache-2.0
#include "data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace ws::data {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct NamedColor {
  const char* name;
  uint8_t r, g, b;
};
constexpr NamedColor kShapeColors[] = {
    {"red", 220, 40, 40},     {"orange", 240, 140, 30}, {"yellow", 240, 220, 50}, {"green", 50, 180, 70},
    {"teal", 30, 170, 170},   {"blue", 40, 90, 220},    {"purple", 140, 60, 200}, {"pink", 240, 120, 180},
    {"white", 245, 245, 245}, {"black", 20, 20, 20},
};
constexpr NamedColor kBackColors[] = {
    {"navy", 20, 30, 80},         {"sky blue", 120, 180, 230}, {"sand", 210, 190, 140},  {"forest green", 30, 90, 50},
    {"slate grey", 90, 100, 110}, {"maroon", 110, 30, 40},     {"cream", 240, 230, 200}, {"violet", 90, 60, 150},
};

double uniform(uint64_t& s) { return static_cast<double>(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0); }
double uniform(uint64_t& s, double lo, double hi) { return lo + (hi - lo) * uniform(s); }
int pick(uint64_t& s, int n) { return static_cast<int>(splitmix64(s) % static_cast<uint64_t>(n)); }

// Lattice value noise in [0, 1]: hashed corners, smoothstep blend.
double lattice(int64_t x, int64_t y, uint64_t seed) {
  uint64_t s =
      seed ^ (static_cast<uint64_t>(x) * 0x9E3779B97F4A7C15ULL) ^ (static_cast<uint64_t>(y) * 0xC2B2AE3D27D4EB4FULL);
  return static_cast<double>(splitmix64(s) >> 11) * (1.0 / 9007199254740992.0);
}

double value_noise(double x, double y, uint64_t seed) {
  double fx = std::floor(x), fy = std::floor(y);
  auto ix = static_cast<int64_t>(fx), iy = static_cast<int64_t>(fy);
  double tx = x - fx, ty = y - fy;
  tx = tx * tx * (3 - 2 * tx);
  ty = ty * ty * (3 - 2 * ty);
  double a = lattice(ix, iy, seed), b = lattice(ix + 1, iy, seed);
  double c = lattice(ix, iy + 1, seed), d = lattice(ix + 1, iy + 1, seed);
  return (a + (b - a) * tx) * (1 - ty) + (c + (d - c) * tx) * ty;
}

// Position bouncing between lo and hi (a triangle wave), so shapes stay in view.
double bounce(double p, double lo, double hi) {
  double span = hi - lo;
  if (span <= 0) return (lo + hi) / 2;
  double u = std::fmod(p - lo, 2 * span);
  if (u < 0) u += 2 * span;
  return lo + (u <= span ? u : 2 * span - u);
}

std::string direction(double vx, double vy) {
  double speed = std::hypot(vx, vy);
  if (speed < 0.05) return "";
  double deg = std::atan2(-vy, vx) * 180 / kPi;  // screen y grows downwards
  const char* names[] = {"right", "up and to the right",  "up",   "up and to the left",
                         "left",  "down and to the left", "down", "down and to the right"};
  int k = static_cast<int>(std::lround(deg / 45.0));
  return names[((k % 8) + 8) % 8];
}

void copy_rgb(uint8_t* dst, const NamedColor& c) {
  dst[0] = c.r;
  dst[1] = c.g;
  dst[2] = c.b;
}

}  // namespace

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

SyntheticScene make_scene(const SyntheticSpec& spec) {
  if (spec.width <= 0 || spec.height <= 0 || spec.frames <= 0 || spec.width > video::kMaxVideoSide ||
      spec.height > video::kMaxVideoSide)
    throw Error("synthetic clip: bad size " + std::to_string(spec.width) + "x" + std::to_string(spec.height) + "x" +
                std::to_string(spec.frames));
  uint64_t s = spec.seed * 0x2545F4914F6CDD1DULL + 0x1234567;
  SyntheticScene sc;
  sc.background = pick(s, 2) ? Background::Noise : Background::Gradient;
  int a = pick(s, 8), b = (a + 1 + pick(s, 7)) % 8;
  copy_rgb(sc.bg_a, kBackColors[a]);
  copy_rgb(sc.bg_b, kBackColors[b]);
  sc.bg_a_name = kBackColors[a].name;
  sc.bg_b_name = kBackColors[b].name;
  sc.gradient_angle = uniform(s, 0, 2 * kPi);
  sc.gradient_spin = uniform(s, -0.03, 0.03);
  const double side = std::min(spec.width, spec.height);
  if (pick(s, 3) != 0) {  // two in three clips pan the camera
    double ang = uniform(s, 0, 2 * kPi), speed = uniform(s, 0.5, 2.0) * side / 144.0;
    sc.pan_x = std::cos(ang) * speed;
    sc.pan_y = std::sin(ang) * speed;
  }
  sc.noise_scale = side / uniform(s, 4, 8);
  int n_shapes = 1 + pick(s, 3);
  for (int i = 0; i < n_shapes; ++i) {
    SyntheticScene::Shape sh;
    sh.circle = pick(s, 2) == 0;
    sh.size = side * uniform(s, 0.08, 0.2);
    sh.aspect = sh.circle ? 1.0 : (pick(s, 2) ? 1.0 : uniform(s, 0.5, 2.0));
    sh.x = uniform(s, 0, spec.width);
    sh.y = uniform(s, 0, spec.height);
    double ang = uniform(s, 0, 2 * kPi), speed = uniform(s, 1.0, 3.5) * side / 144.0;
    sh.vx = std::cos(ang) * speed;
    sh.vy = std::sin(ang) * speed;
    const NamedColor& c = kShapeColors[pick(s, 10)];
    copy_rgb(sh.rgb, c);
    sh.color = c.name;
    sc.shapes.push_back(sh);
  }
  return sc;
}

video::RgbFrame render_frame(const SyntheticSpec& spec, const SyntheticScene& sc, int t) {
  video::RgbFrame f(spec.width, spec.height);
  const double diag = std::hypot(spec.width, spec.height);
  const double ang = sc.gradient_angle + sc.gradient_spin * t;
  const double dx = std::cos(ang), dy = std::sin(ang);
  const uint64_t noise_seed = spec.seed * 31 + 7;
  for (int y = 0; y < spec.height; ++y) {
    for (int x = 0; x < spec.width; ++x) {
      // The camera pans over a world-fixed background.
      double wx = x + sc.pan_x * t, wy = y + sc.pan_y * t;
      double m;
      if (sc.background == Background::Gradient) {
        m = 0.5 + 0.5 * std::sin(2 * kPi * (wx * dx + wy * dy) / diag);
      } else {
        m = 0.65 * value_noise(wx / sc.noise_scale, wy / sc.noise_scale, noise_seed) +
            0.35 * value_noise(wx * 2.7 / sc.noise_scale, wy * 2.7 / sc.noise_scale, noise_seed + 1);
      }
      uint8_t* p = f.pixel(x, y);
      for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>(std::lround(sc.bg_a[c] + (sc.bg_b[c] - sc.bg_a[c]) * m));
    }
  }
  for (const auto& sh : sc.shapes) {
    double hw = sh.circle ? sh.size : sh.size * std::sqrt(sh.aspect),
           hh = sh.circle ? sh.size : sh.size / std::sqrt(sh.aspect);
    double cx = bounce(sh.x + sh.vx * t, hw, spec.width - hw), cy = bounce(sh.y + sh.vy * t, hh, spec.height - hh);
    int x0 = std::max(0, static_cast<int>(cx - hw - 1)), x1 = std::min(spec.width - 1, static_cast<int>(cx + hw + 1));
    int y0 = std::max(0, static_cast<int>(cy - hh - 1)), y1 = std::min(spec.height - 1, static_cast<int>(cy + hh + 1));
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        double px = x + 0.5 - cx, py = y + 0.5 - cy;
        // Signed distance inside the edge, clamped to one pixel of anti-aliasing.
        double inside = sh.circle ? sh.size - std::hypot(px, py) : std::min(hw - std::fabs(px), hh - std::fabs(py));
        double cov = std::clamp(inside + 0.5, 0.0, 1.0);
        if (cov <= 0) continue;
        uint8_t* p = f.pixel(x, y);
        for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>(std::lround(p[c] + (sh.rgb[c] - p[c]) * cov));
      }
    }
  }
  return f;
}

std::vector<video::RgbFrame> make_synthetic_clip(const SyntheticSpec& spec) {
  SyntheticScene sc = make_scene(spec);
  std::vector<video::RgbFrame> frames;
  frames.reserve(static_cast<size_t>(spec.frames));
  for (int t = 0; t < spec.frames; ++t) frames.push_back(render_frame(spec, sc, t));
  return frames;
}

std::string describe_scene(const SyntheticScene& sc, bool still) {
  std::string s;
  for (size_t i = 0; i < sc.shapes.size(); ++i) {
    const auto& sh = sc.shapes[i];
    if (i > 0) s += i + 1 == sc.shapes.size() ? " and " : ", ";
    std::string kind = sh.circle ? "circle" : (std::fabs(sh.aspect - 1) < 1e-9 ? "square" : "rectangle");
    s += std::string(i == 0 ? "A " : "a ") + sh.color + " " + kind;
    std::string dir = direction(sh.vx, sh.vy);
    if (!still && !dir.empty()) s += " moving " + dir;
  }
  if (still) s += " over ";
  else s += sc.shapes.size() > 1 ? " bounce around over " : " bounces around over ";
  if (sc.background == Background::Gradient) s += "a soft " + sc.bg_a_name + " to " + sc.bg_b_name + " gradient";
  else s += "a cloudy " + sc.bg_a_name + " and " + sc.bg_b_name + " noise texture";
  std::string cam = direction(sc.pan_x, sc.pan_y);
  if (still) s += ".";
  else s += cam.empty() ? ", static camera." : ", the camera panning " + cam + ".";
  return s;
}

video::RgbFrame make_index_frame(int width, int height, int index, int bits) {
  video::RgbFrame f(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      int bar = x * bits / width;
      uint8_t v = ((index >> bar) & 1) ? 235 : 20;
      uint8_t* p = f.pixel(x, y);
      p[0] = p[1] = p[2] = v;
    }
  }
  return f;
}

int read_index_frame(const video::RgbFrame& frame, int bits) {
  if (frame.empty() || frame.width < bits * 2) return -1;
  int value = 0;
  for (int k = 0; k < bits; ++k) {
    // Average the middle half of bar k, away from edges where the codec smears.
    int xa = k * frame.width / bits, xb = (k + 1) * frame.width / bits;
    int q = (xb - xa) / 4;
    double sum = 0;
    int n = 0;
    for (int y = frame.height / 4; y < frame.height * 3 / 4; ++y)
      for (int x = xa + q; x < xb - q; ++x, ++n) sum += frame.pixel(x, y)[1];
    if (n == 0) return -1;
    double mean = sum / n;
    if (mean > 170) value |= 1 << k;
    else if (mean > 85) return -1;  // neither black nor white: not a clean frame
  }
  return value;
}

}  // namespace ws::data
