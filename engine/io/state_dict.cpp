// SPDX-License-Identifier: Apache-2.0
#include "io/state_dict.h"

#include <sstream>

#include "core/error.h"

namespace ws::io {
namespace {

// "a, b, c, +4 more": a report line stays readable for a model with hundreds of keys.
std::string short_list(const std::vector<std::string>& items, size_t show = 3) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < show; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > show) s += ", +" + std::to_string(items.size() - show) + " more";
  return s;
}

std::string mismatch_str(const ShapeMismatch& m) {
  return m.key + ": " + shape_str(m.got) + " vs " + shape_str(m.expected);
}

std::vector<int64_t> to_vec(c10::IntArrayRef a) { return {a.begin(), a.end()}; }

}  // namespace

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string dtype_name(torch::Dtype dt) {
  switch (dt) {
    case torch::kFloat32: return "F32";
    case torch::kFloat16: return "F16";
    case torch::kBFloat16: return "BF16";
    case torch::kFloat64: return "F64";
    case torch::kInt64: return "I64";
    case torch::kInt32: return "I32";
    case torch::kInt16: return "I16";
    case torch::kInt8: return "I8";
    case torch::kUInt8: return "U8";
    case torch::kBool: return "BOOL";
    default: return std::string(c10::toString(dt));
  }
}

std::string LoadReport::summary() const {
  std::ostringstream s;
  s << "loaded " << loaded << ", missing " << missing.size();
  if (!missing.empty()) s << " (" << short_list(missing) << ")";
  s << ", unexpected " << unexpected.size();
  if (!unexpected.empty()) s << " (" << short_list(unexpected) << ")";
  s << ", shape-mismatched " << mismatched.size();
  if (!mismatched.empty()) {
    std::vector<std::string> m;
    for (const auto& x : mismatched) m.push_back(mismatch_str(x));
    s << " (" << short_list(m) << ")";
  }
  return s.str();
}

StateDict module_state_dict(const torch::nn::Module& module) {
  StateDict sd;
  // Modules may register undefined slots (a conv without bias): they hold no state.
  for (const auto& p : module.named_parameters(true))
    if (p.value().defined()) sd[p.key()] = p.value();
  for (const auto& b : module.named_buffers(true))
    if (b.value().defined()) sd[b.key()] = b.value();
  return sd;
}

LoadReport load_state_dict(torch::nn::Module& module, const StateDict& sd, LoadMode mode, const std::string& source) {
  StateDict target = module_state_dict(module);
  LoadReport r;
  std::vector<std::string> fits;
  for (const auto& [key, dst] : target) {
    auto it = sd.find(key);
    if (it == sd.end()) {
      r.missing.push_back(key);
    } else if (!it->second.defined() || it->second.sizes() != dst.sizes()) {
      auto got = it->second.defined() ? to_vec(it->second.sizes()) : std::vector<int64_t>{};
      r.mismatched.push_back({key, to_vec(dst.sizes()), got});
    } else {
      fits.push_back(key);
    }
  }
  for (const auto& kv : sd)
    if (!target.count(kv.first)) r.unexpected.push_back(kv.first);

  // Strict checks everything before copying, so a refused load leaves the module as it was.
  if (mode == LoadMode::Strict && !r.clean()) {
    std::string where = source.empty() ? std::string("state dict") : source;
    std::string counts = " (" + std::to_string(r.missing.size()) + " missing, " + std::to_string(r.unexpected.size()) +
                         " unexpected, " + std::to_string(r.mismatched.size()) + " shape-mismatched)";
    if (!r.mismatched.empty()) {
      const auto& m = r.mismatched.front();
      throw Error(where + ": shape mismatch for '" + m.key + "': file " + shape_str(m.got) + ", model " +
                  shape_str(m.expected) + counts);
    }
    if (!r.missing.empty()) throw Error(where + ": missing key '" + r.missing.front() + "'" + counts);
    throw Error(where + ": unexpected key '" + r.unexpected.front() + "'" + counts);
  }

  torch::NoGradGuard no_grad;
  for (const auto& key : fits) {
    // copy_ converts dtype and device (a BF16 file into an F32 module).
    target.at(key).copy_(sd.at(key));
    ++r.loaded;
  }
  return r;
}

}  // namespace ws::io
