// SPDX-License-Identifier: Apache-2.0
// Reads zip archives as torch.save writes them (entries STORED, optionally zip64) straight
// from a mapping of the file: an entry's bytes are a pointer into the mapping, so a
// multi-GB checkpoint is never copied. Any inconsistency is a ws::Error naming the file.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/mapped_file.h"

namespace ws::io {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 = STORED
  uint64_t offset = 0;  // of the entry's data in the file
  uint64_t size = 0;    // compressed (stored) size
};

class ZipReader {
 public:
  explicit ZipReader(const std::string& path);

  const std::string& path() const { return file_->path(); }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(const std::string& name) const;
  // The entry's bytes inside the mapping; throws for compressed entries.
  const uint8_t* data(const ZipEntry& e) const;
  const std::shared_ptr<MappedFile>& file() const { return file_; }

 private:
  std::shared_ptr<MappedFile> file_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t> index_;
};

}  // namespace ws::io
