// SPDX-License-Identifier: Apache-2.0
#include "io/zip_reader.h"

#include <algorithm>

#include "core/error.h"
#include "io/printable.h"

namespace ws::io {
namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;

uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

ZipReader::ZipReader(const std::string& path) : file_(MappedFile::open(path)) {
  const uint8_t* d = file_->data();
  const uint64_t size = file_->size();
  auto bad = [&](const std::string& what) { return Error(path + ": " + what); };
  if (size < 22) throw bad("not a zip archive (" + std::to_string(size) + " bytes)");

  // The end record sits in the last 22 + 65535 (comment) bytes; search backwards.
  uint64_t end = UINT64_MAX;
  uint64_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
  for (uint64_t p = size - 22 + 1; p-- > lowest;) {
    if (le(d + p, 4) == kEndSig) {
      end = p;
      break;
    }
  }
  if (end == UINT64_MAX)
    throw bad(le(d, 4) == kLocalSig ? "zip archive is truncated (no end-of-central-directory record)"
                                    : "not a zip archive (a torch.save checkpoint is one)");
  uint64_t count = le(d + end + 10, 2), cd_size = le(d + end + 12, 4), cd_off = le(d + end + 16, 4);
  if (count == 0xffff || cd_size == 0xffffffff || cd_off == 0xffffffff) {
    if (end < 20 || le(d + end - 20, 4) != kZip64LocatorSig) throw bad("zip64 locator missing");
    uint64_t z = le(d + end - 20 + 8, 8);
    if (size < 56 || z > size - 56 || le(d + z, 4) != kZip64EndSig) throw bad("zip64 end record out of range");
    count = le(d + z + 32, 8);
    cd_size = le(d + z + 40, 8);
    cd_off = le(d + z + 48, 8);
  }
  if (cd_off > size || cd_size > size - cd_off) throw bad("central directory out of range (truncated?)");

  uint64_t p = cd_off;
  const uint64_t cd_end = cd_off + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (p + 46 > cd_end || le(d + p, 4) != kCentralSig)
      throw bad("corrupt central directory (entry " + std::to_string(i) + ")");
    ZipEntry e;
    uint64_t flags = le(d + p + 8, 2);
    e.method = static_cast<uint16_t>(le(d + p + 10, 2));
    e.size = le(d + p + 20, 4);
    uint64_t usize = le(d + p + 24, 4);
    uint64_t name_len = le(d + p + 28, 2), extra_len = le(d + p + 30, 2), comment_len = le(d + p + 32, 2);
    uint64_t local = le(d + p + 42, 4);
    if (p + 46 + name_len + extra_len + comment_len > cd_end)
      throw bad("corrupt central directory (entry " + std::to_string(i) + ")");
    e.name.assign(reinterpret_cast<const char*>(d + p + 46), name_len);
    // zip64 sizes and offset live in extra field 0x0001, only for the fields that overflowed.
    for (uint64_t x = p + 46 + name_len, xe = x + extra_len; x + 4 <= xe;) {
      uint64_t id = le(d + x, 2), len = le(d + x + 2, 2);
      if (x + 4 + len > xe) break;
      if (id == 1) {
        uint64_t q = x + 4, qe = q + len;
        auto next = [&](uint64_t& v) {
          if (q + 8 > qe) throw bad("corrupt zip64 field in '" + printable(e.name) + "'");
          v = le(d + q, 8);
          q += 8;
        };
        if (usize == 0xffffffff) next(usize);
        if (e.size == 0xffffffff) next(e.size);
        if (local == 0xffffffff) next(local);
      }
      x += 4 + len;
    }
    if (flags & 1) throw bad("entry '" + printable(e.name) + "' is encrypted");
    if (local > size - 30 || le(d + local, 4) != kLocalSig)
      throw bad("entry '" + printable(e.name) + "' has no local header (truncated?)");
    e.offset = local + 30 + le(d + local + 26, 2) + le(d + local + 28, 2);
    if (e.offset > size || e.size > size - e.offset)
      throw bad("entry '" + printable(e.name) + "' runs past the end of the file (truncated?)");
    if (e.method == 0 && e.size != usize) throw bad("entry '" + printable(e.name) + "' has inconsistent sizes");
    if (!index_.emplace(e.name, entries_.size()).second) throw bad("duplicate entry '" + printable(e.name) + "'");
    entries_.push_back(std::move(e));
    p += 46 + name_len + extra_len + comment_len;
  }
}

const ZipEntry* ZipReader::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const uint8_t* ZipReader::data(const ZipEntry& e) const {
  if (e.method != 0)
    throw Error(path() + ": entry '" + printable(e.name) + "' is compressed (method " + std::to_string(e.method) +
                "); torch.save writes stored entries only");
  return file_->data() + e.offset;
}

}  // namespace ws::io
