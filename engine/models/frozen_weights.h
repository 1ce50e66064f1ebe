// SPDX-License-Identifier: Apache-2.0
// The weights of a frozen model (UMT5, Qwen2.5-VL), held as loaded — a bf16 release stays bf16,
// with no second fp32 copy — and converted a matrix at a time to the compute dtype when used.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "io/state_dict.h"

namespace ws::models {

class FrozenWeights {
 public:
  FrozenWeights() = default;
  explicit FrozenWeights(io::StateDict tensors) : tensors_(std::move(tensors)) {}

  const io::StateDict& tensors() const { return tensors_; }
  const torch::Tensor& at(const std::string& key) const { return tensors_.at(key); }
  // `key` in `dtype`: the tensor itself when stored so, else converted into a buffer kept per
  // shape (a fresh tensor per matrix costs more in page faults than the conversion), valid until
  // the next cast of that shape — callers use it before asking for the next weight.
  torch::Tensor cast(const std::string& key, torch::ScalarType dtype) const;
  void to(const torch::Device& device);
  void drop_buffers() { scratch_.clear(); }

  // Strict: every key of `want` with its shape and a floating-point dtype, no other key. A
  // ws::Error names `source` and the key ("missing <what> K", "unexpected key K (<hint(K)>)").
  void check(const std::map<std::string, std::vector<int64_t>>& want, const std::string& source,
             const std::string& what, const std::function<std::string(const std::string&)>& hint) const;

 private:
  io::StateDict tensors_;
  mutable std::map<std::vector<int64_t>, torch::Tensor> scratch_;
};

}  // namespace ws::models
