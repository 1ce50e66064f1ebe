// SPDX-License-Identifier: Apache-2.0
// .pth reader: the torch.save fixture equals its safetensors twin exactly; pickles that
// reach for anything but state-dict types are refused by name and never run; broken zips
// and broken pickles are one-line errors naming the file.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/pth.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "test_paths.h"
#include "test_util.h"

using ws::io::StateDict;

using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

bool mapped(const void* p, const std::string& file) {
  std::string real = std::filesystem::canonical(file).string();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto addr = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    if (line.size() < real.size() || line.compare(line.size() - real.size(), real.size(), real) != 0) continue;
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) return true;
  }
  return false;
}

// --- a minimal STORED zip writer (what torch.save produces, minus the 64-byte padding) ---

uint32_t crc32(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string make_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out, cd;
  for (const auto& [name, data] : entries) {
    uint64_t local = out.size();
    uint32_t crc = crc32(data);
    put(out, 0x04034b50, 4);
    put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 2);
    put(out, crc, 4), put(out, data.size(), 4), put(out, data.size(), 4);
    put(out, name.size(), 2), put(out, 0, 2);
    out += name + data;
    put(cd, 0x02014b50, 4);
    put(cd, 20, 2), put(cd, 20, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2);
    put(cd, crc, 4), put(cd, data.size(), 4), put(cd, data.size(), 4);
    put(cd, name.size(), 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 4);
    put(cd, local, 4);
    cd += name;
  }
  uint64_t cd_off = out.size();
  out += cd;
  put(out, 0x06054b50, 4);
  put(out, 0, 2), put(out, 0, 2), put(out, entries.size(), 2), put(out, entries.size(), 2);
  put(out, cd.size(), 4), put(out, cd_off, 4), put(out, 0, 2);
  return out;
}

// --- protocol-2 pickle pieces, as torch.save spells them ---

std::string global(const std::string& module, const std::string& name) { return "c" + module + "\n" + name + "\n"; }
std::string str(const std::string& s) {
  std::string out = "X";
  put(out, s.size(), 4);
  return out + s;
}
std::string i32(int32_t v) {
  std::string out = "J";
  put(out, static_cast<uint32_t>(v), 4);
  return out;
}
std::string tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (const auto& i : items) out += i;
  return out + "t";
}
const std::string kProto = "\x80\x02";
const std::string kOrderedDict = global("collections", "OrderedDict") + ")R";

// _rebuild_tensor_v2(storage(key, numel), offset, size, stride, False, OrderedDict())
std::string tensor(const std::string& storage_type, const std::string& key, int numel, int offset,
                   const std::vector<int>& size, const std::vector<int>& stride) {
  std::vector<std::string> sz, st;
  for (int s : size) sz.push_back(i32(s));
  for (int s : stride) st.push_back(i32(s));
  std::string pid = tuple({str("storage"), global("torch", storage_type), str(key), str("cpu"), i32(numel)}) + "Q";
  return global("torch._utils", "_rebuild_tensor_v2") +
         tuple({pid, i32(offset), tuple(sz), tuple(st), "\x89", kOrderedDict}) + "R";
}

std::string state_dict_pickle(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = kProto + kOrderedDict + "(";
  for (const auto& [k, v] : items) out += str(k) + v;
  return out + "u.";
}

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

}  // namespace

