// SPDX-License-Identifier: Apache-2.0
#include "models/block_swap.h"

#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <utility>

#include "core/error.h"

#if WANSTUDIO_HAVE_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ws::models {

// One parameter of a resident block: its host tensors, while the device copies are in use.
struct BlockSwap::Slot {
  torch::Tensor param;      // the module's parameter (same autograd identity throughout)
  torch::Tensor home;       // its data in host memory
  torch::Tensor home_grad;  // its gradient in host memory, when it had one
};

struct BlockSwap::Resident {
  std::vector<Slot> params;
  std::vector<std::pair<torch::Tensor*, torch::Tensor>> extra;  // slot, host tensor
  bool backward = false;  // gradients live on the device (entered by the backward)
#if WANSTUDIO_HAVE_CUDA
  at::cuda::CUDAEvent copied;
#endif
};

struct BlockSwap::Device {
#if WANSTUDIO_HAVE_CUDA
  explicit Device(const torch::Device& d) : stream(c10::cuda::getStreamFromPool(false, d.index())) {}
  c10::cuda::CUDAStream stream;
  std::vector<std::pair<at::cuda::CUDAEvent, at::cuda::CUDAEvent>> waits;  // recorded around each wait
#endif
};

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

torch::Tensor pinned_host(const torch::Tensor& t) {
  if (t.is_cpu() && t.is_pinned()) return t;
  auto h = torch::empty(t.sizes(), t.options().device(torch::kCPU).pinned_memory(true));
  h.copy_(t);
  return h;
}

}  // namespace

BlockSwap::BlockSwap(std::vector<Block> blocks, int64_t n) : blocks_(std::move(blocks)), n_(n) {
  if (n < 0 || n > static_cast<int64_t>(blocks_.size()))
    throw Error("blocks_to_swap must be between 0 and the model's " + std::to_string(blocks_.size()) + " blocks, got " +
                std::to_string(n));
  resident_.resize(blocks_.size());
}

BlockSwap::~BlockSwap() = default;

void BlockSwap::home(const torch::Device& device) {
  release_all();
  torch::NoGradGuard ng;
  if (!device.is_cuda()) {
    // A CPU model: host and device are the same memory; the blocks still go through the copies.
    for (int64_t i = first(); i < static_cast<int64_t>(blocks_.size()); ++i) {
      for (auto p : blocks_[i].module->parameters())
        if (!p.is_cpu()) p.set_data(p.data().to(torch::kCPU));
      for (torch::Tensor* t : blocks_[i].extra)
        if (t->defined() && !t->is_cpu()) *t = t->to(torch::kCPU);
    }
    return;
  }
#if WANSTUDIO_HAVE_CUDA
  if (!gpu_) gpu_ = std::make_unique<Device>(device);
#endif
  for (int64_t i = first(); i < static_cast<int64_t>(blocks_.size()); ++i) {
    for (auto p : blocks_[i].module->parameters()) {
      p.set_data(pinned_host(p.data()));
      if (p.grad().defined()) p.mutable_grad() = pinned_host(p.grad());
    }
    for (torch::Tensor* t : blocks_[i].extra)
      if (t->defined()) *t = pinned_host(*t);
  }
}

