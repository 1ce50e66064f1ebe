// SPDX-License-Identifier: Apache-2.0
#include "parallel/data_parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "core/error.h"

#include <torch/version.h>

#if defined(WANSTUDIO_HAVE_GLOO) || defined(WANSTUDIO_HAVE_NCCL)
#define WANSTUDIO_HAVE_C10D 1
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#ifdef WANSTUDIO_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef WANSTUDIO_HAVE_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ws::parallel {

namespace {

// Flat buffers of at most this many elements per all-reduce call.
constexpr int64_t kBucketElements = 64 << 20;

}  // namespace

std::vector<std::string> DataParallel::backends() {
  std::vector<std::string> b;
#ifdef WANSTUDIO_HAVE_NCCL
  b.push_back("nccl");
#endif
#ifdef WANSTUDIO_HAVE_GLOO
  b.push_back("gloo");
#endif
  return b;
}

std::string DataParallel::choose_backend(const torch::Device& device, const std::string& wanted) {
  const auto built = backends();
  const auto has = [&](const std::string& n) { return std::find(built.begin(), built.end(), n) != built.end(); };
  std::string list;
  for (const auto& n : built) list += (list.empty() ? "" : ", ") + n;
  if (list.empty()) list = "none";
  if (!wanted.empty()) {
    if (wanted != "nccl" && wanted != "gloo")
      throw Error("WANSTUDIO_DP_BACKEND='" + wanted + "': expected nccl or gloo");
    if (!has(wanted)) throw Error("WANSTUDIO_DP_BACKEND=" + wanted + ": this build has " + list);
    if (wanted == "nccl" && !device.is_cuda())
      throw Error("WANSTUDIO_DP_BACKEND=nccl needs a GPU; this run trains on the CPU");
    return wanted;
  }
  // NCCL keeps the gradients on the GPU; Gloo stages CUDA tensors through the host.
  if (device.is_cuda() && has("nccl")) return "nccl";
  if (has("gloo")) return "gloo";
  throw Error("data parallel: this build has no backend for " + device.str() +
              " (configure with WANSTUDIO_GLOO=ON and libgloo-dev, or a CUDA LibTorch with NCCL)");
}

#ifdef WANSTUDIO_HAVE_C10D

// LibTorch 2 split the collectives out of ProcessGroup into Backend; both groups implement them.
#if TORCH_VERSION_MAJOR >= 2
using Group = c10d::Backend;
#else
using Group = c10d::ProcessGroup;
#endif

struct DataParallel::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Group> pg;
  torch::Device device{torch::kCPU};  // where the backend wants the tensors it moves
};

DataParallel::DataParallel(DistEnv env) : impl_(std::make_unique<Impl>()), env_(std::move(env)) {}
DataParallel::~DataParallel() = default;

namespace {

c10::intrusive_ptr<Group> make_group(const std::string& backend, const c10::intrusive_ptr<c10d::Store>& store,
                                     const DistEnv& env, const torch::Device& device,
                                     std::chrono::milliseconds timeout) {
#ifdef WANSTUDIO_HAVE_NCCL
  if (backend == "nccl") {
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout;
    c10::cuda::set_device(device.index());  // the communicator and barrier use the current device
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world, opts);
  }
#endif
#ifdef WANSTUDIO_HAVE_GLOO
  auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
  // Bind where the master is reachable: loopback for a single machine, else this host.
  const bool local = env.master_addr == "127.0.0.1" || env.master_addr == "localhost";
  opts->devices.push_back(local ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                : c10d::ProcessGroupGloo::createDefaultDevice());
  opts->threads = 2;
  (void)device;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world, opts);
#else
  throw Error("data parallel: " + backend + " is not built");
#endif
}

}  // namespace

std::unique_ptr<DataParallel> DataParallel::connect(const DistEnv& env, const torch::Device& device, double timeout_s) {
  const char* wanted_env = std::getenv("WANSTUDIO_DP_BACKEND");
  const std::string wanted = wanted_env ? wanted_env : "";
  // A single process needs no group, unless one is asked for by name (a smoke test of the backend).
  if (env.world <= 1 && wanted.empty()) return nullptr;
  const std::string backend = choose_backend(device, wanted);
  std::unique_ptr<DataParallel> dp(new DataParallel(env));
  dp->backend_ = backend;
  dp->impl_->device = backend == "nccl" ? device : torch::Device(torch::kCPU);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(env.master_port);
    // Under torchrun the agent already serves the store at MASTER_PORT.
    const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
    so.isServer = env.rank == 0 && !(agent && std::string(agent) == "True");
    so.numWorkers = static_cast<size_t>(env.world);
    so.timeout = timeout;
    dp->impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
    // Collectives wait while rank 0 alone validates or writes a checkpoint: give them hours.
    dp->impl_->pg = make_group(backend, dp->impl_->store, env, device,
                               std::max(timeout, std::chrono::milliseconds(2 * 3600 * 1000)));
  } catch (const std::exception& e) {
    throw Error("data parallel (" + backend + "): rank " + std::to_string(env.rank) + " of " +
                std::to_string(env.world) + " could not meet the others at " + env.master_addr + ":" +
                std::to_string(env.master_port) + ": " + e.what());
  }
  return dp;
}

