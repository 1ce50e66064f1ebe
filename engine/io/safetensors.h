// SPDX-License-Identifier: Apache-2.0
// safetensors: read through mmap without copying, write with sorted keys and
// `__metadata__`, sharded `*.safetensors.index.json`. A header that lies is an error.
#pragma once
#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/state_dict.h"

namespace ws::io {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;  // F32, F16, BF16, I64, I32, U8, BOOL
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte span relative to the data section
};

class SafetensorsFile {
 public:
  // Maps the file and validates the whole header; throws ws::Error naming the path.
  static std::shared_ptr<SafetensorsFile> open(const std::string& path);
  ~SafetensorsFile();

  const std::string& path() const { return path_; }
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const;
  // A tensor viewing the mapped bytes (kept alive by the tensor); read-only in spirit.
  torch::Tensor tensor(const std::string& name) const;
  StateDict all() const;

 private:
  SafetensorsFile() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  size_t data_offset_ = 0;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
  std::weak_ptr<SafetensorsFile> self_;
};

// Whole file as a state dict (zero-copy views).
StateDict read_safetensors(const std::string& path);
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

// Writes atomically (tmp + fsync + rename). Tensors are made contiguous on the CPU.
void write_safetensors(const std::string& path, const StateDict& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// `*.safetensors.index.json` (weight_map: name -> shard file): all shards merged.
StateDict read_sharded_safetensors(const std::string& index_path);
// The path of shard `file` named by `index_path`'s weight_map: a bare file name beside the
// index, else ws::Error (no `../`, no absolute paths). Every shard reader goes through it.
std::string shard_path(const std::string& index_path, const std::string& file);
// Splits into shards of at most `max_shard_bytes` and writes the index beside them.
void write_sharded_safetensors(const std::string& dir, const std::string& base_name, const StateDict& tensors,
                               uint64_t max_shard_bytes, const std::map<std::string, std::string>& metadata = {});

}  // namespace ws::io
