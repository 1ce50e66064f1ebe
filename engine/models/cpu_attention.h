// SPDX-License-Identifier: Apache-2.0
// Attention on the CPU in tiles (docs/design/wan-dit.md §3): for each head and block of query
// rows, the scores of one block of keys at a time are made, turned into probabilities and used
// while they are still in the core's own cache — the softmax's passes fused into two (max, then
// exp with its sum), the row statistics carried from block to block (the "online" softmax), no
// score-sized buffer beyond one tile a thread. Backward recomputes each tile's probabilities from
// the row log-sum-exp kept by forward. Each thread runs whole tiles with a one-thread GEMM, so no
// product waits for the other cores.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace ws::models {

// Whether cpu_attention takes these operands: fp32 CPU tensors with keys, in a build with oneDNN's
// GEMM, unless WANSTUDIO_ATTENTION=composed (or set_cpu_attention) chose the composed attention.
bool cpu_attention_applies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// softmax(q kᵀ · scale) v for q [n, Lq, d], k [n, Lk, d], v [n, Lk, dv] -> [n, Lq, dv], with
// autograd when an operand requires grad. The result is a view of an [Lq, n, dv] tensor, so the
// DiT's turn back to tokens costs no copy.
at::Tensor cpu_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale);

// "tiled" or "composed" (WANSTUDIO_ATTENTION, default tiled where built); a bad value throws
// ws::Error with one line. Checked at engine start.
std::string cpu_attention_choice();
// For tests and benches: use the tiled attention (true) or the composed one from now on.
void set_cpu_attention(bool tiled);

}  // namespace ws::models