void DataParallel::average_gradients(const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  // Bucket by dtype and device; each bucket is one flat all-reduce.
  std::vector<torch::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  size_t i = 0;
  while (i < grads.size()) {
    std::vector<torch::Tensor> bucket{grads[i]};
    int64_t n = grads[i].numel();
    size_t j = i + 1;
    while (j < grads.size() && grads[j].scalar_type() == grads[i].scalar_type() &&
           grads[j].device() == grads[i].device() && n + grads[j].numel() <= kBucketElements) {
      n += grads[j].numel();
      bucket.push_back(grads[j++]);
    }
    std::vector<torch::Tensor> flat;
    for (auto& g : bucket) flat.push_back(g.reshape({-1}));
    std::vector<at::Tensor> buf{torch::cat(flat).to(impl_->device)};
    impl_->pg->allreduce(buf)->wait();
    buf[0].div_(static_cast<double>(env_.world));
    int64_t off = 0;
    for (auto& g : bucket) {
      g.copy_(buf[0].narrow(0, off, g.numel()).view_as(g));
      off += g.numel();
    }
    i = j;
  }
}

namespace {
// Numbers for a collective, on the backend's device.
std::vector<at::Tensor> numbers(const std::vector<double>& v, const torch::Device& device) {
  return {torch::tensor(v, torch::kDouble).to(device)};
}
}  // namespace

double DataParallel::mean(double v) {
  auto t = numbers({v}, impl_->device);
  impl_->pg->allreduce(t)->wait();
  return t[0].item<double>() / static_cast<double>(env_.world);
}

bool DataParallel::any(bool v) { return any_of({v})[0]; }

std::vector<bool> DataParallel::any_of(const std::vector<bool>& v) {
  std::vector<double> votes(v.begin(), v.end());
  auto t = numbers(votes, impl_->device);
  impl_->pg->allreduce(t)->wait();
  const torch::Tensor sums = t[0].cpu();
  std::vector<bool> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = sums[static_cast<int64_t>(i)].item<double>() > 0;
  return out;
}

void DataParallel::broadcast(const std::vector<torch::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& t : tensors) {
    std::vector<at::Tensor> buf{t.detach().contiguous().to(impl_->device)};
    impl_->pg->broadcast(buf)->wait();
    if (!buf[0].is_same(t)) t.detach().copy_(buf[0]);
  }
}

void DataParallel::barrier() { impl_->pg->barrier()->wait(); }

namespace {

// Runs `op(flat, owner)` on flat buffers of consecutive tensors with one owner and dtype (cast to
// `buffer_dtype` when given), then hands each tensor's slice of the buffer to `back(k, slice, owner)`.
template <typename Op, typename Back>
void for_owner_buckets(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners,
                       const torch::Device& device, Op op, Back back,
                       std::optional<torch::ScalarType> buffer_dtype = std::nullopt) {
  torch::NoGradGuard no_grad;
  size_t i = 0;
  while (i < tensors.size()) {
    size_t j = i + 1;
    int64_t n = tensors[i].numel();
    while (j < tensors.size() && owners[j] == owners[i] && tensors[j].scalar_type() == tensors[i].scalar_type() &&
           tensors[j].device() == tensors[i].device() && n + tensors[j].numel() <= kBucketElements)
      n += tensors[j++].numel();
    std::vector<torch::Tensor> flat;
    for (size_t k = i; k < j; ++k) flat.push_back(tensors[k].detach().reshape({-1}));
    torch::Tensor buf = torch::cat(flat).to(device);
    if (buffer_dtype) buf = buf.to(*buffer_dtype);
    op(buf, owners[i]);
    int64_t off = 0;
    for (size_t k = i; k < j; ++k) {
      back(k, buf.narrow(0, off, tensors[k].numel()).view_as(tensors[k]), owners[i]);
      off += tensors[k].numel();
    }
    i = j;
  }
}

template <typename Group>
void reduce_onto(Group& pg, torch::Tensor& buf, int owner) {
  std::vector<at::Tensor> v{buf};
  c10d::ReduceOptions o;
  o.reduceOp = c10d::ReduceOp::SUM;
  o.rootRank = owner;
  pg.reduce(v, o)->wait();
}

}  // namespace

