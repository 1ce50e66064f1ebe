// SPDX-License-Identifier: Apache-2.0
// Encoding ahead (`overlap_vae_encode`, docs/design/performance.md §2): while the model trains on
// batch n, a thread of its own takes batch n+1 from the loader and runs both VAE encodes, on a
// CUDA stream of its own on a GPU. The step then waits only for what was not hidden.
#pragma once
#include <torch/torch.h>

#include <c10/core/Stream.h>
#include <c10/core/StreamGuard.h>

#include <algorithm>
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

// Runs `encode` with the calling thread's GPU work on a side stream and waits for it to finish;
// returns the seconds it took. Tensors it made on the GPU go through for_default_stream().
template <typename F>
double encode_on_side_stream(const torch::Device& device, F&& encode) {
  const double t0 = steady_seconds();
  {
    SideStream side(device);
    encode();
    side.synchronize();
  }
  return steady_seconds() - t0;
}

// A tensor made on a side stream, copied on the default stream, where the step frees it: the side
// stream's pool must not hand its memory out again too early. CPU tensors pass as they are.
inline torch::Tensor for_default_stream(const torch::Tensor& t) { return t.defined() && t.is_cuda() ? t.clone() : t; }

// Charges the seconds a step waited for an item made ahead: the VAE's as far as the item's encode
// lasted (it runs last), the data's before that.
inline void charge_wait(double blocked_s, double item_vae_s, StepTimes& times) {
  const double vae = std::min(blocked_s, item_vae_s);
  times.vae_s += vae;
  times.data_wait_s += blocked_s - vae;
}

// One item made on another thread while the caller works; take() waits for it.
template <typename T>
class Ahead {
 public:
  Ahead() = default;
  Ahead(const Ahead&) = delete;
  Ahead& operator=(const Ahead&) = delete;
  ~Ahead() { settle(); }

  // LibTorch's thread count is per thread under OpenMP: `make` runs with the caller's.
  void start(std::function<T()> make) {
    pending_ = std::async(std::launch::async, [make = std::move(make), threads = at::get_num_threads()] {
      at::set_num_threads(threads);
      return make();
    });
  }
  bool pending() const { return pending_.valid(); }
  // Waits for the item in flight and keeps it: whoever comes next has the resources to itself.
  void settle() {
    if (pending_.valid()) pending_.wait();
  }
  // The item (a failure on the other thread is rethrown here); `*blocked_s`: seconds waited.
  T take(double* blocked_s);
  // The item to work on now: the one made ahead, else `make_here()`'s. Either way its `data_wait_s`
  // and `vae_s` go into `times` (charge_wait() for the part hidden behind the step).
  template <typename F>
  T next(StepTimes& times, F&& make_here);

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

template <typename T>
template <typename F>
T Ahead<T>::next(StepTimes& times, F&& make_here) {
  if (!pending()) {
    T item = make_here();
    times.data_wait_s += item.data_wait_s;
    times.vae_s += item.vae_s;
    return item;
  }
  double blocked = 0;
  T item = take(&blocked);
  charge_wait(blocked, item.vae_s, times);
  return item;
}

}  // namespace ws::train
