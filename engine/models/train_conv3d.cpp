// SPDX-License-Identifier: Apache-2.0
#include "models/train_conv3d.h"

#include <ATen/ops/mkldnn_convolution.h>

#include <atomic>

namespace ws::models {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

namespace {

Tensor mkldnn_conv(const Tensor& x, const Tensor& w, const c10::optional<Tensor>& b, int64_t pad) {
  return at::mkldnn_convolution(x.contiguous(), w.contiguous(), b, {pad, pad, pad}, {1, 1, 1}, {1, 1, 1}, 1);
}

struct TrainConv3d : public torch::autograd::Function<TrainConv3d> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
    ctx->save_for_backward({x, w});
    return mkldnn_conv(x, w, b, 1);
  }
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor& x = saved[0];
    const Tensor& w = saved[1];
    Tensor g = grads[0].contiguous();
    // ∂x: the full correlation of g with the flipped, transposed kernel (padding k − 1 − p = 1).
    Tensor gx = mkldnn_conv(g, w.flip({2, 3, 4}).transpose(0, 1), c10::nullopt, 1);
    // ∂w[o, i, k] = Σ_{n, p} g[n, o, p] · x_pad[n, i, p + k]: a conv whose batch is the input
    // channels and whose kernel is g itself.
    Tensor xp = torch::constant_pad_nd(x, {1, 1, 1, 1, 1, 1}).transpose(0, 1);
    Tensor gw = mkldnn_conv(xp, g.transpose(0, 1), c10::nullopt, 0).transpose(0, 1).contiguous();
    Tensor gb = g.sum({0, 2, 3, 4});
    return {gx, gw, gb};
  }
};

}  // namespace

static std::atomic<bool> g_enabled{true};

void set_train_conv3d_enabled(bool on) { g_enabled = on; }

bool train_conv3d_applies(const Tensor& x, const Tensor& w) {
  // Not conditioned on GradMode: a checkpointed block's first, gradient-free forward must take
  // the same path as its recomputation, or gradient checkpointing would change the result.
  if (!g_enabled || !at::hasMKLDNN()) return false;
  if (!x.device().is_cpu() || x.scalar_type() != torch::kFloat || w.scalar_type() != torch::kFloat) return false;
  if (x.dim() != 5 || w.dim() != 5 || w.size(2) != 3 || w.size(3) != 3 || w.size(4) != 3) return false;
  if (!(x.requires_grad() || w.requires_grad())) return false;
  // Mirror of LibTorch 1.13's ConvParams::use_mkldnn: batch > 1 or N·C·D·H > 20480 already gets oneDNN.
  return x.size(0) == 1 && x.size(1) * x.size(2) * x.size(3) <= 20480;
}

Tensor train_conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return TrainConv3d::apply(x, weight, bias);
}

}  // namespace ws::models
