// SPDX-License-Identifier: Apache-2.0
#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/fs.h"

namespace ws::io {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) { fd_ = fs::create_temp_beside(path_, 0644, &tmp_); }

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    // Linux writes at most ~2 GiB per call; loop for the rest.
    ssize_t n = ::write(fd_, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path_ + ": write failed (" + std::strerror(errno) + ")");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) throw Error(path_ + ": write failed (" + std::strerror(errno) + ")");
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    int e = errno;
    ::unlink(tmp_.c_str());
    throw Error(path_ + ": write failed (" + std::strerror(e) + ")");
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp_.c_str());
    throw Error(path_ + ": rename failed (" + std::strerror(e) + ")");
  }
  fs::fsync_dir(fs::dirname(path_));
}

}  // namespace ws::io
