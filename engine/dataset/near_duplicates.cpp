// SPDX-License-Identifier: Apache-2.0
#include "dataset/near_duplicates.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "core/error.h"
#include "video/video_decode.h"

namespace ws::dataset {

namespace {

constexpr int kGrid = 32;  // the hash's working size
constexpr int kLow = 8;    // frequencies kept per axis

// Grey box average of the frame over a kGrid x kGrid lattice (each cell the mean of the pixels
// whose centres fall in it), so the hash does not depend on the source resolution.
std::array<double, kGrid * kGrid> grey_grid(const video::RgbFrame& f) {
  std::array<double, kGrid * kGrid> sum{}, count{};
  for (int y = 0; y < f.height; ++y) {
    const int gy = std::min(kGrid - 1, static_cast<int>((y + 0.5) * kGrid / f.height));
    for (int x = 0; x < f.width; ++x) {
      const int gx = std::min(kGrid - 1, static_cast<int>((x + 0.5) * kGrid / f.width));
      const uint8_t* p = f.pixel(x, y);
      sum[gy * kGrid + gx] += 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
      count[gy * kGrid + gx] += 1.0;
    }
  }
  for (size_t i = 0; i < sum.size(); ++i) sum[i] = count[i] > 0 ? sum[i] / count[i] : 0.0;
  return sum;
}

}  // namespace

uint64_t frame_hash(const video::RgbFrame& frame) {
  if (frame.empty()) throw Error("frame_hash: an empty frame");
  const auto g = grey_grid(frame);
  // The low corner of a 2-D DCT-II.
  static const auto basis = [] {
    std::array<double, kLow * kGrid> b{};
    for (int u = 0; u < kLow; ++u)
      for (int x = 0; x < kGrid; ++x) b[u * kGrid + x] = std::cos(M_PI * (2 * x + 1) * u / (2.0 * kGrid));
    return b;
  }();
  std::array<double, kLow * kGrid> rows{};  // [u][y]: the DCT along x of each row
  for (int u = 0; u < kLow; ++u)
    for (int y = 0; y < kGrid; ++y) {
      double s = 0;
      for (int x = 0; x < kGrid; ++x) s += g[y * kGrid + x] * basis[u * kGrid + x];
      rows[u * kGrid + y] = s;
    }
  std::array<double, kLow * kLow> c{};
  for (int v = 0; v < kLow; ++v)
    for (int u = 0; u < kLow; ++u) {
      double s = 0;
      for (int y = 0; y < kGrid; ++y) s += rows[u * kGrid + y] * basis[v * kGrid + y];
      c[v * kLow + u] = s;
    }
  std::array<double, kLow * kLow - 1> ac{};
  std::copy(c.begin() + 1, c.end(), ac.begin());
  std::nth_element(ac.begin(), ac.begin() + ac.size() / 2, ac.end());
  const double median = ac[ac.size() / 2];
  uint64_t h = 0;
  for (int i = 0; i < kLow * kLow; ++i)
    if (c[i] > median) h |= uint64_t{1} << i;
  return h;
}

double hash_similarity(uint64_t a, uint64_t b) { return 1.0 - __builtin_popcountll(a ^ b) / 64.0; }

ClipHashes hash_clip(const std::string& path, int samples) {
  if (samples < 1) throw UsageError("samples must be >= 1");
  video::VideoReader reader(path, video::DecodeOptions{0});
  const int64_t n = reader.info().still_image ? 1 : reader.frame_count();
  if (n < 1) throw Error(path + ": no frames");
  std::vector<int64_t> idx;
  for (int k = 0; k < samples; ++k) {
    const auto i = static_cast<int64_t>((k + 0.5) * static_cast<double>(n) / samples);
    if (idx.empty() || idx.back() != i) idx.push_back(std::min(i, n - 1));
  }
  ClipHashes out;
  for (const auto& f : reader.read(idx)) out.frames.push_back(frame_hash(f));
  return out;
}

double clip_similarity(const ClipHashes& a, const ClipHashes& b) {
  if (a.frames.empty() || b.frames.empty()) return 0.0;
  auto one_way = [](const ClipHashes& x, const ClipHashes& y) {
    double total = 0;
    for (uint64_t hx : x.frames) {
      double best = 0;
      for (uint64_t hy : y.frames) best = std::max(best, hash_similarity(hx, hy));
      total += best;
    }
    return total / static_cast<double>(x.frames.size());
  };
  return 0.5 * (one_way(a, b) + one_way(b, a));
}

namespace {

// Clip pairs (i < j, as i·n + j) that share a 16-bit band of a frame hash.
std::vector<uint64_t> band_candidates(const std::vector<ClipHashes>& clips) {
  const auto n = static_cast<uint64_t>(clips.size());
  std::vector<uint64_t> pairs;
  for (int band = 0; band < 4; ++band) {
    std::unordered_map<uint16_t, std::vector<uint32_t>> buckets;
    for (size_t c = 0; c < clips.size(); ++c)
      for (uint64_t h : clips[c].frames) {
        auto& b = buckets[static_cast<uint16_t>(h >> (16 * band))];
        if (b.empty() || b.back() != c) b.push_back(static_cast<uint32_t>(c));
      }
    for (auto& [value, members] : buckets) {
      if (members.size() < 2 || members.size() > kBandBucketLimit) continue;
      std::sort(members.begin(), members.end());
      members.erase(std::unique(members.begin(), members.end()), members.end());
      for (size_t i = 0; i < members.size(); ++i)
        for (size_t j = i + 1; j < members.size(); ++j) pairs.push_back(members[i] * n + members[j]);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

}  // namespace

std::vector<DuplicatePair> find_duplicates(const std::vector<ClipHashes>& clips, double threshold,
                                           size_t exhaustive_limit) {
  std::vector<DuplicatePair> out;
  if (clips.size() <= exhaustive_limit) {
    for (size_t i = 0; i < clips.size(); ++i)
      for (size_t j = i + 1; j < clips.size(); ++j) {
        const double s = clip_similarity(clips[i], clips[j]);
        if (s >= threshold) out.push_back({i, j, s});
      }
  } else {
    const auto n = static_cast<uint64_t>(clips.size());
    for (uint64_t p : band_candidates(clips)) {
      const size_t i = static_cast<size_t>(p / n), j = static_cast<size_t>(p % n);
      const double s = clip_similarity(clips[i], clips[j]);
      if (s >= threshold) out.push_back({i, j, s});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const DuplicatePair& x, const DuplicatePair& y) { return x.similarity > y.similarity; });
  return out;
}

}  // namespace ws::dataset
