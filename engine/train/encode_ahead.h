// Encoding ahead (`overlap_vae_encode`, docs/design/performance.md §2): while the model trains on
// batch n, a thread of its own takes batch n+1 from the loader and runs both VAE encodes, on a
// CUDA stream of its own on a GPU. The step then waits only for what was not hidden.
#pragma once
#include <torch/torch.h>

#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>

#include <functional>
#include <future>
#include <optional>
#include <utility>

#include "train/step_times.h"

namespace ws::train {

// The calling thread's GPU work on a stream from LibTorch's pool for the scope's life, so it does
// not queue behind another thread's kernels; nothing on the CPU. synchronize() waits for it.
class SideStream {
 public:
  explicit SideStream(const torch::Device& device);
  void synchronize() const;

 private:
  std::optional<c10::Stream> stream_;
  std::optional<c10::StreamGuard> guard_;
};

// One item made on another thread while the caller works; take() waits for it.
template <typename T>
class Ahead {
 public:
  Ahead() = default;
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;
  ~Ahead() { settle(); }

  void start(std::function<T()> make) { pending_ = std::async(std::launch::async, std::move(make)); }
  bool pending() const { return pending_.valid(); }
  // Waits for the item in flight and keeps it: whoever comes next has the resources to itself.
  void settle() {
    if (pending_.valid()) pending_.wait();
  }
  // The item (a failure on the other thread is rethrown here); `*blocked_s`: seconds waited.
  T take(double* blocked_s);

 private:
  std::future<T> pending_;
};

template <typename T>
T Ahead<T>::take(double* blocked_s) {
  const double t0 = steady_seconds();
  T item = pending_.get();
  *blocked_s = steady_seconds() - t0;
  return item;
}

}  // namespace ws::train
