// SPDX-License-Identifier: Apache-2.0
// A whole file mapped into memory, shared by the tensors that view it. Pages are mapped
// private and writable (copy-on-write), so an in-place op on a loaded tensor changes
// only this process's copy and never crashes on a read-only page.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ws::io {

class MappedFile {
 public:
  // Throws ws::Error naming the path. A zero-byte file maps to size() == 0.
  static std::shared_ptr<MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  uint8_t* data() const { return static_cast<uint8_t*>(map_); }
  size_t size() const { return size_; }

 private:
  MappedFile() = default;
  std::string path_;
  void* map_ = nullptr;
  size_t size_ = 0;
};

// Maps `path` (nullptr for an empty file); the caller unmaps with unmap_file.
void* map_file(const std::string& path, size_t* size);
void unmap_file(void* map, size_t size);

}  // namespace ws::io
