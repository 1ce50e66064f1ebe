// SPDX-License-Identifier: Apache-2.0
#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/fs.h"

namespace ws::io {

void* map_file(const std::string& path, size_t* size) {
  int fd = fs::open_regular(path);  // a FIFO or device is refused, never waited on
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw Error(path + ": cannot stat (" + std::strerror(e) + ")");
  }
  *size = static_cast<size_t>(st.st_size);
  if (*size == 0) {
    ::close(fd);
    return nullptr;
  }
  // NORESERVE: a multi-GB shard must not count against the commit limit up front.
  void* m = ::mmap(nullptr, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
  if (m == MAP_FAILED) m = ::mmap(nullptr, *size, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  ::close(fd);
  if (m == MAP_FAILED) throw Error(path + ": cannot map (" + std::strerror(e) + ")");
  return m;
}

void unmap_file(void* map, size_t size) {
  if (map) ::munmap(map, size);
}

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->map_ = map_file(path, &f->size_);
  return f;
}

MappedFile::~MappedFile() { unmap_file(map_, size_); }

}  // namespace ws::io
