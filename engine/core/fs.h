// SPDX-License-Identifier: Apache-2.0
// Small file-system helpers shared by every writer: nothing the user made is lost, so
// files are written under a temporary name, fsynced and renamed into place.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ws::fs {

// Whole file into memory; throws ws::Error naming the path. Only regular files are read: a FIFO,
// socket or device is refused instead of blocking.
std::string read_file(const std::string& path);
// read_file for a JSON document, refused when nested deeper than kMaxJsonDepth (core/json_depth.h).
std::string read_json_text(const std::string& path);
// Opens a regular file for reading (O_CLOEXEC) without blocking on FIFOs; throws ws::Error otherwise.
int open_regular(const std::string& path);
// Throws ws::Error unless `path` is a regular file that can be opened for reading.
void check_regular_file(const std::string& path);
// Write `data` to `path` atomically (tmp file in the same folder, fsync, rename, fsync dir). A
// symlink is written through (the link stays), an existing file keeps its mode; a full disk
// says "disk full".
void write_file_atomic(const std::string& path, std::string_view data);
// Like write_file_atomic, but first keeps the previous version as `path + ".bak"` (itself
// written atomically, so a failure leaves the older backup whole).
void write_file_with_backup(const std::string& path, std::string_view data);
// Creates and opens (O_CREAT|O_EXCL, close-on-exec) a new file `<path>.tmp.<random>` beside `path`
// with `mode`: never a name another user could guess and plant a link at. Sets *tmp; throws ws::Error.
int create_temp_beside(const std::string& path, unsigned mode, std::string* tmp);
// A new private folder `<parent>/<prefix><random>` (mode 0700), made by mkdtemp.
std::string make_temp_dir(const std::string& parent, const std::string& prefix);
void fsync_dir(const std::string& dir);
bool exists(const std::string& path);
bool is_dir(const std::string& path);
uint64_t file_size(const std::string& path);
std::string dirname(const std::string& path);
std::string basename(const std::string& path);
std::string join(const std::string& a, const std::string& b);
std::string absolute(const std::string& path);
void make_dirs(const std::string& path);
// Whether `path` lies inside `dir` once both are made absolute and symlinks resolved (`..` cannot
// climb out). A path equal to `dir` is not inside it.
bool is_inside(const std::string& dir, const std::string& path);

}  // namespace ws::fs
