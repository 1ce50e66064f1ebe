// SPDX-License-Identifier: Apache-2.0
// A restricted unpickler for the pickle subset torch.save writes for state dicts
// (protocol 2, and the binary opcodes of later protocols). Nothing is ever imported or
// called: GLOBAL names are checked against an allowlist (OrderedDict, the tensor rebuild
// functions, storage types) and anything else is refused with an error naming it.
// Values live in an arena owned by the Unpickler, so hostile nesting cannot overflow the
// stack on destruction and memo cycles cannot leak.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ws::io::pickle {

enum class Kind { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor };

struct Value {
  Kind kind = Kind::None;
  int64_t i = 0;                                            // Bool, Int
  double f = 0;                                             // Float
  std::string s;                                            // Str, Bytes, Global ("module.name")
  std::vector<const Value*> items;                          // Tuple, List
  std::vector<std::pair<const Value*, const Value*>> dict;  // Dict, in insertion order
  torch::Tensor tensor;                                     // Storage (1-D, its dtype), Tensor
};

// Resolves a BINPERSID id (torch: ('storage', type, key, location, numel)) to a Storage.
using PersistentLoad = std::function<torch::Tensor(const Value& pid)>;

class Unpickler {
 public:
  // `context` prefixes every error (the file name); `data` must outlive load().
  Unpickler(std::string context, const uint8_t* data, size_t size, PersistentLoad persistent_load);
  // Runs to STOP; throws ws::Error on anything malformed or not allowed.
  const Value* load();

 private:
  std::string ctx_;
  const uint8_t* data_;
  size_t size_, pos_ = 0;
  PersistentLoad persistent_load_;
  std::deque<Value> arena_;

  Value* make(Kind k);
  // The allowlisted callables (REDUCE / NEWOBJ); `fn` already passed the allowlist.
  const Value* call(const std::string& fn, const std::vector<const Value*>& args);
  [[noreturn]] void fail(const std::string& what) const;
};

// Torch's storage class name ("FloatStorage") to its dtype; false when it is not one.
bool storage_dtype(const std::string& name, torch::Dtype* dtype);

}  // namespace ws::io::pickle
