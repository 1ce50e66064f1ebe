// SPDX-License-Identifier: Apache-2.0
#include "io/pth.h"

#include <cstring>
#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "io/pickle.h"
#include "io/printable.h"
#include "io/zip_reader.h"

namespace ws::io {
namespace {

using pickle::Kind;
using pickle::Value;

// Containers a training script commonly wraps a state dict in.
const char* const kWrapperKeys[] = {"state_dict", "model", "module"};

// Tensors of a dict, nested dicts flattened with dots ({"a": {"b": t}} -> "a.b").
void collect(const std::string& path, const Value& d, const std::string& prefix, int depth, StateDict* out) {
  if (depth > 16) throw Error(path + ": dicts nested too deeply");
  for (const auto& [k, v] : d.dict) {
    if (k->kind != Kind::Str) continue;  // integer-keyed dicts are not module state
    if (v->kind == Kind::Tensor) (*out)[prefix + k->s] = v->tensor;
    else if (v->kind == Kind::Dict) collect(path, *v, prefix + k->s + ".", depth + 1, out);
  }
}

bool has_direct_tensor(const Value& d) {
  for (const auto& kv : d.dict)
    if (kv.second->kind == Kind::Tensor) return true;
  return false;
}

const Value* unwrap(const Value& root) {
  for (const char* w : kWrapperKeys)
    for (const auto& [k, v] : root.dict)
      if (k->kind == Kind::Str && k->s == w && v->kind == Kind::Dict) return v;
  return &root;
}

// The entry `<archive>/data.pkl`; every other entry of the checkpoint shares its prefix.
std::string archive_prefix(const ZipReader& zip) {
  for (const auto& e : zip.entries()) {
    const std::string tail = "data.pkl";
    if (e.name.size() < tail.size() || e.name.compare(e.name.size() - tail.size(), tail.size(), tail) != 0) continue;
    std::string prefix = e.name.substr(0, e.name.size() - tail.size());
    if (prefix.empty() || (prefix.back() == '/' && prefix.find('/') == prefix.size() - 1)) return prefix;
  }
  throw Error(zip.path() + ": no data.pkl in the archive; not a torch.save checkpoint");
}

}  // namespace

StateDict read_pth(const std::string& path) {
  {
    // Before PyTorch 1.6 torch.save wrote a bare pickle stream, not a zip.
    fs::check_regular_file(path);
    std::ifstream in(path, std::ios::binary);
    char magic[2] = {};
    if (in.read(magic, 2) && magic[0] == '\x80' && magic[1] == '\x02')
      throw Error(path +
                  ": legacy (pre-1.6, non-zip) torch.save format is not supported; re-save it with a newer PyTorch");
  }
  ZipReader zip(path);
  const std::string prefix = archive_prefix(zip);
  if (const ZipEntry* bo = zip.find(prefix + "byteorder")) {
    std::string order(reinterpret_cast<const char*>(zip.data(*bo)), bo->size);
    if (order != "little") throw Error(path + ": byte order '" + printable(order) + "' is not supported");
  }
  const ZipEntry* pkl = zip.find(prefix + "data.pkl");
  auto file = zip.file();

  std::map<std::string, torch::Tensor> storages;
  auto load_storage = [&](const Value& pid) -> torch::Tensor {
    // ('storage', storage_type, key, location, numel)
    if (pid.kind != Kind::Tuple || pid.items.size() != 5 || pid.items[0]->kind != Kind::Str ||
        pid.items[0]->s != "storage" || pid.items[1]->kind != Kind::Global || pid.items[2]->kind != Kind::Str ||
        pid.items[4]->kind != Kind::Int || pid.items[4]->i < 0)
      throw Error(path + ": unexpected persistent id in data.pkl (not a torch storage)");
    torch::Dtype dtype;
    if (!pickle::storage_dtype(pid.items[1]->s.substr(pid.items[1]->s.rfind('.') + 1), &dtype))
      throw Error(path + ": '" + printable(pid.items[1]->s) + "' is not a storage type");
    const std::string& key = pid.items[2]->s;
    auto cached = storages.find(key);
    if (cached != storages.end()) {
      if (cached->second.scalar_type() != dtype)
        throw Error(path + ": storage " + printable(key) + " used with two dtypes");
      return cached->second;
    }
    const ZipEntry* e = zip.find(prefix + "data/" + key);
    if (!e) throw Error(path + ": storage '" + printable(key) + "' is missing from the archive");
    const uint8_t* bytes = zip.data(*e);
    const int64_t numel = pid.items[4]->i;
    const size_t esize = c10::elementSize(dtype);
    if (static_cast<uint64_t>(numel) > e->size / esize)
      throw Error(path + ": storage '" + printable(key) + "' holds " + std::to_string(e->size) + " bytes, not the " +
                  std::to_string(numel) + " x " + std::to_string(esize) + " its tensor needs");
    auto opts = torch::TensorOptions().dtype(dtype);
    torch::Tensor t;
    if (reinterpret_cast<uintptr_t>(bytes) % esize == 0) {
      // A view into the mapping: a 2.8 GB checkpoint is read straight from the page cache.
      t = torch::from_blob(
          const_cast<uint8_t*>(bytes), {numel}, [file](void*) {}, opts);
    } else {
      t = torch::empty({numel}, opts);
      if (numel) std::memcpy(t.data_ptr(), bytes, static_cast<size_t>(numel) * esize);
    }
    storages[key] = t;
    return t;
  };

  pickle::Unpickler up(path, zip.data(*pkl), pkl->size, load_storage);
  const Value* root = up.load();
  if (root->kind != Kind::Dict)
    throw Error(path + ": the checkpoint holds no state dict (a pickled object that is not a dict)");
  if (!has_direct_tensor(*root)) root = unwrap(*root);
  StateDict sd;
  collect(path, *root, "", 0, &sd);
  if (sd.empty()) throw Error(path + ": the checkpoint holds no tensors");
  return sd;
}

}  // namespace ws::io
