// SPDX-License-Identifier: Apache-2.0
// TensorBoard scalar logs: `events.out.tfevents.<time>.<host>` files in TFRecord framing
// with hand-encoded `Event` protobufs, so the engine needs neither TensorFlow nor protobuf.
// Record: u64 length, masked CRC-32C of the length, data, masked CRC-32C of the data.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ws::io {

// CRC-32C (Castagnoli), extending `crc` (0 to start).
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
// TFRecord's mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t mask_crc(uint32_t crc);
inline uint32_t masked_crc32c(std::string_view s) { return mask_crc(crc32c(s.data(), s.size())); }
// One framed TFRecord holding `data`.
std::string tfrecord_frame(std::string_view data);

// Serialised tensorflow.Event messages.
std::string encode_file_version_event(double wall_time, const std::string& version = "brain.Event:2");
std::string encode_scalars_event(double wall_time, int64_t step,
                                 const std::vector<std::pair<std::string, float>>& scalars);

// Appends scalars to a new events file in `dir`; every record is flushed as written, so a
// crash loses at most the record being written (readers skip a torn tail).
class TfEventsWriter {
 public:
  // Creates `dir` if needed and a new file (never appends to an existing one); throws ws::Error.
  explicit TfEventsWriter(const std::string& dir);
  ~TfEventsWriter();
  TfEventsWriter(const TfEventsWriter&) = delete;
  TfEventsWriter& operator=(const TfEventsWriter&) = delete;

  // wall_time < 0 means now.
  void add_scalar(const std::string& tag, float value, int64_t step, double wall_time = -1);
  // Several tags of one step in one Event, as TensorBoard's own writers do.
  void add_scalars(const std::vector<std::pair<std::string, float>>& scalars, int64_t step, double wall_time = -1);
  void close();
  const std::string& path() const { return path_; }

 private:
  void write_record(const std::string& data);
  std::string path_;
  std::FILE* file_ = nullptr;
};

struct TfScalar {
  double wall_time = 0;
  int64_t step = 0;
  std::string tag;
  float value = 0;
};

struct TfEventsContents {
  std::string file_version;  // from the first record, "" when absent
  std::vector<TfScalar> scalars;
  size_t records = 0;          // records whose CRCs verified
  size_t corrupt_records = 0;  // data CRC mismatch or unparsable protobuf: skipped
  bool torn_tail = false;      // the file ends inside a record (crash while writing)
  bool bad_length = false;     // a length CRC mismatch: nothing after it can be trusted
  std::string problem;         // first problem, human-readable; "" for a clean file
};

// Parses an events file; damage is reported in the result, never thrown. Throws ws::Error
// only when the file cannot be opened.
TfEventsContents read_tfevents(const std::string& path);

}  // namespace ws::io
