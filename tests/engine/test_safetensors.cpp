// SPDX-License-Identifier: Apache-2.0
// safetensors: every dtype round-trips, the file layout is the standard one (checked
// with our own parse of the bytes, not only with our reader), tensors view the mapping,
// shards work, and every kind of lying header is a one-line ws::Error naming the file.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "test_paths.h"
#include "test_util.h"

using ws::io::StateDict;

using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file from a raw header text and data section.
std::string st_bytes(const std::string& header, const std::string& data) { return le64(header.size()) + header + data; }

// Is `p` inside a mapping of `file` in this process (any address when p is null)?
// /proc/self/maps names the mapped file.
bool in_mapping_of(const void* p, const std::string& file) {
  std::string real = std::filesystem::canonical(file).string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto addr = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    if (line.size() < real.size() || line.compare(line.size() - real.size(), real.size(), real) != 0) continue;
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && (!p || (addr >= lo && addr < hi))) return true;
  }
  return false;
}

StateDict every_dtype() {
  torch::manual_seed(3);
  StateDict sd;
  sd["f32"] = torch::randn({3, 4});
  sd["f16"] = torch::randn({5}).to(torch::kFloat16);
  sd["bf16"] = torch::randn({2, 3, 2}).to(torch::kBFloat16);
  sd["i64"] = torch::tensor({int64_t(1) << 40, int64_t(-7), int64_t(0)}, torch::kInt64);
  sd["i32"] = torch::tensor({-5, 6, 2147483647}, torch::kInt32);
  sd["u8"] = torch::tensor({0, 17, 255}, torch::kUInt8);
  sd["bool"] = torch::tensor({true, false, true, true});
  sd["scalar"] = torch::tensor(2.5f);
  sd["empty"] = torch::zeros({0, 3});
  return sd;
}

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string p(const char* name) { return (tmp_.path() + "/" + name).toStdString(); }

  // Writes `bytes` and expects a ws::Error containing `needle` and the file name, on one line.
  void expect_error(const char* file, const std::string& bytes, const char* needle) {
    std::string path = p(file);
    write_bytes(path, bytes);
    QString msg = error_of([&] { ws::io::read_safetensors(path); });
    QVERIFY2(!msg.isEmpty(), file);
    QVERIFY2(msg.contains(needle), qPrintable(msg));
    QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
    QVERIFY2(!msg.contains('\n'), qPrintable(msg));
  }

 private Q_SLOTS:
  // NaN or inf in any floating tensor: nothing is published, the old file stays, the tensor is named.
  void nonFiniteIsNeverWritten() {
    const std::string path = p("finite.safetensors");
    ws::io::write_safetensors(path, {{"a", torch::ones({3})}});
    const auto before = ws::test::read_bytes(path);
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
      StateDict sd{{"a", torch::ones({3})}, {"b.weight", torch::tensor({1.0f, bad})}};
      const QString err = ws::test::error_of([&] { ws::io::write_safetensors(path, sd); });
      QVERIFY2(err.contains("'b.weight'") && err.contains("NaN or infinite"), qPrintable(err));
      QCOMPARE(ws::test::read_bytes(path), before);
    }
    // bf16 is checked too; integers cannot hold NaN and pass.
    const QString err = ws::test::error_of([&] {
      ws::io::write_safetensors(path, {{"h", torch::full({2}, INFINITY).to(torch::kBFloat16)}});
    });
    QVERIFY(err.contains("'h'"));
    ws::io::write_safetensors(p("ints.safetensors"), {{"i", torch::arange(4)}});
    QVERIFY(std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()) !=
            std::filesystem::directory_iterator());
  }

  void roundTripEveryDtype() {
    StateDict sd = every_dtype();
    ws::io::write_safetensors(p("all.safetensors"), sd, {{"k", "v"}});
    StateDict back = ws::io::read_safetensors(p("all.safetensors"));
    QCOMPARE(back.size(), sd.size());
    for (const auto& [name, t] : sd) {
      QVERIFY2(back.count(name), name.c_str());
      QCOMPARE(back[name].scalar_type(), t.scalar_type());
      QCOMPARE(back[name].sizes().vec(), t.sizes().vec());
      QVERIFY2(torch::equal(back[name], t), name.c_str());
    }
    // Non-contiguous and non-CPU-layout inputs are written as their values.
    auto base = torch::arange(12, torch::kFloat32).reshape({3, 4});
    ws::io::write_safetensors(p("t.safetensors"), {{"t", base.t()}});
    QVERIFY(torch::equal(ws::io::read_safetensors(p("t.safetensors"))["t"], base.t()));
  }

  void layoutSortedKeysAndMetadata() {
    StateDict sd;
    sd["zeta"] = torch::full({2}, 1.0f);
    sd["alpha"] = torch::full({3}, 2.0f);
    sd["Mid.w"] = torch::full({1}, 3.0f);
    std::map<std::string, std::string> meta = {{"format", "pt"}, {"note", "hello \"world\""}};
    ws::io::write_safetensors(p("s.safetensors"), sd, meta);

    // Parse the bytes ourselves: u64 LE length, JSON header, data.
    std::string bytes = read_bytes(p("s.safetensors"));
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
    QCOMPARE(n % 8, uint64_t(0));  // data section stays 8-byte aligned
    auto h = nlohmann::json::parse(bytes.substr(8, n));
    QCOMPARE(h["__metadata__"]["note"].get<std::string>(), std::string("hello \"world\""));
    // Data in sorted key order, back to back from 0.
    uint64_t off = 0;
    for (const char* k : {"Mid.w", "alpha", "zeta"}) {
      auto offs = h[k]["data_offsets"];
      QCOMPARE(offs[0].get<uint64_t>(), off);
      off = offs[1].get<uint64_t>();
      QCOMPARE(h[k]["dtype"].get<std::string>(), std::string("F32"));
    }
    QCOMPARE(uint64_t(bytes.size()), 8 + n + off);
    float first_alpha = 0;
    std::memcpy(&first_alpha, bytes.data() + 8 + n + h["alpha"]["data_offsets"][0].get<uint64_t>(), 4);
    QCOMPARE(first_alpha, 2.0f);
    // Keys in the header text itself are sorted (the JSON is written sorted).
    std::string header = bytes.substr(8, n);
    QVERIFY(header.find("\"Mid.w\"") < header.find("\"alpha\""));
    QVERIFY(header.find("\"alpha\"") < header.find("\"zeta\""));

    QCOMPARE(ws::io::read_safetensors_metadata(p("s.safetensors")), meta);
    QCOMPARE(ws::io::weights_metadata(p("s.safetensors")), meta);
    auto f = ws::io::SafetensorsFile::open(p("s.safetensors"));
    QCOMPARE(f->entries().size(), size_t(3));
    QCOMPARE(f->entries()[0].name, std::string("Mid.w"));
    QVERIFY(f->contains("zeta"));
    QVERIFY(!f->contains("nope"));
    QVERIFY(error_of([&] { f->tensor("nope"); }).contains("nope"));
  }

  void readsReferenceFixture() {
    // Written by Python's safetensors: 196 F32 tensors, 486,082 parameters.
    std::string path = std::string(WS_TEST_DATA) + "/vae/vae_dev_weights.safetensors";
    StateDict sd = ws::io::read_safetensors(path);
    QCOMPARE(sd.size(), size_t(196));
    int64_t n = 0;
    for (const auto& kv : sd) n += kv.second.numel();
    QCOMPARE(n, int64_t(486082));
    QCOMPARE(sd.at("encoder.downsamples.1.downsamples.2.time_conv.weight").dim(), int64_t(5));
  }

  void zeroCopyViewsTheMapping() {
    torch::manual_seed(1);
    auto w = torch::randn({64, 64});
    ws::io::write_safetensors(p("z.safetensors"), {{"a", torch::ones({3})}, {"w", w}});
    torch::Tensor t;
    {
      auto f = ws::io::SafetensorsFile::open(p("z.safetensors"));
      t = f->tensor("w");
      QVERIFY2(in_mapping_of(t.data_ptr(), p("z.safetensors")), "tensor data is not inside the file mapping");
    }
    // The tensor keeps the mapping alive after the file object is gone.
    QVERIFY(in_mapping_of(t.data_ptr(), p("z.safetensors")));
    QVERIFY(torch::equal(t, w));
    // Writing into a loaded tensor changes neither the file nor crashes (copy-on-write).
    t.add_(1.0);
    QVERIFY(torch::equal(ws::io::read_safetensors(p("z.safetensors"))["w"], w));
    // The last tensor gone, the mapping goes too.
    t = torch::Tensor();
    QVERIFY(!in_mapping_of(nullptr, p("z.safetensors")));
  }

  void shardedRoundTrip() {
    StateDict sd;
    for (int i = 0; i < 7; ++i) sd["layer." + std::to_string(i) + ".w"] = torch::full({100}, float(i));  // 400 B each
    sd["big"] = torch::zeros({1000});  // larger than a shard: gets its own
    std::string dir = p("sharded");
    ws::io::write_sharded_safetensors(dir, "diffusion_pytorch_model", sd, 1000, {{"m", "1"}});
    std::string index = dir + "/diffusion_pytorch_model.safetensors.index.json";
    auto idx = nlohmann::json::parse(read_bytes(index));
    QCOMPARE(idx["metadata"]["total_size"].get<uint64_t>(), uint64_t(7 * 400 + 4000));
    std::set<std::string> shards;
    for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) shards.insert(it.value());
    QCOMPARE(shards.size(), size_t(5));  // big | 0,1 | 2,3 | 4,5 | 6
    QVERIFY(shards.count("diffusion_pytorch_model-00001-of-00005.safetensors"));
    for (const auto& s : shards) QVERIFY(QFileInfo(QString::fromStdString(dir + "/" + s)).size() <= 1000 + 4096);

    StateDict back = ws::io::read_sharded_safetensors(index);
    QCOMPARE(back.size(), sd.size());
    for (const auto& [k, v] : sd) QVERIFY2(torch::equal(back.at(k), v), k.c_str());
    QVERIFY(ws::io::detect_weights_format(index) == ws::io::WeightsFormat::ShardedSafetensors);
    QCOMPARE(ws::io::load_weights(index).size(), sd.size());
    QCOMPARE(ws::io::weights_metadata(index).at("m"), std::string("1"));

    // An index naming a tensor its shard lacks, or a shard outside the folder, is refused.
    auto bad = idx;
    bad["weight_map"]["ghost"] = "diffusion_pytorch_model-00001-of-00005.safetensors";
    write_bytes(dir + "/bad.safetensors.index.json", bad.dump());
    QVERIFY(error_of([&] { ws::io::read_sharded_safetensors(dir + "/bad.safetensors.index.json"); }).contains("ghost"));
    bad = idx;
    bad["weight_map"]["big"] = "../../etc/passwd";
    write_bytes(dir + "/bad2.safetensors.index.json", bad.dump());
    QVERIFY(error_of([&] {
              ws::io::read_sharded_safetensors(dir + "/bad2.safetensors.index.json");
            }).contains("index's folder"));
    bad = idx;
    bad["weight_map"]["big"] = "missing-shard.safetensors";
    write_bytes(dir + "/bad3.safetensors.index.json", bad.dump());
    QVERIFY(error_of([&] {
              ws::io::read_sharded_safetensors(dir + "/bad3.safetensors.index.json");
            }).contains("missing-shard.safetensors"));
  }

  void hostileHeaders() {
    const std::string data16(16, '\0');
    expect_error("range.safetensors", st_bytes(R"({"a":{"dtype":"F32","shape":[100],"data_offsets":[0,400]}})", data16),
                 "out of range");
    expect_error("range2.safetensors", st_bytes(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[20,16]}})", data16),
                 "out of range");
    expect_error("overlap.safetensors",
                 st_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                          R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                          data16),
                 "overlap");
    expect_error("span.safetensors", st_bytes(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", data16),
                 "needs");
    expect_error("overflow.safetensors",
                 st_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}})", data16),
                 "overflows");
    expect_error("negshape.safetensors",
                 st_bytes(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", data16), "non-negative");
    expect_error("dtype.safetensors", st_bytes(R"({"a":{"dtype":"F8_E9M9","shape":[4],"data_offsets":[0,4]}})", data16),
                 "unsupported dtype");
    expect_error("absurd.safetensors", std::string(8, '\xff') + "{}", "absurd");
    expect_error("pastend.safetensors", le64(1000) + "{}", "past the end");
    expect_error("json.safetensors", st_bytes("{\"a\": [1, 2", data16), "not valid JSON");
    expect_error("array.safetensors", st_bytes("[1,2]", ""), "not a JSON object");
    expect_error("entry.safetensors", st_bytes(R"({"a":5})", ""), "not an object");
    expect_error("zero.safetensors", "", "not a safetensors file");
    expect_error("short.safetensors", "abc", "not a safetensors file");

    // A real file cut short: inside the data, then inside the header.
    ws::io::write_safetensors(p("full.safetensors"), every_dtype());
    std::string full = read_bytes(p("full.safetensors"));
    expect_error("cut_data.safetensors", full.substr(0, full.size() - 5), "out of range");
    expect_error("cut_header.safetensors", full.substr(0, 40), "past the end");
    // A control byte in a tensor name does not break the one-line message.
    expect_error("nl.safetensors",
                 st_bytes("{\"a\\nb\":{\"dtype\":\"F32\",\"shape\":[9],\"data_offsets\":[0,36]}}", data16),
                 "out of range");
  }

  void writeRefusesWhatItCannotHold() {
    QVERIFY(error_of([&] {
              ws::io::write_safetensors(p("c.safetensors"), {{"c", torch::zeros({2}, torch::kComplexFloat)}});
            }).contains("'c'"));
    QVERIFY(error_of([&] {
              ws::io::write_safetensors(p("m.safetensors"), {{"__metadata__", torch::zeros({2})}});
            }).contains("__metadata__"));
    // A failed write leaves no file and no temporary behind.
    QVERIFY(!QFileInfo::exists(QString::fromStdString(p("c.safetensors"))));
    QCOMPARE(QDir(tmp_.path()).entryList({"c.safetensors*"}, QDir::Files).size(), 0);
  }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
