// SPDX-License-Identifier: Apache-2.0
#include "core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/json_depth.h"

namespace ws::fs {
namespace stdfs = std::filesystem;

namespace {

// "disk full" reads better than "No space left on device" in a one-line error.
std::string errno_text(int e) {
  if (e == ENOSPC || e == EDQUOT) return "disk full";
  return std::strerror(e);
}

}  // namespace

int open_regular(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    throw Error(path + ": cannot stat (" + std::strerror(e) + ")");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(
        path + (S_ISDIR(st.st_mode) ? ": is a folder, not a file" : ": not a regular file (a pipe, socket or device)"));
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

void check_regular_file(const std::string& path) { ::close(open_regular(path)); }

std::string read_file(const std::string& path) {
  int fd = open_regular(path);
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      throw Error(path + ": read failed (" + std::strerror(e) + ")");
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string read_json_text(const std::string& path) {
  std::string text = read_file(path);
  check_json_nesting(text, path);
  return text;
}

int create_temp_beside(const std::string& path, unsigned mode, std::string* tmp) {
  std::string name = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot write (" + errno_text(errno) + ")");
  ::fchmod(fd, static_cast<mode_t>(mode));  // mkostemp makes 0600; the umask must not decide either
  *tmp = name;
  return fd;
}

std::string make_temp_dir(const std::string& parent, const std::string& prefix) {
  std::string name = join(parent, prefix + "XXXXXX");
  if (!::mkdtemp(name.data())) throw Error(parent + ": cannot make a scratch folder (" + errno_text(errno) + ")");
  return name;
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

namespace {

// Writes `data` into a temporary file beside `target` with `mode`, fsyncs and renames it over
// `target`. `shown` is the name errors use.
void replace_file(const std::string& target, std::string_view data, mode_t mode, const std::string& shown) {
  std::string tmp;
  int fd = -1;
  try {
    fd = create_temp_beside(target, mode, &tmp);  // the mode the user had, whatever the umask
  } catch (const Error&) {
    throw Error(shown + ": cannot write (" + errno_text(errno) + ")");
  }
  auto fail = [&](int e, const char* what) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(shown + ": " + what + " (" + errno_text(e) + ")");
  };
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno, "write failed");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno, "write failed");
  if (::close(fd) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(shown + ": write failed (" + errno_text(e) + ")");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(shown + ": rename failed (" + errno_text(e) + ")");
  }
  fsync_dir(dirname(target));
}

// A symlinked file is written through its link, so the link stays a link.
std::string write_target(const std::string& path) {
  std::error_code ec;
  if (!stdfs::is_symlink(path, ec)) return path;
  auto real = stdfs::canonical(path, ec);
  return ec ? path : real.string();
}

mode_t existing_mode(const std::string& path, mode_t fallback) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return st.st_mode & 07777;
  return fallback;
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view data) {
  const std::string target = write_target(path);
  replace_file(target, data, existing_mode(target, 0644), path);
}

void write_file_with_backup(const std::string& path, std::string_view data) {
  const std::string target = write_target(path);
  const mode_t mode = existing_mode(target, 0644);
  if (exists(target)) {
    // The backup goes in under a temporary name too: a full disk leaves the old .bak whole.
    std::string old = read_file(target);
    replace_file(target + ".bak", old, mode, path + ".bak");
  }
  replace_file(target, data, mode, path);
}

bool exists(const std::string& path) {
  std::error_code ec;
  return stdfs::exists(path, ec);
}

bool is_dir(const std::string& path) {
  std::error_code ec;
  return stdfs::is_directory(path, ec);
}

uint64_t file_size(const std::string& path) {
  std::error_code ec;
  auto n = stdfs::file_size(path, ec);
  if (ec) throw Error(path + ": " + ec.message());
  return n;
}

std::string dirname(const std::string& path) {
  auto p = stdfs::path(path).parent_path().string();
  return p.empty() ? "." : p;
}

std::string basename(const std::string& path) { return stdfs::path(path).filename().string(); }

std::string join(const std::string& a, const std::string& b) { return (stdfs::path(a) / b).string(); }

std::string absolute(const std::string& path) {
  std::error_code ec;
  auto p = stdfs::absolute(path, ec);
  return (ec ? stdfs::path(path) : p).lexically_normal().string();
}

bool is_inside(const std::string& dir, const std::string& path) {
  std::error_code ec;
  const auto d = stdfs::weakly_canonical(stdfs::absolute(dir, ec), ec);
  if (ec) return false;
  const auto p = stdfs::weakly_canonical(stdfs::absolute(path, ec), ec);
  if (ec) return false;
  auto di = d.begin(), pi = p.begin();
  for (; di != d.end(); ++di, ++pi) {
    if (di->empty()) continue;  // a trailing separator
    if (pi == p.end() || *di != *pi) return false;
  }
  return pi != p.end();
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  stdfs::create_directories(path, ec);
  if (ec) throw Error(path + ": cannot create folder (" + ec.message() + ")");
}

}  // namespace ws::fs
