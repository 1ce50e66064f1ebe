// Small file-system helpers shared by every writer: nothing the user made is lost, so
// files are written under a temporary name, fsynced and renamed into place.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ws::fs {

// Whole file into memory; throws ws::Error naming the path.
std::string read_file(const std::string& path);
// Write `data` to `path` atomically (tmp file in the same folder, fsync, rename, fsync dir).
void write_file_atomic(const std::string& path, std::string_view data);
// Like write_file_atomic, but first keeps the previous version as `path + ".bak"`.
void write_file_with_backup(const std::string& path, std::string_view data);
void fsync_dir(const std::string& dir);
bool exists(const std::string& path);
bool is_dir(const std::string& path);
uint64_t file_size(const std::string& path);
std::string dirname(const std::string& path);
std::string basename(const std::string& path);
std::string join(const std::string& a, const std::string& b);
std::string absolute(const std::string& path);
void make_dirs(const std::string& path);

}  // namespace ws::fs
