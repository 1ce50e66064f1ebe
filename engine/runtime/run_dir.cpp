// SPDX-License-Identifier: Apache-2.0
#include "runtime/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "contract/run_layout.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "runtime/events.h"
#include "runtime/logging.h"

namespace ws::runtime {
namespace stdfs = std::filesystem;

namespace {

void rename_or_throw(const std::string& from, const std::string& to) {
  std::error_code ec;
  stdfs::rename(from, to, ec);
  if (ec) throw Error(from + ": cannot rename to " + fs::basename(to) + " (" + ec.message() + ")");
}

void remove_or_throw(const std::string& path) {
  std::error_code ec;
  stdfs::remove_all(path, ec);
  if (ec) throw Error(path + ": cannot delete (" + ec.message() + ")");
}

// ".checkpoint-<digits><suffix>" -> step
bool parse_hidden(std::string_view name, std::string_view suffix, int64_t* step) {
  auto n = contract::parse_hidden_checkpoint_name(name, suffix);
  if (n) *step = *n;
  return n.has_value();
}

}  // namespace

std::vector<Checkpoint> list_checkpoints(const std::string& dir) {
  std::vector<Checkpoint> out;
  std::error_code ec;
  for (stdfs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    int64_t step = 0;
    std::error_code ec2;
    if (parse_checkpoint_name(name, &step) && it->is_directory(ec2))
      out.push_back({step, name, fs::absolute(it->path().string())});
  }
  std::sort(out.begin(), out.end(), [](const Checkpoint& a, const Checkpoint& b) {
    return a.step != b.step ? a.step < b.step : a.name < b.name;
  });
  return out;
}

std::optional<Checkpoint> latest_checkpoint(const std::string& dir) {
  auto all = list_checkpoints(dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

void fsync_tree(const std::string& dir) {
  std::error_code ec;
  for (stdfs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (it->is_symlink(ec2)) continue;
    if (it->is_directory(ec2)) {
      fs::fsync_dir(it->path().string());
    } else if (it->is_regular_file(ec2)) {
      int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw Error(it->path().string() + ": cannot open to sync (" + std::strerror(errno) + ")");
      int rc = ::fsync(fd);
      int e = errno;
      ::close(fd);
      if (rc != 0) throw Error(it->path().string() + ": fsync failed (" + std::strerror(e) + ")");
    }
  }
  if (ec) throw Error(dir + ": cannot list (" + ec.message() + ")");
  fs::fsync_dir(dir);
}

bool repair_jsonl_tail(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;  // no file yet: nothing to repair
  off_t size = ::lseek(fd, 0, SEEK_END);
  // Scan back for the last newline; lines are short, so this reads little.
  off_t line_start = 0;
  char buf[65536];
  for (off_t end = size; end > 0;) {
    off_t begin = std::max<off_t>(0, end - static_cast<off_t>(sizeof(buf)));
    ssize_t n = ::pread(fd, buf, static_cast<size_t>(end - begin), begin);
    if (n != end - begin) break;
    const char* nl = static_cast<const char*>(memrchr(buf, '\n', static_cast<size_t>(n)));
    if (nl) {
      line_start = begin + (nl - buf) + 1;
      break;
    }
    end = begin;
  }
  bool cut = false;
  if (line_start < size) {
    std::string tail(static_cast<size_t>(size - line_start), '\0');
    if (::pread(fd, tail.data(), tail.size(), line_start) == static_cast<ssize_t>(tail.size()) &&
        !nlohmann::json::accept(tail)) {
      cut = ::ftruncate(fd, line_start) == 0;
    }
  }
  ::close(fd);
  return cut;
}

CheckpointWriter::CheckpointWriter(CheckpointWriter&& other) noexcept
    : dir_(std::move(other.dir_)), step_(other.step_), done_(other.done_) {
  other.done_ = true;
}

CheckpointWriter::~CheckpointWriter() {
  if (done_ || dir_.empty()) return;
  std::error_code ec;
  stdfs::remove_all(dir_, ec);
}

RunDir::RunDir(const std::string& output_dir) : path_(fs::absolute(output_dir)) {
  if (output_dir.empty()) throw Error("output_dir is empty");
  fs::make_dirs(path_);
  fs::make_dirs(logs_dir());
  std::string lock = file(contract::kLockFile);
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw Error(path_ + ": cannot write in the run folder (" + std::strerror(errno) + ")");
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    ssize_t n = ::pread(lock_fd_, pid, sizeof(pid) - 1, 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    std::string who = n > 0 ? " (pid " + std::string(pid, static_cast<size_t>(n)) + ")" : "";
    throw Error(path_ + ": another worker is running in this folder" + who);
  }
  std::string pid = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) == 0) (void)!::pwrite(lock_fd_, pid.data(), pid.size(), 0);
  recover();
}

RunDir::~RunDir() {
  // Events stop going to the file with the lock: another worker may own the folder next.
  if (events_) events_->close_file();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string RunDir::logs_dir() const { return file(contract::kLogsDir); }
std::string RunDir::file(const std::string& relative) const { return fs::join(path_, relative); }

void RunDir::recover() {
  std::vector<std::string> names;
  std::error_code ec;
  for (stdfs::directory_iterator it(path_, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) throw Error(path_ + ": cannot list (" + ec.message() + ")");
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    int64_t step = 0;
    if (name.rfind(".checkpoint-", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      // A checkpoint (or a pruned one) that was never completed.
      remove_or_throw(file(name));
      recovery_.removed.push_back(name);
    } else if (parse_hidden(name, ".old", &step)) {
      std::string target = checkpoint_name(step);
      if (fs::exists(file(target))) {
        // The replacement was committed; only deleting the old one was left.
        remove_or_throw(file(name));
        recovery_.removed.push_back(name);
      } else {
        rename_or_throw(file(name), file(target));
        recovery_.restored.push_back(name);
      }
    }
  }
  if (!recovery_.removed.empty() || !recovery_.restored.empty()) fs::fsync_dir(path_);
}

void RunDir::setup_logging(bool warnings_to_events) {
  LogOptions o;
  o.file = file(contract::kEngineLog);
  o.to_events = warnings_to_events;
  ws::runtime::setup_logging(o);
  for (const auto& n : recovery_.removed) ws::log::info("removed {} left by an interrupted run", n);
  for (const auto& n : recovery_.restored)
    ws::log::warn("restored {} from {} (a checkpoint save was interrupted)", n.substr(1, n.size() - 5), n);
}

void RunDir::open_events(EventStream& stream) {
  std::string path = file(contract::kEventsFile);
  repair_jsonl_tail(path);
  stream.open_file(path);
  events_ = &stream;
}

void RunDir::open_events() { open_events(EventStream::global()); }

void RunDir::write_run_yaml(std::string_view yaml) { fs::write_file_atomic(file(contract::kRunYaml), yaml); }

bool RunDir::has_checkpoint(int64_t step) const { return fs::is_dir(file(checkpoint_name(step))); }

CheckpointWriter RunDir::begin_checkpoint(int64_t step) {
  if (step < 0) throw Error("checkpoint step " + std::to_string(step) + " is negative");
  std::string tmp = file(contract::checkpoint_temp_name(step));
  remove_or_throw(tmp);  // an earlier failed attempt at this step
  fs::make_dirs(tmp);
  return CheckpointWriter(tmp, step);
}

void RunDir::remove_checkpoint_dir(const std::string& name) {
  int64_t step = 0;
  parse_checkpoint_name(name, &step);
  // Renamed first: a crash during the delete must not leave a partial folder that still
  // looks like a checkpoint. Recovery deletes the .tmp name.
  std::string doomed = file(contract::checkpoint_temp_name(step));
  remove_or_throw(doomed);
  rename_or_throw(file(name), doomed);
  fs::fsync_dir(path_);
  remove_or_throw(doomed);
}

Checkpoint RunDir::commit_checkpoint(CheckpointWriter& w, std::optional<int64_t> total_limit) {
  if (w.done_) throw Error("checkpoint " + std::to_string(w.step_) + " was already committed");
  const std::string name = checkpoint_name(w.step_);
  const std::string final_dir = file(name);
  const std::string old = file(contract::checkpoint_old_name(w.step_));
  fsync_tree(w.dir_);
  remove_or_throw(old);
  bool replaced = false;
  // A kept checkpoint written again at its step (the final save, say) stays kept.
  const bool was_kept = fs::exists(fs::join(final_dir, contract::kKeptMarker));
  if (was_kept && !fs::exists(fs::join(w.dir_, contract::kKeptMarker)))
    fs::write_file_atomic(fs::join(w.dir_, contract::kKeptMarker), "kept before it was written again\n");
  if (fs::exists(final_dir)) {
    rename_or_throw(final_dir, old);
    replaced = true;
  }
  try {
    rename_or_throw(w.dir_, final_dir);
  } catch (...) {
    if (replaced) {
      std::error_code ec;
      stdfs::rename(old, final_dir, ec);
    }
    throw;
  }
  w.done_ = true;
  committed_.insert(w.step_);
  fs::fsync_dir(path_);
  if (replaced) {
    remove_or_throw(old);
    fs::fsync_dir(path_);
  }
  if (events_) events_->emit(contract::CheckpointEvent{w.step_, name});
  ws::log::info("saved {}", name);

  prune(total_limit, name);
  return {w.step_, name, final_dir};
}

void RunDir::prune(std::optional<int64_t> total_limit, const std::string& keep) {
  if (!total_limit) return;
  const auto limit = static_cast<size_t>(std::max<int64_t>(*total_limit, 1));
  // Oldest first until `limit` are left, never the one just written nor the best one
  // (keep_best), which may so stay beside the others. Kept checkpoints (Save Now) are neither
  // removed nor counted.
  auto all = checkpoints();
  size_t count = 0;
  for (const auto& c : all) count += !is_kept(c.name);
  for (const auto& c : all) {
    if (count <= limit) break;
    if (is_kept(c.name)) continue;
    if (c.name == keep || (best_ && c.step == best_->step)) continue;
    remove_checkpoint_dir(c.name);
    ws::log::info("removed {} (checkpoints_total_limit {})", c.name, *total_limit);
    --count;
  }
}

bool RunDir::keep_checkpoint(int64_t step, const std::string& why) {
  if (!has_checkpoint(step)) return false;
  const std::string name = checkpoint_name(step);
  fs::write_file_atomic(fs::join(file(name), contract::kKeptMarker), why + "\n");
  ws::log::info("{} is kept: checkpoints_total_limit never removes it ({})", name, why);
  return true;
}

bool RunDir::is_kept(const std::string& checkpoint) const {
  return fs::exists(fs::join(file(checkpoint), contract::kKeptMarker));
}

void RunDir::clear_best() {
  best_.reset();
  std::error_code ec;
  stdfs::remove(file(contract::kBestFile), ec);
}

void RunDir::set_best(const contract::BestCheckpoint& best, std::optional<int64_t> total_limit) {
  if (!has_checkpoint(best.step)) throw Error("best checkpoint " + best.path + " does not exist");
  fs::write_file_atomic(file(contract::kBestFile), best.to_json().dump(2) + "\n");
  best_ = best;
  if (events_) {
    nlohmann::json f = best.to_json();
    f.erase("higher_is_better");
    events_->emit("best", f);
  }
  ws::log::info("best so far: {} ({} {:.6g})", best.path, best.metric, best.value);
  prune(total_limit, best.path);  // the previous best may now be beyond the last N
}

}  // namespace ws::runtime
