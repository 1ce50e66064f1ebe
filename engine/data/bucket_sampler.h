// SPDX-License-Identifier: Apache-2.0
// The epoch permutation and the aspect-ratio batch sampler (docs/design/upsampler-training.md §3.2), with
// Wan Studio's exact loader cursor: resume rebuilds the epoch's permutation, restores the
// waiting partial buckets and continues at `pos`, with nothing subtracted or lost.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ws::data {

// One dataset row as the sampler handed it out: which row, and where in which epoch's
// permutation it came from (the clip stream's key, docs/design/upsampler-training.md §4.6).
struct SampleRef {
  int64_t row = 0;
  int64_t epoch = 0;
  int64_t pos = 0;
  bool operator==(const SampleRef& o) const { return row == o.row && epoch == o.epoch && pos == o.pos; }
};

// What exact resume restores: the state right after some batch was formed.
struct LoaderCursor {
  int64_t epoch = 0;           // current epoch e (its permutation is randperm(n) seeded seed + e)
  int64_t pos = 0;             // indices of epoch e's permutation taken so far
  int64_t batch_in_epoch = 0;  // global batches yielded so far in epoch e
  // Partial buckets, in first-seen order: key -> waiting samples (carried across epochs).
  std::vector<std::pair<std::string, std::vector<SampleRef>>> buckets;

  nlohmann::json to_json() const;
  // Throws ws::Error naming `source` when a field is missing or has the wrong type.
  static LoaderCursor from_json(const nlohmann::json& j, const std::string& source);
  bool operator==(const LoaderCursor& o) const;
};

// One batch as planned by the sampler; the loader decodes it.
struct BatchPlan {
  int64_t seq = 0;             // 0, 1, 2, ... batches of this rank since the loader started
  int64_t epoch = 0;           // the epoch the batch was yielded in
  int64_t batch_in_epoch = 0;  // global index of the batch in that epoch
  std::vector<SampleRef> items;
  // The cursor right after this batch was formed; with P > 1 ranks, after the whole round of P
  // batches it belongs to (up to the epoch's end), so every rank saves the same cursor and a
  // resume skips what the other ranks trained in that step.
  LoaderCursor cursor;
};

// randperm(n) with torch's CPU generator seeded `seed` (the reference's epoch order).
std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed);

class BucketSampler {
 public:
  // `keys[i]` is row i's bucket key ("video:0.57", "image:1.0", or one key for all when
  // buckets are off). Rank r of P takes the global batches b with b mod P == r.
  BucketSampler(std::vector<std::string> keys, int64_t batch_size, uint64_t seed, int rank = 0, int world = 1);
  // Continue from a saved cursor (its epoch's permutation is rebuilt).
  void restore(const LoaderCursor& cursor);
  BatchPlan next();
  const LoaderCursor& cursor() const { return cursor_; }
  int64_t rows() const { return static_cast<int64_t>(keys_.size()); }
  // floor(n / batch): the reference's estimate of batches per epoch (all ranks).
  int64_t batches_per_epoch_estimate() const;

 private:
  void start_epoch(int64_t epoch);
  // Forms the next batch from `c` (advancing it): false when the permutation is used up.
  bool form(LoaderCursor& c, std::vector<SampleRef>* items, int64_t* b) const;
  std::vector<std::string> keys_;
  int64_t batch_ = 1;
  uint64_t seed_ = 0;
  int rank_ = 0, world_ = 1;
  LoaderCursor cursor_;
  std::vector<int64_t> perm_;
  int64_t seq_ = 0;
};

}  // namespace ws::data
