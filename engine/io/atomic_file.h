// SPDX-License-Identifier: Apache-2.0
// A file written in pieces and published atomically: bytes go to a temporary name in the
// same folder, then fsync + rename + fsync(dir) on commit(). Destroyed without commit(),
// the temporary is removed and the old file (if any) is untouched. Unlike
// ws::fs::write_file_atomic it never needs the whole content in memory (multi-GB shards).
#pragma once
#include <cstddef>
#include <string>

namespace ws::io {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws ws::Error naming the path
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
};

}  // namespace ws::io
