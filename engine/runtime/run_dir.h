// SPDX-License-Identifier: Apache-2.0
// The run directory [contract, docs/design/architecture.md "Run directory"]: folders, logging, events.jsonl,
// run.yaml, crash recovery and the checkpoint commit protocol. Rank 0 alone owns one.
//
//   RunDir run(output_dir);              // folders, lock, crash recovery
//   run.setup_logging(); run.open_events();
//   run.write_run_yaml(cfg.to_yaml());
//   CheckpointWriter w = run.begin_checkpoint(step);
//   ... write files into w.dir() ...
//   run.commit_checkpoint(w, total_limit);   // atomic swap-in, `checkpoint` event, then prune
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "contract/best_checkpoint.h"
#include "contract/run_layout.h"

namespace ws::runtime {

class EventStream;

// The checkpoint-name rule is the contract's (contract/run_layout.h).
using contract::checkpoint_name;
using contract::parse_checkpoint_name;

struct Checkpoint {
  int64_t step = 0;
  std::string name;  // run-relative, as in the `checkpoint` event
  std::string path;  // absolute
};

// Complete checkpoints in `dir`, oldest (lowest step) first; empty when `dir` does not exist.
std::vector<Checkpoint> list_checkpoints(const std::string& dir);
std::optional<Checkpoint> latest_checkpoint(const std::string& dir);

// fsync every file and folder under `dir` (and `dir` itself).
void fsync_tree(const std::string& dir);

// Drops a torn last line of a JSON-lines file (a crash mid-write) so appending starts clean;
// a complete last object that only lacks its newline is kept. Returns true when it cut bytes.
bool repair_jsonl_tail(const std::string& path);

// One checkpoint being written into `.checkpoint-<step>.tmp/`. Destroying it uncommitted (an
// exception while writing) removes the temporary folder, so no half checkpoint stays behind.
class CheckpointWriter {
 public:
  CheckpointWriter(CheckpointWriter&& other) noexcept;
  CheckpointWriter& operator=(CheckpointWriter&&) = delete;
  CheckpointWriter(const CheckpointWriter&) = delete;
  ~CheckpointWriter();

  int64_t step() const { return step_; }
  const std::string& dir() const { return dir_; }  // write the checkpoint's files here

 private:
  friend class RunDir;
  CheckpointWriter(std::string dir, int64_t step) : dir_(std::move(dir)), step_(step) {}
  std::string dir_;
  int64_t step_ = 0;
  bool done_ = false;
};

// What start-up recovery did (names relative to the run directory).
struct Recovery {
  std::vector<std::string> removed;   // leftover .checkpoint-*.tmp/ and superseded .old/
  std::vector<std::string> restored;  // .checkpoint-<N>.old/ renamed back to checkpoint-<N>
};

class RunDir {
 public:
  // Creates <output_dir>/ and logs/, takes `<output_dir>/.lock` (a second worker on the same
  // directory would delete this one's temporary checkpoint) and recovers crash leftovers.
  // Throws ws::Error naming the folder.
  explicit RunDir(const std::string& output_dir);
  ~RunDir();
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;

  const std::string& path() const { return path_; }  // absolute
  std::string logs_dir() const;
  std::string file(const std::string& relative) const;
  const Recovery& recovery() const { return recovery_; }

  // spdlog to stderr + logs/engine.log (warnings also as `log` events); logs what recovery did.
  void setup_logging(bool warnings_to_events = true);
  // Appends the event stream to events.jsonl (torn last line repaired first).
  void open_events(EventStream& stream);
  void open_events();  // the global stream
  // run.yaml, written atomically (a crash leaves the old or the new file, never a mix).
  void write_run_yaml(std::string_view yaml);

  std::vector<Checkpoint> checkpoints() const { return list_checkpoints(path_); }
  std::optional<Checkpoint> latest() const { return latest_checkpoint(path_); }
  bool has_checkpoint(int64_t step) const;
  // Whether this worker committed checkpoint-<step>: a folder of that name left by a timeline
  // that a resume from an earlier step discarded does not count.
  bool committed(int64_t step) const { return committed_.count(step) > 0; }

  CheckpointWriter begin_checkpoint(int64_t step);
  // Fsyncs the files, swaps the folder in as checkpoint-<step> (an existing one at the same step
  // is replaced only after the new one is complete), emits the `checkpoint` event when events
  // are open, then deletes the oldest checkpoints beyond `total_limit` (never the new one).
  Checkpoint commit_checkpoint(CheckpointWriter& writer, std::optional<int64_t> total_limit = std::nullopt);

  // keep_best: the checkpoint named in best.json (read when the folder opens). set_best writes
  // best.json atomically (the checkpoint must exist), emits `best`, then prunes as a commit
  // does: the oldest go until `total_limit` are left, except the new one and the best.
  const std::optional<contract::BestCheckpoint>& best() const { return best_; }
  void set_best(const contract::BestCheckpoint& best, std::optional<int64_t> total_limit);
  void clear_best();  // a resume from before the best: that figure belongs to a discarded future
  // Marks checkpoint `step` as kept (contract::kKeptMarker): rotation never removes it and does not
  // count it among the newest N. False when there is no such checkpoint.
  bool keep_checkpoint(int64_t step, const std::string& why);
  bool is_kept(const std::string& checkpoint) const;

 private:
  void recover();
  void remove_checkpoint_dir(const std::string& name);
  void prune(std::optional<int64_t> total_limit, const std::string& keep);
  std::string path_;
  int lock_fd_ = -1;
  Recovery recovery_;
  EventStream* events_ = nullptr;
  std::optional<contract::BestCheckpoint> best_;
  std::set<int64_t> committed_;
};

}  // namespace ws::runtime
