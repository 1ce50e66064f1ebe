// SPDX-License-Identifier: Apache-2.0
#include "data/bucket_sampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "core/error.h"

namespace ws::data {

using json = nlohmann::json;

json LoaderCursor::to_json() const {
  json b = json::array();
  for (const auto& [key, items] : buckets) {
    json list = json::array();
    for (const auto& s : items) list.push_back({s.row, s.epoch, s.pos});
    b.push_back({{"key", key}, {"items", list}});
  }
  return {{"epoch", epoch}, {"pos", pos}, {"batch_in_epoch", batch_in_epoch}, {"buckets", b}};
}

LoaderCursor LoaderCursor::from_json(const json& j, const std::string& source) {
  LoaderCursor c;
  try {
    c.epoch = j.at("epoch").get<int64_t>();
    c.pos = j.at("pos").get<int64_t>();
    c.batch_in_epoch = j.at("batch_in_epoch").get<int64_t>();
    for (const auto& b : j.at("buckets")) {
      std::vector<SampleRef> items;
      for (const auto& s : b.at("items"))
        items.push_back({s.at(0).get<int64_t>(), s.at(1).get<int64_t>(), s.at(2).get<int64_t>()});
      c.buckets.emplace_back(b.at("key").get<std::string>(), std::move(items));
    }
  } catch (const json::exception& e) {
    throw Error(source + ": bad loader cursor (" + std::string(e.what()) + ")");
  }
  if (c.epoch < 0 || c.pos < 0 || c.batch_in_epoch < 0) throw Error(source + ": bad loader cursor (negative field)");
  return c;
}

bool LoaderCursor::operator==(const LoaderCursor& o) const {
  return epoch == o.epoch && pos == o.pos && batch_in_epoch == o.batch_in_epoch && buckets == o.buckets;
}

std::vector<int64_t> epoch_permutation(int64_t n, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  torch::Tensor p = torch::randperm(n, gen, torch::kLong);
  return std::vector<int64_t>(p.data_ptr<int64_t>(), p.data_ptr<int64_t>() + n);
}

BucketSampler::BucketSampler(std::vector<std::string> keys, int64_t batch_size, uint64_t seed, int rank, int world)
    : keys_(std::move(keys)), batch_(batch_size), seed_(seed), rank_(rank), world_(world) {
  if (keys_.empty()) throw Error("the dataset has no usable rows");
  if (batch_ < 1) throw Error("train_batch_size must be at least 1");
  if (world_ < 1 || rank_ < 0 || rank_ >= world_)
    throw Error("bad rank " + std::to_string(rank_) + " of " + std::to_string(world_));
  start_epoch(0);
}

void BucketSampler::start_epoch(int64_t epoch) {
  cursor_.epoch = epoch;
  cursor_.pos = 0;
  cursor_.batch_in_epoch = 0;
  perm_ = epoch_permutation(rows(), seed_ + static_cast<uint64_t>(epoch));
}

void BucketSampler::restore(const LoaderCursor& c) {
  for (const auto& [key, items] : c.buckets)
    for (const auto& s : items)
      if (s.row < 0 || s.row >= rows())
        throw Error("loader cursor names row " + std::to_string(s.row) + " of a dataset with " +
                    std::to_string(rows()) + " rows (the dataset changed since the checkpoint)");
  if (c.pos > rows())
    throw Error("loader cursor position " + std::to_string(c.pos) + " is past the dataset's " + std::to_string(rows()) +
                " rows (the dataset changed since the checkpoint)");
  perm_ = epoch_permutation(rows(), seed_ + static_cast<uint64_t>(c.epoch));
  cursor_ = c;
}

int64_t BucketSampler::batches_per_epoch_estimate() const { return rows() / batch_; }

bool BucketSampler::form(LoaderCursor& c, std::vector<SampleRef>* items, int64_t* b) const {
  while (c.pos < rows()) {
    const int64_t pos = c.pos++;
    const int64_t row = perm_[static_cast<size_t>(pos)];
    const std::string& key = keys_[static_cast<size_t>(row)];
    auto it = c.buckets.begin();
    while (it != c.buckets.end() && it->first != key) ++it;
    if (it == c.buckets.end()) {
      c.buckets.emplace_back(key, std::vector<SampleRef>{});
      it = std::prev(c.buckets.end());
    }
    it->second.push_back({row, c.epoch, pos});
    if (static_cast<int64_t>(it->second.size()) < batch_) continue;
    *items = std::move(it->second);
    c.buckets.erase(it);  // an emptied bucket leaves the list, so the cursor stays small
    *b = c.batch_in_epoch++;
    return true;
  }
  return false;
}

BatchPlan BucketSampler::next() {
  for (;;) {
    std::vector<SampleRef> items;
    int64_t b = 0;
    if (!form(cursor_, &items, &b)) {
      start_epoch(cursor_.epoch + 1);
      continue;
    }
    if (b % world_ != rank_) continue;  // another rank's batch
    BatchPlan plan;
    plan.seq = seq_++;
    plan.epoch = cursor_.epoch;
    plan.batch_in_epoch = b;
    plan.items = std::move(items);
    plan.cursor = cursor_;
    // The rest of this round belongs to the other ranks: the saved cursor skips it.
    std::vector<SampleRef> skipped;
    int64_t sb = 0;
    while (plan.cursor.batch_in_epoch % world_ != 0 && form(plan.cursor, &skipped, &sb)) {
    }
    return plan;
  }
}

}  // namespace ws::data
