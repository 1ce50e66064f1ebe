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

// Every pair at or above `threshold`, most similar first. Up to `exhaustive_limit` clips every pair
// is compared (n²/2). Above it, only pairs that share one of the four 16-bit bands of some frame
// hash are (any two frames within 3 bits of each other share one; a copy has several such
// frames); a band value common to more than kBandBucketLimit clips (black or flat frames) says
// nothing and is skipped. A pair whose frames all differ in 4 bits or more can then be missed.
constexpr size_t kExhaustiveClips = 5000;
constexpr size_t kBandBucketLimit = 2000;
std::vector<DuplicatePair> find_duplicates(const std::vector<ClipHashes>& clips, double threshold,
                                           size_t exhaustive_limit = kExhaustiveClips);

}  // namespace ws::dataset
