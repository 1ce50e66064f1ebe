// SPDX-License-Identifier: Apache-2.0
#include "models/frozen_weights.h"

#include "core/error.h"

namespace ws::models {

torch::Tensor FrozenWeights::cast(const std::string& key, torch::ScalarType dtype) const {
  const torch::Tensor& t = at(key);
  if (t.scalar_type() == dtype) return t;
  torch::Tensor& buf = scratch_[t.sizes().vec()];
  if (!buf.defined() || buf.device() != t.device() || buf.scalar_type() != dtype)
    buf = torch::empty(t.sizes(), t.options().dtype(dtype));
  return buf.copy_(t);
}

void FrozenWeights::to(const torch::Device& device) {
  for (auto& [k, v] : tensors_) v = v.to(device);
  scratch_.clear();
}

void FrozenWeights::check(const std::map<std::string, std::vector<int64_t>>& want, const std::string& source,
                          const std::string& what, const std::function<std::string(const std::string&)>& hint) const {
  for (const auto& [k, shape] : want) {
    auto it = tensors_.find(k);
    if (it == tensors_.end()) throw Error(source + ": missing " + what + " " + k);
    if (it->second.sizes().vec() != shape)
      throw Error(source + ": " + k + " has shape " + io::shape_str(it->second.sizes().vec()) + ", the config needs " +
                  io::shape_str(shape));
    if (!it->second.is_floating_point()) throw Error(source + ": " + k + " is not a floating-point tensor");
  }
  for (const auto& [k, v] : tensors_)
    if (!want.count(k)) throw Error(source + ": unexpected key " + k + " (" + hint(k) + ")");
}

}  // namespace ws::models
