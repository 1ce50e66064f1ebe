// SPDX-License-Identifier: Apache-2.0
// `dataset dedupe`: clips that are copies of each other (re-encoded, rescaled, re-cropped a
// little) found by perceptual hashes of a few frames per clip, so they survive compression and
// scaling while different shots differ in most bits.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "video/video_frame.h"

namespace ws::dataset {

// 64-bit DCT hash of a frame: grey, box-averaged to 32x32, the 8x8 lowest frequencies against
// their median (the DC term left out of the median).
uint64_t frame_hash(const video::RgbFrame& frame);

// Share of equal bits, 0..1.
double hash_similarity(uint64_t a, uint64_t b);

struct ClipHashes {
  std::vector<uint64_t> frames;  // `samples` frames spread evenly over the clip (one for a picture)
};

ClipHashes hash_clip(const std::string& path, int samples = 8);

// How alike two clips look: every sampled frame of each is matched with its closest frame of the
// other, and the matches are averaged both ways (so a copy trimmed a little still matches).
double clip_similarity(const ClipHashes& a, const ClipHashes& b);

struct DuplicatePair {
  size_t a = 0, b = 0;  // a < b
  double similarity = 0.0;
};

// Every pair at or above `threshold`, most similar first.
std::vector<DuplicatePair> find_duplicates(const std::vector<ClipHashes>& clips, double threshold);

}  // namespace ws::dataset