void BlockSwap::fetch(int64_t i, const torch::Device& device) {
  torch::NoGradGuard ng;
  auto r = std::make_unique<Resident>();
  const double t0 = now_s();
  // The device copy of a host tensor: on a GPU allocated on the compute stream (its users) and
  // filled on the side stream after the compute queued so far, so a reused block is not
  // overwritten while an earlier kernel still reads it.
  std::function<torch::Tensor(const torch::Tensor&)> copy;
#if WANSTUDIO_HAVE_CUDA
  if (device.is_cuda()) {
    if (!gpu_) gpu_ = std::make_unique<Device>(device);
    at::cuda::CUDAEvent queued;
    queued.record(c10::cuda::getCurrentCUDAStream(device.index()));
    queued.block(gpu_->stream);
    copy = [&device, this](const torch::Tensor& h) {
      auto d = torch::empty(h.sizes(), h.options().device(device));
      c10::cuda::CUDAStreamGuard side(gpu_->stream);
      d.copy_(h, /*non_blocking=*/true);
      return d;
    };
  }
#endif
  if (!copy) copy = [&device](const torch::Tensor& h) { return h.to(device, /*non_blocking=*/false, /*copy=*/true); };
  for (auto p : blocks_[i].module->parameters()) {
    Slot s{p, p.data(), p.grad()};
    p.set_data(copy(s.home));
    stats_.bytes += s.home.nbytes();
    r->params.push_back(std::move(s));
  }
  for (torch::Tensor* t : blocks_[i].extra) {
    if (!t->defined()) continue;
    r->extra.emplace_back(t, *t);
    *t = copy(*t);
    stats_.bytes += r->extra.back().second.nbytes();
  }
#if WANSTUDIO_HAVE_CUDA
  if (device.is_cuda()) r->copied.record(gpu_->stream);
#endif
  if (!device.is_cuda()) stats_.wait_s += now_s() - t0;  // a CPU copy is all wait
  ++stats_.copies;
  resident_[i] = std::move(r);
}

void BlockSwap::release(int64_t i) {
  auto& r = resident_[i];
  if (!r) return;
  torch::NoGradGuard ng;
  for (auto& s : r->params) {
    torch::Tensor g = s.param.grad();
    if (r->backward && g.defined()) {
      // The backward added to the gradient on the device: bring it home.
      if (s.home_grad.defined()) {
        s.home_grad.copy_(g);
      } else {
        s.home_grad = s.home.is_pinned() ? pinned_host(g) : g.to(torch::kCPU, /*non_blocking=*/false, /*copy=*/true);
      }
      ++stats_.returns;
      s.param.mutable_grad() = s.home_grad;
    } else if (g.defined()) {
      s.param.mutable_grad() = s.home_grad;  // the forward does not touch gradients
    }
    s.param.set_data(s.home);
  }
  for (auto& [slot, host] : r->extra) *slot = host;
  r.reset();
}

void BlockSwap::release_all() {
  for (int64_t i = 0; i < static_cast<int64_t>(resident_.size()); ++i) release(i);
}

void BlockSwap::enter(int64_t i, int direction, const torch::Device& device) {
  if (n_ == 0) return;
  const int64_t next = i + direction;
  for (int64_t j = first(); j < static_cast<int64_t>(blocks_.size()); ++j)
    if (j != i && j != next) release(j);
  if (swapped(i)) {
    if (!resident_[i]) fetch(i, device);
    Resident& r = *resident_[i];
#if WANSTUDIO_HAVE_CUDA
    if (device.is_cuda()) {
      auto main = c10::cuda::getCurrentCUDAStream(device.index());
      gpu_->waits.emplace_back(at::cuda::CUDAEvent(cudaEventDefault), at::cuda::CUDAEvent(cudaEventDefault));
      gpu_->waits.back().first.record(main);
      r.copied.block(main);
      gpu_->waits.back().second.record(main);
    }
#endif
    if (direction < 0) gradients_to(r, device);
  }
  if (swapped(next) && !resident_[next]) {
    fetch(next, device);
    if (direction < 0) gradients_to(*resident_[next], device);
  }
}

void BlockSwap::gradients_to(Resident& r, const torch::Device& device) {
  if (r.backward) return;
  // Gradients from earlier micro-batches join the block for the backward's accumulation.
  torch::NoGradGuard ng;
  for (auto& s : r.params)
    if (s.home_grad.defined()) s.param.mutable_grad() = s.home_grad.to(device, /*non_blocking=*/false, /*copy=*/true);
  r.backward = true;
}

const BlockSwapStats& BlockSwap::stats() {
#if WANSTUDIO_HAVE_CUDA
  if (gpu_) {
    for (auto& [a, b] : gpu_->waits) {
      b.synchronize();
      stats_.wait_s += static_cast<double>(a.elapsed_time(b)) / 1000.0;
    }
    gpu_->waits.clear();
  }
#endif
  return stats_;
}

}  // namespace ws::models