class TestPth : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string p(const char* name) { return (tmp_.path() + "/" + name).toStdString(); }

  // The archive `<name>.pth` holding `pickle` as data.pkl plus `storages` as data/<key>.
  std::string write_pth(const char* name, const std::string& pickle,
                        const std::vector<std::pair<std::string, std::string>>& storages = {}) {
    std::vector<std::pair<std::string, std::string>> entries = {{"archive/data.pkl", pickle}};
    for (const auto& [k, v] : storages) entries.push_back({"archive/data/" + k, v});
    entries.push_back({"archive/version", "3\n"});
    std::string path = p(name);
    write_bytes(path, make_zip(entries));
    return path;
  }

  void expect_error(const std::string& path, const char* needle) {
    QString msg = error_of([&] { ws::io::read_pth(path); });
    QVERIFY2(!msg.isEmpty(), path.c_str());
    QVERIFY2(msg.contains(needle), qPrintable(msg));
    QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
    QVERIFY2(!msg.contains('\n'), qPrintable(msg));
  }

  void expect_refused(const std::string& path, const char* global) {
    expect_error(path, "refused");
    expect_error(path, global);
  }

 private Q_SLOTS:
  void fixtureEqualsSafetensorsTwin() {
    std::string pth = std::string(WS_TEST_DATA) + "/vae/vae_dev_weights.pth";
    StateDict a = ws::io::read_pth(pth);
    StateDict b = ws::io::read_safetensors(std::string(WS_TEST_DATA) + "/vae/vae_dev_weights.safetensors");
    QCOMPARE(a.size(), size_t(196));
    QCOMPARE(b.size(), size_t(196));
    int64_t params = 0;
    for (const auto& [k, t] : b) {
      QVERIFY2(a.count(k), k.c_str());
      QCOMPARE(a[k].scalar_type(), t.scalar_type());
      QCOMPARE(a[k].sizes().vec(), t.sizes().vec());
      QVERIFY2(torch::equal(a[k], t), k.c_str());
      params += t.numel();
    }
    QCOMPARE(params, int64_t(486082));
    // Tensors view the checkpoint's mapping: a 2.8 GB file is not held twice.
    QVERIFY(mapped(a.at("encoder.conv1.weight").data_ptr(), pth));
    QVERIFY(ws::io::detect_weights_format(pth) == ws::io::WeightsFormat::Pth);
    QCOMPARE(ws::io::load_weights(pth).size(), size_t(196));
  }

  // torch.save of PyTorch 2.x (tests/data/torch2/README.md): its extra zip entries and 64-byte
  // alignment, bf16/fp16/float64, a 0-d tensor, two views of one storage, one non-contiguous.
  void torch2SaveEqualsItsTwin() {
    const std::string dir = std::string(WS_TEST_DATA) + "/torch2/";
    StateDict a = ws::io::read_pth(dir + "torch2_state_dict.pth");
    StateDict b = ws::io::read_safetensors(dir + "torch2_state_dict.safetensors");
    QCOMPARE(a.size(), size_t(7));
    QCOMPARE(b.size(), a.size());
    for (const auto& [k, t] : b) {
      QVERIFY2(a.count(k), k.c_str());
      QCOMPARE(a[k].scalar_type(), t.scalar_type());
      QCOMPARE(a[k].sizes().vec(), t.sizes().vec());
      QVERIFY2(torch::equal(a[k], t), k.c_str());
    }
    QCOMPARE(a.at("steps").item<int64_t>(), int64_t(12345678901));
    QVERIFY(!a.at("view.t").is_contiguous());
    QVERIFY(torch::equal(a.at("view.t").t().slice(0, 2, 5), a.at("view.rows")));
  }

  void minimalCheckpoint() {
    // One storage shared by a tensor and a transposed view of part of it, plus an int64 tensor.
    std::vector<float> vals = {0, 1, 2, 3, 4, 5, 6, 7};
    std::string pkl = state_dict_pickle({{"w", tensor("FloatStorage", "0", 8, 0, {2, 3}, {3, 1})},
                                         {"wt", tensor("FloatStorage", "0", 8, 2, {3, 2}, {1, 3})},
                                         {"n", tensor("LongStorage", "1", 1, 0, {}, {})},
                                         {"e", tensor("HalfStorage", "2", 0, 0, {0, 4}, {4, 1})}});
    int64_t n = 42;
    std::string path = write_pth(
        "ok.pth", pkl, {{"0", float_bytes(vals)}, {"1", std::string(reinterpret_cast<char*>(&n), 8)}, {"2", ""}});
    StateDict sd = ws::io::read_pth(path);
    QCOMPARE(sd.size(), size_t(4));
    auto ref = torch::arange(8, torch::kFloat32);
    QVERIFY(torch::equal(sd["w"], ref.slice(0, 0, 6).reshape({2, 3})));
    QVERIFY(torch::equal(sd["wt"], ref.slice(0, 2, 8).reshape({2, 3}).t()));
    QCOMPARE(sd["n"].dim(), int64_t(0));
    QCOMPARE(sd["n"].item<int64_t>(), int64_t(42));
    QCOMPARE(sd["e"].scalar_type(), torch::kFloat16);
    QCOMPARE(sd["e"].sizes().vec(), std::vector<int64_t>({0, 4}));
    // A wrapper dict {"state_dict": {...}} is unwrapped.
    std::string wrapped = kProto + "}(" + str("epoch") + i32(3) + str("state_dict") + "}(" + str("w") +
                          tensor("FloatStorage", "0", 8, 0, {8}, {1}) + "uu.";
    StateDict w = ws::io::read_pth(write_pth("wrapped.pth", wrapped, {{"0", float_bytes(vals)}}));
    QCOMPARE(w.size(), size_t(1));
    QVERIFY(torch::equal(w.at("w"), ref));
  }

  void zeroStrideGetsItsOwnMemory() {
    // torch.save of an expanded tensor: four elements aliasing one float.
    std::vector<float> vals = {2.5f};
    std::string pkl = state_dict_pickle({{"b", tensor("FloatStorage", "0", 1, 0, {4}, {0})}});
    StateDict sd = ws::io::read_pth(write_pth("expanded.pth", pkl, {{"0", float_bytes(vals)}}));
    torch::Tensor b = sd.at("b");
    QVERIFY(b.is_contiguous());
    QVERIFY(torch::equal(b, torch::full({4}, 2.5f)));
    b.add_(1);  // an aliased view refuses in-place writes; loaders write into what they read
    QVERIFY(torch::equal(b, torch::full({4}, 3.5f)));
  }

  void refusesForeignGlobals() {
    std::string marker = p("pwned");
    // os.system("touch pwned") as torch.load would run it without weights_only.
    std::string os_system = kProto + global("os", "system") + str("touch " + marker) + "\x85R.";
    expect_refused(write_pth("os.pth", os_system), "'os.system'");
    QVERIFY(!QFileInfo::exists(QString::fromStdString(marker)));
    std::string eval =
        kProto + global("builtins", "eval") + str("__import__('os').system('touch " + marker + "')") + "\x85R.";
    expect_refused(write_pth("eval.pth", eval), "'builtins.eval'");
    QVERIFY(!QFileInfo::exists(QString::fromStdString(marker)));
    // Hidden inside an otherwise normal state dict, and spelled with protocol 4's STACK_GLOBAL.
    std::string hidden = state_dict_pickle({{"w", global("subprocess", "Popen") + str("id") + "\x85R"}});
    expect_refused(write_pth("hidden.pth", hidden), "'subprocess.Popen'");
    std::string stack_global = "\x80\x04\x8c\x05posix\x8c\x06system\x93" + str("id") + "\x85R.";
    expect_refused(write_pth("stack.pth", stack_global), "'posix.system'");
    // torch.* is not a blanket pass: only storages and the rebuild functions.
    expect_refused(write_pth("torchload.pth", kProto + global("torch", "load") + str("x") + "\x85R."), "'torch.load'");
  }

  void brokenPickles() {
    expect_error(write_pth("opcode.pth", kProto + "\xff."), "unsupported opcode 0xff");
    expect_error(write_pth("trunc_pickle.pth", kProto + "}(" + str("a").substr(0, 3)), "unexpected end");
    expect_error(write_pth("nostop.pth", kProto + "}"), "unexpected end");
    expect_error(write_pth("underflow.pth", kProto + "s."), "stack underflow");
    expect_error(write_pth("memo.pth", kProto + "h\x07."), "memo");
    expect_error(write_pth("notdict.pth", kProto + "N."), "no state dict");
    expect_error(write_pth("notensor.pth", kProto + "}."), "no tensors");
    // Storage problems: missing entry, too small, a view running past its storage.
    std::string one = state_dict_pickle({{"w", tensor("FloatStorage", "0", 4, 0, {4}, {1})}});
    expect_error(write_pth("nostorage.pth", one), "missing");
    expect_error(write_pth("small.pth", one, {{"0", float_bytes({1, 2})}}), "holds 8 bytes");
    std::string past = state_dict_pickle({{"w", tensor("FloatStorage", "0", 4, 2, {2, 2}, {2, 1})}});
    expect_error(write_pth("past.pth", past, {{"0", float_bytes({1, 2, 3, 4})}}), "runs past its storage");
    // Deep nesting is handled without recursion (no stack overflow), then rejected as not a state dict.
    std::string deep = kProto + std::string(200000, ']') + std::string(199999, 'a') + ".";
    expect_error(write_pth("deep.pth", deep), "no state dict");
  }

  void brokenZips() {
    std::string good = read_bytes(std::string(WS_TEST_DATA) + "/vae/vae_dev_weights.pth");
    write_bytes(p("half.pth"), good.substr(0, good.size() / 2));
    expect_error(p("half.pth"), "truncated");
    write_bytes(p("tail.pth"), good.substr(0, good.size() - 30));  // cut inside the central directory
    expect_error(p("tail.pth"), "truncated");
    write_bytes(p("text.pth"), "this is not a checkpoint at all, just some text\n");
    expect_error(p("text.pth"), "not a zip");
    write_bytes(p("empty.pth"), "");
    expect_error(p("empty.pth"), "not a zip");
    write_bytes(p("nopkl.pth"), make_zip({{"archive/version", "3\n"}}));
    expect_error(p("nopkl.pth"), "no data.pkl");
    write_bytes(p("legacy.pth"), kProto + "K\x01.");  // a bare pickle, as torch.save wrote before 1.6
    expect_error(p("legacy.pth"), "legacy");
    // A central directory pointing past the file.
    std::string z = make_zip({{"archive/data.pkl", kProto + "}."}});
    z[z.size() - 3] = '\x7f';  // high byte of the central directory offset
    write_bytes(p("cdoff.pth"), z);
    expect_error(p("cdoff.pth"), "out of range");
    expect_error(p("missing.pth"), "cannot open");
  }
};

QTEST_APPLESS_MAIN(TestPth)
#include "test_pth.moc"
