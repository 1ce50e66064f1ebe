// SPDX-License-Identifier: Apache-2.0
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/json_depth.h"
#include "core/error.h"
#include "core/fs.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/printable.h"

namespace ws::io {
namespace {

using nlohmann::json;

// The reference implementation refuses headers above 100 MB; so do we, before parsing.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

std::optional<torch::Dtype> dtype_from_name(const std::string& s) {
  static const std::map<std::string, torch::Dtype> table = {
      {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16}, {"F64", torch::kFloat64},
      {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},     {"I8", torch::kInt8},
      {"U8", torch::kUInt8},    {"BOOL", torch::kBool}};
  auto it = table.find(s);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

uint64_t read_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

struct Header {
  std::vector<SafetensorsEntry> entries;  // sorted by name
  std::map<std::string, std::string> metadata;
  size_t data_offset = 0;
};

SafetensorsEntry parse_entry(const std::string& path, const std::string& name, const json& v, uint64_t data_size) {
  auto bad = [&](const std::string& what) { return Error(path + ": tensor '" + printable(name) + "': " + what); };
  if (!v.is_object()) throw bad("header entry is not an object");
  SafetensorsEntry e;
  e.name = name;
  auto dt = v.find("dtype");
  if (dt == v.end() || !dt->is_string()) throw bad("missing dtype");
  e.dtype = dt->get<std::string>();
  auto torch_dt = dtype_from_name(e.dtype);
  if (!torch_dt) throw bad("unsupported dtype '" + printable(e.dtype) + "'");
  auto sh = v.find("shape");
  if (sh == v.end() || !sh->is_array()) throw bad("missing shape");
  uint64_t numel = 1;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
      throw bad("shape " + sh->dump() + " is not a list of non-negative integers");
    uint64_t dim = d.get<uint64_t>();
    if (__builtin_mul_overflow(numel, dim, &numel)) throw bad("shape " + sh->dump() + " overflows");
    e.shape.push_back(static_cast<int64_t>(dim));
  }
  auto off = v.find("data_offsets");
  if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    throw bad("data_offsets must be two non-negative integers");
  e.begin = (*off)[0].get<uint64_t>();
  e.end = (*off)[1].get<uint64_t>();
  if (e.begin > e.end || e.end > data_size)
    throw bad("data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
              ") out of range (data section is " + std::to_string(data_size) + " bytes)");
  uint64_t bytes = 0;
  uint64_t esize = c10::elementSize(*torch_dt);
  if (__builtin_mul_overflow(numel, esize, &bytes) || bytes != e.end - e.begin)
    throw bad("shape " + shape_str(e.shape) + " x " + e.dtype + " needs " + std::to_string(numel) + " x " +
              std::to_string(esize) + " bytes but data_offsets span " + std::to_string(e.end - e.begin));
  return e;
}

Header parse_header(const std::string& path, const uint8_t* data, size_t size) {
  if (size < 8)
    throw Error(path + ": not a safetensors file (" + std::to_string(size) +
                " bytes; too short for the 8-byte header length)");
  uint64_t n = read_le64(data);
  if (n > kMaxHeaderBytes)
    throw Error(path + ": header length " + std::to_string(n) + " is absurd (limit " + std::to_string(kMaxHeaderBytes) +
                " bytes); not a safetensors file?");
  if (n > size - 8)
    throw Error(path + ": header length " + std::to_string(n) + " runs past the end of the file (" +
                std::to_string(size) + " bytes); truncated?");
  check_json_nesting(std::string_view(reinterpret_cast<const char*>(data + 8), n), path + " (header)");
  json h;
  try {
    h = json::parse(data + 8, data + 8 + n);
  } catch (const json::exception& e) {
    throw Error(path + ": header is not valid JSON (" + e.what() + ")");
  }
  if (!h.is_object()) throw Error(path + ": header is not a JSON object");

  Header out;
  out.data_offset = 8 + n;
  uint64_t data_size = size - 8 - n;
  for (auto it = h.begin(); it != h.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) throw Error(path + ": __metadata__ is not a JSON object");
      // The format says string -> string; other writers' numbers are kept as their JSON text.
      for (auto m = it.value().begin(); m != it.value().end(); ++m)
        out.metadata[m.key()] = m.value().is_string() ? m.value().get<std::string>() : m.value().dump();
      continue;
    }
    out.entries.push_back(parse_entry(path, it.key(), it.value(), data_size));
  }
  // Two tensors sharing bytes is a lie the header cannot be trusted after.
  std::vector<const SafetensorsEntry*> by_offset;
  for (const auto& e : out.entries)
    if (e.end > e.begin) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      throw Error(path + ": tensors '" + printable(by_offset[i - 1]->name) + "' and '" + printable(by_offset[i]->name) +
                  "' overlap in the data section");
  std::sort(out.entries.begin(), out.entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  std::shared_ptr<SafetensorsFile> f(new SafetensorsFile());
  f->self_ = f;
  f->path_ = path;
  f->map_ = map_file(path, &f->map_size_);
  Header h = parse_header(path, static_cast<const uint8_t*>(f->map_), f->map_size_);
  f->entries_ = std::move(h.entries);
  f->metadata_ = std::move(h.metadata);
  f->data_offset_ = h.data_offset;
  return f;
}

SafetensorsFile::~SafetensorsFile() { unmap_file(map_, map_size_); }

bool SafetensorsFile::contains(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const SafetensorsEntry& e, const std::string& n) { return e.name < n; });
  return it != entries_.end() && it->name == name;
}

