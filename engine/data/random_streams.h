// SPDX-License-Identifier: Apache-2.0
// Keyed random streams (docs/design/upsampler-training.md §4.6 [D]). Every random draw of a run comes
// from a generator made for its draw site and seeded with a fixed 64-bit mix of a key tuple
// (seed, site, epoch, position, ...). Results therefore depend neither on the number of
// decode threads nor on their timing, and resume needs no saved generator state.
//
//   Rng r = Rng::keyed(seed, "clip", epoch, pos, attempt);
//   int64_t start = r.uniform_int(0, max_start);
//   torch::randn(shape, r.torch_generator());   // tensor draws (data/random_tensor.h)
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace ws::data {

// SplitMix64's output function: a bijective 64-bit mix.
uint64_t mix64(uint64_t x);

// A fixed hash of (seed, tag, parts...): FNV-1a over the tag, then mix64 folding.
uint64_t stream_key(uint64_t seed, std::string_view tag, std::initializer_list<int64_t> parts);

// xoshiro256** seeded by SplitMix64 from one key. Small, fast and the same on every platform.
class Rng {
 public:
  explicit Rng(uint64_t key);
  template <typename... Parts>
  static Rng keyed(uint64_t seed, std::string_view tag, Parts... parts) {
    return Rng(stream_key(seed, tag, {static_cast<int64_t>(parts)...}));
  }
  uint64_t next_u64();
  double uniform();                             // [0, 1), 53 bits
  double uniform(double a, double b);           // [a, b)
  int64_t uniform_int(int64_t lo, int64_t hi);  // inclusive, unbiased
  bool bernoulli(double p);
  double normal();                 // standard normal (Marsaglia polar)
  int64_t poisson(double lambda);  // Knuth below 30, normal approximation above
  // A seed for a torch CPU generator, for tensor-valued draws from the same stream.
  uint64_t derive_seed() { return next_u64() >> 1; }

 private:
  uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace ws::data
