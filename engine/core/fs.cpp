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

namespace ws::fs {
namespace stdfs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

void write_file_atomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(path + ": write failed (" + std::strerror(e) + ")");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(path + ": write failed (" + std::strerror(errno) + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": rename failed (" + std::strerror(e) + ")");
  }
  fsync_dir(dirname(path));
}

void write_file_with_backup(const std::string& path, std::string_view data) {
  if (exists(path)) {
    std::error_code ec;
    stdfs::copy_file(path, path + ".bak", stdfs::copy_options::overwrite_existing, ec);
    if (ec) throw Error(path + ": cannot keep a backup (" + ec.message() + ")");
  }
  write_file_atomic(path, data);
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

void make_dirs(const std::string& path) {
  std::error_code ec;
  stdfs::create_directories(path, ec);
  if (ec) throw Error(path + ": cannot create folder (" + ec.message() + ")");
}

}  // namespace ws::fs