torch::Tensor SafetensorsFile::tensor(const std::string& name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const SafetensorsEntry& e, const std::string& n) { return e.name < n; });
  if (it == entries_.end() || it->name != name) throw Error(path_ + ": no tensor '" + printable(name) + "'");
  auto opts = torch::TensorOptions().dtype(*dtype_from_name(it->dtype));
  uint8_t* ptr = static_cast<uint8_t*>(map_) + data_offset_ + it->begin;
  size_t bytes = it->end - it->begin;
  // Views need element alignment; a writer that did not pad the header costs one copy.
  if (bytes == 0 || reinterpret_cast<uintptr_t>(ptr) % c10::elementSize(opts.dtype().toScalarType()) != 0) {
    auto t = torch::empty(it->shape, opts);
    if (bytes) std::memcpy(t.data_ptr(), ptr, bytes);
    return t;
  }
  auto keep = self_.lock();
  return torch::from_blob(
      ptr, it->shape, [keep](void*) {}, opts);
}

StateDict SafetensorsFile::all() const {
  StateDict sd;
  for (const auto& e : entries_) sd[e.name] = tensor(e.name);
  return sd;
}

StateDict read_safetensors(const std::string& path) { return SafetensorsFile::open(path)->all(); }

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  return SafetensorsFile::open(path)->metadata();
}

void write_safetensors(const std::string& path, const StateDict& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // The header comes from sizes alone; each tensor is copied to the CPU only while it is written.
  json h = json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t off = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") throw Error(path + ": '__metadata__' cannot name a tensor");
    if (!t.defined()) throw Error(path + ": tensor '" + name + "' is undefined");
    std::string dt = dtype_name(t.scalar_type());
    if (!dtype_from_name(dt))
      throw Error(path + ": tensor '" + name + "' has dtype " + dt + ", which safetensors cannot hold");
    uint64_t bytes = static_cast<uint64_t>(t.numel()) * t.element_size();
    h[name] = {{"dtype", dt},
               {"shape", std::vector<int64_t>(t.sizes().begin(), t.sizes().end())},
               {"data_offsets", json::array({off, off + bytes})}};
    off += bytes;
  }
  std::string hs = h.dump();
  hs.append((8 - hs.size() % 8) % 8, ' ');  // keeps every tensor 8-byte aligned in the mapping
  AtomicFile f(path);
  std::string len = le64(hs.size());
  f.write(len.data(), len.size());
  f.write(hs.data(), hs.size());
  for (const auto& kv : tensors) {
    auto c = kv.second.detach().to(torch::kCPU).contiguous();
    // Weights that are NaN or infinite are never published: the old file stays (issue 40).
    if (c.is_floating_point() && c.numel() > 0 && !torch::isfinite(c).all().item<bool>())
      throw Error(path + ": tensor '" + kv.first + "' holds NaN or infinite values; not written");
    f.write(c.data_ptr(), static_cast<size_t>(c.numel()) * c.element_size());
  }
  f.commit();
}

