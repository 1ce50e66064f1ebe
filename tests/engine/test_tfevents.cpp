// SPDX-License-Identifier: Apache-2.0
// TensorBoard scalar files: CRC-32C and TFRecord framing against known bytes from real
// TensorFlow files, write -> read round trips, and damaged files read without crashing.
#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/fs.h"
#include "io/tfevents.h"
#include "test_paths.h"

using namespace ws::io;

namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

// The first record of a real TensorFlow events file (from TensorBoard's own reader tests):
// Event{wall_time, file_version: "brain.Event:2"}, length 24.
const std::string kRealHeader = bytes({0x18, 0, 0, 0, 0, 0, 0, 0, 0xa3, 0x7f, 0x4b, 0x22});
const std::string kRealData =
    bytes({0x09, 0x00, 0x00, 0x80, 0x38, 0x99, 0xd6, 0xd7, 0x41, 0x1a, 0x0d}) + "brain.Event:2";
const std::string kRealDataCrc = bytes({0x12, 0x4b, 0x36, 0xab});

void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

class TestTfEvents : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void crc32cKnownValues() {
    auto crc = [](const std::string& s) { return crc32c(s.data(), s.size()); };
    QCOMPARE(crc(""), 0x00000000u);
    QCOMPARE(crc("123456789"), 0xE3069283u);
    QCOMPARE(crc(std::string(32, '\0')), 0x8A9136AAu);  // RFC 3720 B.4
    QCOMPARE(crc(std::string(32, '\xff')), 0x62A8AB43u);
    std::string ascending;
    for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
    QCOMPARE(crc(ascending), 0x46DD794Eu);
    QCOMPARE(crc("The quick brown fox jumps over the lazy dog"), 0x22620404u);
    // Extending a CRC in pieces gives the one-shot value.
    uint32_t part = crc32c("12345", 5);
    QCOMPARE(crc32c("6789", 4, part), 0xE3069283u);
  }

  void maskedCrcOfRealRecord() {
    QCOMPARE(masked_crc32c(kRealHeader.substr(0, 8)), 0x224b7fa3u);
    QCOMPARE(masked_crc32c(kRealData), 0xab364b12u);
    QCOMPARE(mask_crc(0), 0xa282ead8u);
    // Our encoder produces that record byte for byte from the same wall time.
    double wall;
    std::memcpy(&wall, kRealData.data() + 1, 8);
    std::string ev = encode_file_version_event(wall);
    QCOMPARE(QByteArray::fromStdString(ev), QByteArray::fromStdString(kRealData));
    QCOMPARE(QByteArray::fromStdString(tfrecord_frame(ev)),
             QByteArray::fromStdString(kRealHeader + kRealData + kRealDataCrc));
  }

  void readsRealTensorFlowFile() {
    // Record 2 of the same real file: tf.summary.scalar("accuracy", 0.99, step=77), which
    // TF2 stores as a float tensor with scalars plugin metadata rather than simple_value.
    std::string data2 =
        bytes({0x09, 0xc4, 0x05, 0xb7, 0x3d, 0x99, 0xd6, 0xd7, 0x41, 0x10, 0x4d, 0x2a, 0x25, 0x0a, 0x23, 0x0a, 0x08}) +
        "accuracy" +
        bytes({0x42, 0x0a, 0x08, 0x01, 0x12, 0x00, 0x22, 0x04, 0xa4, 0x70, 0x7d, 0x3f, 0x4a, 0x0b, 0x0a, 0x09, 0x0a,
               0x07}) +
        "scalars";
    std::string rec2 =
        bytes({0x32, 0, 0, 0, 0, 0, 0, 0, 0x24, 0x19, 0x56, 0xec}) + data2 + bytes({0xa5, 0x5b, 0x64, 0x33});
    QCOMPARE(QByteArray::fromStdString(tfrecord_frame(data2)), QByteArray::fromStdString(rec2));
    QTemporaryDir tmp;
    std::string path = tmp.filePath("events.out.tfevents.1.real").toStdString();
    write_bytes(path, kRealHeader + kRealData + kRealDataCrc + rec2);
    auto c = read_tfevents(path);
    QVERIFY2(c.problem.empty(), c.problem.c_str());
    QCOMPARE(c.file_version, std::string("brain.Event:2"));
    QCOMPARE(c.records, size_t(2));
    QCOMPARE(c.scalars.size(), size_t(1));
    QCOMPARE(c.scalars[0].tag, std::string("accuracy"));
    QCOMPARE(c.scalars[0].step, int64_t(77));
    QCOMPARE(c.scalars[0].value, 0.99f);
  }

  void writeReadRoundTrip() {
    QTemporaryDir tmp;
    std::string dir = tmp.filePath("logs").toStdString();  // created by the writer
    std::string path;
    {
      TfEventsWriter w(dir);
      path = w.path();
      w.add_scalar("train/loss", 0.125f, 1, 1700000000.5);
      w.add_scalar("train/lr", 2e-5f, 1, 1700000000.5);
      w.add_scalars({{"eval/loss_high", -3.5f}, {"eval/loss_low", 1e-30f}}, 5000000000LL, 1700000001.25);
      w.add_scalar("train/loss", 7.0f, 2);  // wall time now
      // Every record is flushed: readable before close, as TensorBoard reads a live run.
      auto live = read_tfevents(path);
      QCOMPARE(live.scalars.size(), size_t(5));
    }
    QVERIFY(ws::fs::basename(path).rfind("events.out.tfevents.", 0) == 0);
    auto c = read_tfevents(path);
    QVERIFY2(c.problem.empty(), c.problem.c_str());
    QVERIFY(!c.torn_tail);
    QCOMPARE(c.file_version, std::string("brain.Event:2"));
    QCOMPARE(c.records, size_t(5));  // version + 4 events
    QCOMPARE(c.scalars.size(), size_t(5));
    QCOMPARE(c.scalars[0].tag, std::string("train/loss"));
    QCOMPARE(c.scalars[0].value, 0.125f);
    QCOMPARE(c.scalars[0].step, int64_t(1));
    QCOMPARE(c.scalars[0].wall_time, 1700000000.5);
    QCOMPARE(c.scalars[1].value, 2e-5f);
    QCOMPARE(c.scalars[2].tag, std::string("eval/loss_high"));
    QCOMPARE(c.scalars[2].value, -3.5f);
    QCOMPARE(c.scalars[2].step, int64_t(5000000000LL));
    QCOMPARE(c.scalars[3].value, 1e-30f);
    QCOMPARE(c.scalars[3].wall_time, 1700000001.25);
    QCOMPARE(c.scalars[4].step, int64_t(2));
    double now = QDateTime::currentMSecsSinceEpoch() / 1000.0;
    QVERIFY(std::abs(c.scalars[4].wall_time - now) < 60);
  }

  void nonFiniteValuesSurvive() {
    QTemporaryDir tmp;
    TfEventsWriter w(tmp.path().toStdString());
    w.add_scalar("loss", std::nanf(""), 3);
    w.add_scalar("loss", INFINITY, 4);
    w.close();
    auto c = read_tfevents(w.path());
    QCOMPARE(c.scalars.size(), size_t(2));
    QVERIFY(std::isnan(c.scalars[0].value));
    QVERIFY(std::isinf(c.scalars[1].value));
  }

  void newFilePerStart() {
    QTemporaryDir tmp;
    std::string dir = tmp.path().toStdString();
    TfEventsWriter a(dir);
    TfEventsWriter b(dir);  // same second, same host: must not share a file
    QVERIFY(a.path() != b.path());
    a.add_scalar("x", 1, 1);
    b.add_scalar("x", 2, 1);
    a.close();
    b.close();
    QCOMPARE(files_in(dir).size(), size_t(2));
    QCOMPARE(read_tfevents(a.path()).scalars.at(0).value, 1.0f);
    QCOMPARE(read_tfevents(b.path()).scalars.at(0).value, 2.0f);
    QCOMPARE(read_tfevents(b.path()).records, size_t(2));
  }

  void tornTailAtEveryByte() {
    QTemporaryDir tmp;
    std::string path;
    std::vector<size_t> ends;  // file size after each record
    {
      TfEventsWriter w(tmp.path().toStdString());
      path = w.path();
      ends.push_back(ws::fs::file_size(path));
      for (int i = 1; i <= 3; ++i) {
        w.add_scalar("loss", static_cast<float>(i), i);
        ends.push_back(ws::fs::file_size(path));
      }
    }
    const std::string full = ws::fs::read_file(path);
    std::string cut_path = tmp.filePath("cut").toStdString();
    for (size_t n = 0; n <= full.size(); ++n) {
      write_bytes(cut_path, full.substr(0, n));
      auto c = read_tfevents(cut_path);  // must not throw or crash
      size_t complete = std::upper_bound(ends.begin(), ends.end(), n) - ends.begin();
      bool on_boundary = n == 0 || std::find(ends.begin(), ends.end(), n) != ends.end();
      QCOMPARE(c.records, complete);
      QCOMPARE(c.scalars.size(), complete == 0 ? 0 : complete - 1);
      QCOMPARE(c.torn_tail, !on_boundary);
      QCOMPARE(c.corrupt_records, size_t(0));
      for (size_t i = 0; i < c.scalars.size(); ++i) QCOMPARE(c.scalars[i].step, int64_t(i + 1));
    }
  }

  void corruptRecords() {
    QTemporaryDir tmp;
    std::string path;
    size_t second_start = 0, third_start = 0;
    {
      TfEventsWriter w(tmp.path().toStdString());
      path = w.path();
      w.add_scalar("loss", 1, 1);
      second_start = ws::fs::file_size(path);
      w.add_scalar("loss", 2, 2);
      third_start = ws::fs::file_size(path);
      w.add_scalar("loss", 3, 3);
    }
    std::string full = ws::fs::read_file(path);
    // A flipped bit in a record's data: that record is skipped, the others still read.
    std::string damaged = full;
    damaged[second_start + 14] ^= 0x01;
    std::string p1 = tmp.filePath("data_crc").toStdString();
    write_bytes(p1, damaged);
    auto c = read_tfevents(p1);
    QCOMPARE(c.corrupt_records, size_t(1));
    QCOMPARE(c.scalars.size(), size_t(2));
    QCOMPARE(c.scalars[0].step, int64_t(1));
    QCOMPARE(c.scalars[1].step, int64_t(3));
    QVERIFY(c.problem.find("CRC") != std::string::npos);
    QVERIFY(c.problem.find(p1) != std::string::npos);

    // A damaged length: nothing after it can be located, earlier records are kept.
    damaged = full;
    damaged[third_start] ^= 0x40;
    std::string p2 = tmp.filePath("length_crc").toStdString();
    write_bytes(p2, damaged);
    c = read_tfevents(p2);
    QVERIFY(c.bad_length);
    QCOMPARE(c.scalars.size(), size_t(2));

    // Garbage that is not a TFRecord at all.
    std::string p3 = tmp.filePath("garbage").toStdString();
    write_bytes(p3, std::string(1000, 'x'));
    c = read_tfevents(p3);
    QCOMPARE(c.scalars.size(), size_t(0));
    QVERIFY(!c.problem.empty());

    // A valid frame around a payload that is not a protobuf.
    std::string p4 = tmp.filePath("not_proto").toStdString();
    write_bytes(p4, tfrecord_frame(std::string("\xff\xff\xff", 3)) + full.substr(second_start));
    c = read_tfevents(p4);
    QCOMPARE(c.corrupt_records, size_t(1));
    QCOMPARE(c.scalars.size(), size_t(2));
  }

  void missingFileIsAnError() {
    QVERIFY_THROWS_EXCEPTION(ws::Error, read_tfevents("/nonexistent/events.out.tfevents.1.x"));
  }

  void unwritableDirIsAnError() {
    QTemporaryDir tmp;
    std::string file = tmp.filePath("plain_file").toStdString();
    write_bytes(file, "x");
    QVERIFY_THROWS_EXCEPTION(ws::Error, TfEventsWriter(file + "/logs"));
  }
};

QTEST_APPLESS_MAIN(TestTfEvents)
#include "test_tfevents.moc"
