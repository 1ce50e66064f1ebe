// SPDX-License-Identifier: Apache-2.0
// At most N requests in flight at once across the threads that share one limit: a local server
// batches a few requests well, while many more only queue there and run into the timeout.
#pragma once
#include <condition_variable>
#include <mutex>

#include "core/error.h"

namespace ws::caption {

class ConcurrencyLimit {
 public:
  explicit ConcurrencyLimit(int max_in_flight) : max_(max_in_flight) {
    if (max_in_flight < 1) throw Error("the request concurrency limit must be at least 1");
  }
  int max_in_flight() const { return max_; }

  // Holds one slot while it lives.
  class Slot {
   public:
    explicit Slot(ConcurrencyLimit* limit) : limit_(limit) {
      if (limit_) limit_->acquire();
    }
    ~Slot() {
      if (limit_) limit_->release();
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    ConcurrencyLimit* limit_;
  };

 private:
  void acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    free_.wait(lock, [&] { return in_flight_ < max_; });
    ++in_flight_;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --in_flight_;
    }
    free_.notify_one();
  }

  const int max_;
  int in_flight_ = 0;
  std::mutex mutex_;
  std::condition_variable free_;
};

}  // namespace ws::caption