void DataParallel::reduce_to_owners(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners) {
  auto reduce = [&](torch::Tensor& buf, int owner) { reduce_onto(*impl_->pg, buf, owner); };
  for_owner_buckets(tensors, owners, impl_->device, reduce, [&](size_t k, const torch::Tensor& sum, int owner) {
    if (owner == env_.rank) tensors[k].detach().copy_(sum);
  });
}

void DataParallel::reduce_to_owners_into(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners,
                                         const std::vector<torch::Tensor>& into) {
  auto reduce = [&](torch::Tensor& buf, int owner) { reduce_onto(*impl_->pg, buf, owner); };
  for_owner_buckets(
      tensors, owners, impl_->device, reduce,
      [&](size_t k, const torch::Tensor& sum, int owner) {
        if (owner == env_.rank) into[k].add_(sum);
      },
      torch::kFloat);
}

void DataParallel::broadcast_from_owners(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners) {
  auto bcast = [&](torch::Tensor& buf, int owner) {
    // Gloo has no bf16: a broadcast moves bits, so bf16 travels as fp16 bits (the same storage).
    std::vector<at::Tensor> v{buf.scalar_type() == torch::kBFloat16 ? buf.view(torch::kHalf) : buf};
    c10d::BroadcastOptions o;
    o.rootRank = owner;
    impl_->pg->broadcast(v, o)->wait();
  };
  for_owner_buckets(tensors, owners, impl_->device, bcast, [&](size_t k, const torch::Tensor& value, int owner) {
    if (owner != env_.rank) tensors[k].detach().copy_(value);
  });
}

void DataParallel::gather_to_root(const std::vector<torch::Tensor>& tensors, const std::vector<int>& owners) {
  torch::NoGradGuard no_grad;
  // Rank 0 receives in index order and every owner sends in index order, so no send waits on
  // a receive that comes after one of its own.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int owner = owners[i];
    if (owner == 0) continue;
    const int tag = static_cast<int>(i);
    if (env_.rank == owner) {
      std::vector<at::Tensor> v{tensors[i].detach().to(impl_->device).contiguous()};
      impl_->pg->send(v, 0, tag)->wait();
    } else if (env_.rank == 0) {
      std::vector<at::Tensor> v{torch::empty_like(tensors[i], torch::TensorOptions().device(impl_->device))
                                    .contiguous(torch::MemoryFormat::Contiguous)};
      impl_->pg->recv(v, owner, tag)->wait();
      tensors[i].detach().copy_(v[0]);
    }
  }
}

double DataParallel::sum(double v) {
  auto t = numbers({v}, impl_->device);
  impl_->pg->allreduce(t)->wait();
  return t[0].item<double>();
}

double DataParallel::max(double v) {
  auto t = numbers({v}, impl_->device);
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::MAX;
  impl_->pg->allreduce(t, o)->wait();
  return t[0].item<double>();
}

#else  // no c10d backend in this build

struct DataParallel::Impl {};
DataParallel::DataParallel(DistEnv env) : env_(std::move(env)) {}
DataParallel::~DataParallel() = default;

std::unique_ptr<DataParallel> DataParallel::connect(const DistEnv& env, const torch::Device& device, double) {
  const char* wanted = std::getenv("WANSTUDIO_DP_BACKEND");
  if (env.world <= 1 && !(wanted && *wanted)) return nullptr;
  choose_backend(device, wanted ? wanted : "");  // throws: nothing is built
  return nullptr;
}
void DataParallel::average_gradients(const std::vector<torch::Tensor>&) {}
double DataParallel::mean(double v) { return v; }
bool DataParallel::any(bool v) { return v; }
std::vector<bool> DataParallel::any_of(const std::vector<bool>& v) { return v; }
void DataParallel::broadcast(const std::vector<torch::Tensor>&) {}
void DataParallel::barrier() {}
void DataParallel::reduce_to_owners(const std::vector<torch::Tensor>&, const std::vector<int>&) {}
void DataParallel::reduce_to_owners_into(const std::vector<torch::Tensor>&, const std::vector<int>&,
                                         const std::vector<torch::Tensor>&) {}
void DataParallel::gather_to_root(const std::vector<torch::Tensor>&, const std::vector<int>&) {}
void DataParallel::broadcast_from_owners(const std::vector<torch::Tensor>&, const std::vector<int>&) {}
double DataParallel::sum(double v) { return v; }
double DataParallel::max(double v) { return v; }

#endif

}  // namespace ws::parallel
