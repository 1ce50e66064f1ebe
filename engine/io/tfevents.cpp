// SPDX-License-Identifier: Apache-2.0
#include "io/tfevents.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/fs.h"

namespace ws::io {
namespace {

// Reflected table for the Castagnoli polynomial 0x1EDC6F41 (reversed 0x82F63B78).
const std::array<uint32_t, 256>& crc_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

// Protobuf wire encoding, little-endian regardless of the host.
void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void put_fixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_tag(std::string& out, int field, int wire) { put_varint(out, (static_cast<uint64_t>(field) << 3) | wire); }
void put_bytes(std::string& out, int field, std::string_view s) {
  put_tag(out, field, 2);
  put_varint(out, s.size());
  out.append(s.data(), s.size());
}
void put_double(std::string& out, int field, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  put_tag(out, field, 1);
  put_fixed(out, bits, 8);
}
void put_float(std::string& out, int field, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  put_tag(out, field, 5);
  put_fixed(out, bits, 4);
}

uint64_t get_le(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

// Minimal protobuf reader: one field at a time; false on malformed input.
struct PbReader {
  explicit PbReader(std::string_view data) : s(data) {}
  std::string_view s;
  size_t pos = 0;
  int field = 0, wire = 0;
  uint64_t num = 0;        // varint / fixed value
  std::string_view bytes;  // length-delimited value

  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= s.size()) return false;
      auto b = static_cast<unsigned char>(s[pos++]);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  // Reads the next field; returns false at the end or on malformed data (`bad` says which).
  bool next(bool& bad) {
    bad = false;
    if (pos >= s.size()) return false;
    uint64_t tag;
    if (!varint(tag)) return bad = true, false;
    field = static_cast<int>(tag >> 3);
    wire = static_cast<int>(tag & 7);
    switch (wire) {
      case 0:
        if (!varint(num)) return bad = true, false;
        return true;
      case 1:
      case 5: {
        int n = wire == 1 ? 8 : 4;
        if (s.size() - pos < static_cast<size_t>(n)) return bad = true, false;
        num = get_le(s.data() + pos, n);
        pos += n;
        return true;
      }
      case 2: {
        uint64_t len;
        if (!varint(len) || len > s.size() - pos) return bad = true, false;
        bytes = s.substr(pos, len);
        pos += len;
        return true;
      }
      default:  // groups (3, 4) are never written by TensorBoard
        return bad = true, false;
    }
  }
};

float float_bits(uint64_t bits32) {
  auto bits = static_cast<uint32_t>(bits32);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// TensorFlow 2 writes scalars as a rank-0 DT_FLOAT TensorProto (Value field 8) instead of
// simple_value; read those too so files from other writers load.
bool parse_scalar_tensor(std::string_view data, float& out) {
  PbReader r(data);
  bool bad = false, is_float = false, found = false;
  while (r.next(bad)) {
    if (r.field == 1 && r.wire == 0) is_float = r.num == 1;  // DT_FLOAT
    else if (r.field == 4 && r.wire == 2 && r.bytes.size() == 4)
      out = float_bits(get_le(r.bytes.data(), 4)), found = true;
    else if (r.field == 5 && r.wire == 5) out = float_bits(r.num), found = true;
    else if (r.field == 5 && r.wire == 2 && r.bytes.size() == 4)
      out = float_bits(get_le(r.bytes.data(), 4)), found = true;
  }
  return !bad && is_float && found;
}

bool parse_value(std::string_view data, TfScalar& out, bool& is_scalar) {
  PbReader r(data);
  bool bad = false;
  is_scalar = false;
  while (r.next(bad)) {
    if (r.field == 1 && r.wire == 2) {
      out.tag = std::string(r.bytes);
    } else if (r.field == 2 && r.wire == 5) {
      out.value = float_bits(r.num);
      is_scalar = true;
    } else if (r.field == 8 && r.wire == 2 && !is_scalar) {
      is_scalar = parse_scalar_tensor(r.bytes, out.value);
    }
  }
  return !bad;
}

// Parses one Event; scalars are appended. False when the protobuf is malformed.
bool parse_event(std::string_view data, TfEventsContents& c, bool first) {
  PbReader r(data);
  bool bad = false;
  double wall = 0;
  int64_t step = 0;
  std::vector<std::string_view> summaries;
  while (r.next(bad)) {
    if (r.field == 1 && r.wire == 1) std::memcpy(&wall, &r.num, 8);
    else if (r.field == 2 && r.wire == 0) step = static_cast<int64_t>(r.num);
    else if (r.field == 3 && r.wire == 2 && first) c.file_version = std::string(r.bytes);
    else if (r.field == 5 && r.wire == 2) summaries.push_back(r.bytes);
  }
  if (bad) return false;
  std::vector<TfScalar> found;
  for (auto summary : summaries) {
    PbReader s(summary);
    while (s.next(bad)) {
      if (s.field != 1 || s.wire != 2) continue;
      TfScalar v;
      bool is_scalar = false;
      if (!parse_value(s.bytes, v, is_scalar)) return false;
      if (!is_scalar) continue;  // images, histograms, other tensors
      v.wall_time = wall;
      v.step = step;
      found.push_back(std::move(v));
    }
    if (bad) return false;
  }
  c.scalars.insert(c.scalars.end(), found.begin(), found.end());
  return true;
}

double now() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count() / 1e6;
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || !buf[0]) return "localhost";
  std::string h = buf;
  for (char& ch : h)
    if (ch == '/') ch = '_';
  return h;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  const auto& t = crc_table();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = t[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::string tfrecord_frame(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_fixed(out, data.size(), 8);
  put_fixed(out, masked_crc32c(out), 4);
  out.append(data.data(), data.size());
  put_fixed(out, masked_crc32c(data), 4);
  return out;
}

std::string encode_file_version_event(double wall_time, const std::string& version) {
  std::string ev;
  put_double(ev, 1, wall_time);
  put_bytes(ev, 3, version);
  return ev;
}

std::string encode_scalars_event(double wall_time, int64_t step,
                                 const std::vector<std::pair<std::string, float>>& scalars) {
  std::string summary;
  for (const auto& [tag, value] : scalars) {
    std::string v;
    put_bytes(v, 1, tag);
    put_float(v, 2, value);
    put_bytes(summary, 1, v);
  }
  std::string ev;
  put_double(ev, 1, wall_time);
  put_tag(ev, 2, 0);
  put_varint(ev, static_cast<uint64_t>(step));
  put_bytes(ev, 5, summary);
  return ev;
}

TfEventsWriter::TfEventsWriter(const std::string& dir) {
  fs::make_dirs(dir);
  double t = now();
  std::string base = fs::join(dir, "events.out.tfevents." + std::to_string(static_cast<int64_t>(t)) + "." + hostname());
  // A new file per start, even for two starts within one second: never append to another's file.
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    path_ = attempt == 0 ? base : base + "." + std::to_string(::getpid()) + "." + std::to_string(attempt);
    fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) throw Error(path_ + ": cannot create TensorBoard log (" + std::strerror(errno) + ")");
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    throw Error(path_ + ": cannot create TensorBoard log");
  }
  write_record(encode_file_version_event(t));
}

TfEventsWriter::~TfEventsWriter() { close(); }

void TfEventsWriter::close() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

void TfEventsWriter::write_record(const std::string& data) {
  if (!file_) return;
  std::string rec = tfrecord_frame(data);
  // A failed write (disk full) must not stop training: the scalars are also in events.jsonl.
  std::fwrite(rec.data(), 1, rec.size(), file_);
  std::fflush(file_);
}

void TfEventsWriter::add_scalar(const std::string& tag, float value, int64_t step, double wall_time) {
  add_scalars({{tag, value}}, step, wall_time);
}

void TfEventsWriter::add_scalars(const std::vector<std::pair<std::string, float>>& scalars, int64_t step,
                                 double wall_time) {
  if (scalars.empty()) return;
  write_record(encode_scalars_event(wall_time < 0 ? now() : wall_time, step, scalars));
}

TfEventsContents read_tfevents(const std::string& path) {
  const std::string buf = fs::read_file(path);
  TfEventsContents c;
  auto note = [&](const std::string& what, size_t offset) {
    if (c.problem.empty()) c.problem = path + ": " + what + " at byte " + std::to_string(offset);
  };
  size_t pos = 0;
  while (pos < buf.size()) {
    if (buf.size() - pos < 12) {
      c.torn_tail = true;
      note("torn record header", pos);
      break;
    }
    uint64_t len = get_le(buf.data() + pos, 8);
    auto len_crc = static_cast<uint32_t>(get_le(buf.data() + pos + 8, 4));
    if (mask_crc(crc32c(buf.data() + pos, 8)) != len_crc) {
      c.bad_length = true;  // the length cannot be trusted, so neither can the next boundary
      note("length CRC mismatch", pos);
      break;
    }
    if (len > buf.size() - pos - 12 || buf.size() - pos - 12 - len < 4) {
      c.torn_tail = true;
      note("torn record", pos);
      break;
    }
    std::string_view data(buf.data() + pos + 12, len);
    auto data_crc = static_cast<uint32_t>(get_le(buf.data() + pos + 12 + len, 4));
    if (mask_crc(crc32c(data.data(), data.size())) != data_crc) {
      ++c.corrupt_records;
      note("data CRC mismatch", pos);
    } else if (!parse_event(data, c, c.records == 0 && c.corrupt_records == 0)) {
      ++c.corrupt_records;
      note("malformed Event protobuf", pos);
    } else {
      ++c.records;
    }
    pos += 12 + len + 4;
  }
  return c;
}

}  // namespace ws::io