std::string shard_path(const std::string& index_path, const std::string& file) {
  // Shards sit beside the index; a path elsewhere is not something we follow (or name in errors).
  if (file.empty() || file.find('/') != std::string::npos || file.find('\\') != std::string::npos ||
      file.find('\0') != std::string::npos || file == "." || file == "..")
    throw Error(index_path + ": shard '" + printable(file) + "' is not a file name in the index's folder");
  return fs::join(fs::dirname(index_path), file);
}

StateDict read_sharded_safetensors(const std::string& index_path) {
  json idx;
  try {
    idx = json::parse(fs::read_json_text(index_path));
  } catch (const json::exception& e) {
    throw Error(index_path + ": not valid JSON (" + e.what() + ")");
  }
  auto wm = idx.is_object() ? idx.find("weight_map") : idx.end();
  if (wm == idx.end() || !wm->is_object()) throw Error(index_path + ": no \"weight_map\" object");
  std::map<std::string, std::shared_ptr<SafetensorsFile>> shards;
  StateDict sd;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    if (!it.value().is_string())
      throw Error(index_path + ": weight_map entry '" + printable(it.key()) + "' is not a file name");
    std::string file = it.value().get<std::string>();
    auto& shard = shards[file];
    if (!shard) shard = SafetensorsFile::open(shard_path(index_path, file));
    if (!shard->contains(it.key()))
      throw Error(index_path + ": tensor '" + printable(it.key()) + "' is mapped to " + printable(file) +
                  ", which does not contain it");
    sd[it.key()] = shard->tensor(it.key());
  }
  return sd;
}

void write_sharded_safetensors(const std::string& dir, const std::string& base_name, const StateDict& tensors,
                               uint64_t max_shard_bytes, const std::map<std::string, std::string>& metadata) {
  std::string base = base_name;
  const std::string ext = ".safetensors";
  if (base.size() > ext.size() && base.compare(base.size() - ext.size(), ext.size(), ext) == 0)
    base.resize(base.size() - ext.size());
  // Greedy in key order, like transformers: a tensor larger than the limit gets a shard to itself.
  std::vector<StateDict> groups(1);
  uint64_t cur = 0, total = 0;
  for (const auto& [name, t] : tensors) {
    uint64_t bytes = t.defined() ? static_cast<uint64_t>(t.numel()) * t.element_size() : 0;
    if (!groups.back().empty() && cur + bytes > max_shard_bytes) {
      groups.emplace_back();
      cur = 0;
    }
    groups.back()[name] = t;
    cur += bytes;
    total += bytes;
  }
  fs::make_dirs(dir);
  json weight_map = json::object();
  char buf[64];
  for (size_t i = 0; i < groups.size(); ++i) {
    std::snprintf(buf, sizeof buf, "-%05zu-of-%05zu", i + 1, groups.size());
    std::string file = base + buf + ext;
    write_safetensors(fs::join(dir, file), groups[i], metadata);
    for (const auto& kv : groups[i]) weight_map[kv.first] = file;
  }
  json idx = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
  // The index goes last: readers never see it point at a shard not yet written.
  fs::write_file_atomic(fs::join(dir, base + ext + ".index.json"), idx.dump(2) + "\n");
}

}  // namespace ws::io
