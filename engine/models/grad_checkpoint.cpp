// SPDX-License-Identifier: Apache-2.0
#include "models/grad_checkpoint.h"

#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>

#include <atomic>
#include <mutex>

namespace ws::models {
namespace {

std::atomic<int64_t> g_forwards{0}, g_recomputes{0}, g_offload_copies{0}, g_offload_bytes{0};
thread_local bool t_recomputing = false;  // a body runs again inside backward on this thread

// Keeps the recompute body alive for as long as the autograd node needs it.
struct BodyHolder : torch::CustomClassHolder {
  explicit BodyHolder(CheckpointBody b) : body(std::move(b)) {}
  CheckpointBody body;
};

// The generator a body on `device` draws from (dropout): its state is replayed in the recompute.
at::Generator generator_for(const torch::Device& device) {
  return device.is_cuda() ? at::globalContext().defaultGenerator(device) : at::detail::getDefaultCPUGenerator();
}

void count_offload_copy(const torch::Tensor& t) {
  g_offload_copies.fetch_add(1, std::memory_order_relaxed);
  g_offload_bytes.fetch_add(static_cast<int64_t>(t.numel() * t.element_size()), std::memory_order_relaxed);
}

// A host copy of x: pinned beside a GPU so both copies stay asynchronous on the compute stream
// (the caching allocator reuses x's memory only after the copy, in stream order). On the CPU
// it is still a real copy, so tests see the same data travel.
torch::Tensor to_host(const torch::Tensor& x) {
  count_offload_copy(x);
  if (!x.is_cuda()) return x.detach().clone();
  auto host = torch::empty(x.sizes(), x.options().device(torch::kCPU).pinned_memory(true));
  host.copy_(x.detach(), /*non_blocking=*/true);
  return host;
}

torch::Tensor from_host(const torch::Tensor& host, const torch::Device& device) {
  count_offload_copy(host);
  if (!device.is_cuda()) return host.clone();
  return host.to(device, /*non_blocking=*/true);
}

struct CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, c10::intrusive_ptr<BodyHolder> holder,
                               const torch::Tensor& x, torch::TensorList params, bool offload) {
    const CheckpointBody* body = &holder->body;
    ctx->saved_data["body"] = c10::IValue::make_capsule(holder);
    {
      at::Generator gen = generator_for(x.device());
      std::lock_guard<std::mutex> lock(gen.mutex());
      ctx->saved_data["rng"] = gen.get_state();
    }
    std::vector<torch::Tensor> saved{offload ? torch::Tensor() : x};
    if (offload) {
      ctx->saved_data["host"] = to_host(x);
      ctx->saved_data["device"] = x.device().str();
      ctx->saved_data["x_grad"] = x.requires_grad();
    }
    saved.insert(saved.end(), params.begin(), params.end());
    ctx->save_for_backward(saved);
    torch::NoGradGuard no_grad;
    return (*body)(x);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto capsule = ctx->saved_data["body"].toCapsule();
    const CheckpointBody* body = &static_cast<BodyHolder*>(capsule.get())->body;
    auto saved = ctx->get_saved_variables();
    torch::Tensor x;
    if (saved[0].defined()) {
      x = saved[0].detach().requires_grad_(saved[0].requires_grad());
    } else {
      x = from_host(ctx->saved_data["host"].toTensor(), torch::Device(ctx->saved_data["device"].toStringRef()))
              .requires_grad_(ctx->saved_data["x_grad"].toBool());
      ctx->saved_data.erase("host");  // the host copy is done with
    }
    std::vector<torch::Tensor> params(saved.begin() + 1, saved.end());

    // The recompute draws what the forward drew (LoRA dropout), then the generator moves on
    // from where it was.
    torch::Tensor y;
    {
      at::Generator gen = generator_for(x.device());
      torch::Tensor now;
      {
        std::lock_guard<std::mutex> lock(gen.mutex());
        now = gen.get_state();
        gen.set_state(ctx->saved_data["rng"].toTensor());
      }
      torch::AutoGradMode grad_on(true);
      const bool outer = t_recomputing;  // a body may checkpoint parts of itself
      t_recomputing = true;
      try {
        y = (*body)(x);
      } catch (...) {
        t_recomputing = outer;
        throw;
      }
      t_recomputing = outer;
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(now);
    }
    g_recomputes.fetch_add(1, std::memory_order_relaxed);
    // Differentiate w.r.t. the input (when it needs grad) and every parameter.
    // (A frozen base: e0 and the context need no gradient, only the LoRA adapters do.)
    std::vector<torch::Tensor> wrt;
    if (x.requires_grad()) wrt.push_back(x);
    for (auto& p : params)
      if (p.requires_grad()) wrt.push_back(p);
    std::vector<torch::Tensor> grads;
    if (!wrt.empty())
      grads = torch::autograd::grad({y}, wrt, {grad_out[0]}, /*retain_graph=*/false,
                                    /*create_graph=*/false, /*allow_unused=*/true);

    torch::autograd::variable_list out;
    out.push_back(torch::Tensor());  // body pointer: not a tensor
    size_t k = 0;
    out.push_back(x.requires_grad() ? grads[k++] : torch::Tensor());
    for (const auto& p : params) out.push_back(p.requires_grad() ? grads[k++] : torch::Tensor());
    out.push_back(torch::Tensor());  // offload flag
    return out;
  }
};

}  // namespace

torch::Tensor checkpoint(const CheckpointBody& body, const torch::Tensor& x, const std::vector<torch::Tensor>& params,
                         const CheckpointOptions& options) {
  bool needs = torch::GradMode::is_enabled() && x.requires_grad();
  for (const auto& p : params) needs = needs || (torch::GradMode::is_enabled() && p.requires_grad());
  if (!needs) return body(x);
  g_forwards.fetch_add(1, std::memory_order_relaxed);
  return CheckpointFunction::apply(c10::make_intrusive<BodyHolder>(body), x, torch::TensorList(params),
                                   options.offload);
}

int64_t checkpointed_forwards() { return g_forwards.load(); }
int64_t checkpoint_recomputations() { return g_recomputes.load(); }
bool checkpoint_recomputing() { return t_recomputing; }
CheckpointOffloadStats checkpoint_offload_stats() { return {g_offload_copies.load(), g_offload_bytes.load()}; }

std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.parameters())
    if (p.requires_grad()) out.push_back(p);
  return out;
}

}  // namespace ws::models
