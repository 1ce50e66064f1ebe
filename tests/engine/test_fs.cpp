// SPDX-License-Identifier: Apache-2.0
// The file helpers every writer and reader goes through: a failed save leaves the older backup
// whole, symlinks stay links, modes are kept; FIFOs and devices are refused instead of blocking;
// nested JSON and aliased YAML are bounded before anything walks them; paths stay inside their
// folder.
#include <QtTest/QtTest>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.h"
#include "core/format.h"
#include "core/fs.h"
#include "core/json_depth.h"
#include "core/sha256.h"
#include "core/yaml_limits.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "test_util.h"

using namespace ws;
namespace stdfs = std::filesystem;
using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

// Every write past `bytes` fails with EFBIG while alive: a full disk without root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    rlimit r = old_;
    r.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &r);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }

 private:
  rlimit old_{};
  sighandler_t old_handler_ = nullptr;
};

mode_t mode_of(const std::string& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

}  // namespace

class TestFs : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string at(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

 private Q_SLOTS:
  // The log formatter (core/format.h) prints what spdlog's fmt printed for the fields the engine uses.
  void formatFillsFieldsLikeFmt() {
    QCOMPARE(ws::format("{} clips, {} of {}", 3, std::string("a"), "b"), std::string("3 clips, a of b"));
    QCOMPARE(ws::format("{:.2f} s, {:.3g}, {}", 1.005f * 2, 0.000123456, 0.1), std::string("2.01 s, 0.000123, 0.1"));
    QCOMPARE(ws::format("{} {} {}", true, 'x', uint64_t{18446744073709551615ull}),
             std::string("true x 18446744073709551615"));
    QCOMPARE(ws::format("{{literal}} {}", -7), std::string("{literal} -7"));
    QCOMPARE(ws::format("{} and {}", 1), std::string("1 and {}"));  // a field with no argument stays
    QCOMPARE(ws::format("{}", 1e-5), std::string("1e-05"));
    QCOMPARE(ws::format("{:.1f}", 3), std::string("3.0"));
  }

  void failedSaveKeepsTheOlderBackup() {
    const std::string p = at("meta.json");
    write_bytes(p, std::string(1000, 'n'));          // the current file
    write_bytes(p + ".bak", std::string(500, 'o'));  // the backup of the save before
    QString err;
    {
      FileSizeLimit full(600);  // the new backup (1000 bytes) cannot be written
      err = error_of([&] { fs::write_file_with_backup(p, std::string(2000, 'x')); });
    }
    QVERIFY2(!err.isEmpty(), "a save on a full disk must fail");
    QCOMPARE(read_bytes(p + ".bak"), std::string(500, 'o'));  // not truncated
    QCOMPARE(read_bytes(p), std::string(1000, 'n'));
    for (const auto& e : stdfs::directory_iterator(tmp_.path().toStdString()))
      QVERIFY2(e.path().string().find(".tmp.") == std::string::npos, "a temporary file was left behind");
  }

  void saveKeepsLinkAndMode() {
    const std::string real = at("real/meta.json"), link = at("link.json");
    write_bytes(real, "old");
    ::chmod(real.c_str(), 0600);
    stdfs::create_symlink(real, link);
    fs::write_file_with_backup(link, "new");
    QVERIFY(stdfs::is_symlink(link));  // still a link to the real file
    QCOMPARE(read_bytes(real), std::string("new"));
    QCOMPARE(read_bytes(real + ".bak"), std::string("old"));
    QCOMPARE(int(mode_of(real)), 0600);
    QCOMPARE(int(mode_of(real + ".bak")), 0600);
    fs::write_file_atomic(link, "newer");
    QVERIFY(stdfs::is_symlink(link));
    QCOMPARE(int(mode_of(real)), 0600);
  }

  void fifoAndDevicesAreRefused() {
    const std::string fifo = at("pipe");
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    // Each of these would block forever on a FIFO with no writer.
    QVERIFY(error_of([&] { fs::read_file(fifo); }).contains("not a regular file"));
    QVERIFY(error_of([&] { sha256_file(fifo); }).contains("not a regular file"));
    QVERIFY(error_of([&] { io::read_safetensors(fifo); }).contains("not a regular file"));
    QVERIFY(error_of([&] { io::detect_weights_format(fifo); }).contains("not a regular file"));
    QVERIFY(error_of([&] { fs::read_file("/dev/zero"); }).contains("not a regular file"));
    QVERIFY(error_of([&] { fs::read_file(tmp_.path().toStdString()); }).contains("folder"));
  }

  void jsonNestingIsBounded() {
    QVERIFY(error_of([] {
              check_json_nesting(std::string(65, '[') + std::string(65, ']'), "x.json");
            }).contains("x.json: JSON nested deeper than 64 levels"));
    check_json_nesting(std::string(64, '[') + std::string(64, ']'), "ok.json");
    // Brackets inside strings, escaped quotes included, do not count.
    check_json_nesting("[\"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"]", "s.json");
    const std::string p = at("deep.json");
    write_bytes(p, std::string(100000, '[') + std::string(100000, ']'));
    QVERIFY(error_of([&] { fs::read_json_text(p); }).contains("nested deeper"));
  }

  void yamlAliasesAreBounded() {
    std::string text = "a: &a [l, l, l, l, l, l, l, l, l]\n";
    const std::string names = "abcdefghi";
    for (size_t i = 1; i < names.size(); ++i) {
      text += std::string(1, names[i]) + ": &" + names[i] + " [";
      for (int k = 0; k < 9; ++k) text += std::string(k ? ", " : "") + "*" + names[i - 1];
      text += "]\n";
    }
    YAML::Node root = YAML::Load(text);  // parsing is cheap; walking is 9^9 nodes
    QVERIFY(error_of([&] { check_yaml_size(root, "laughs.yaml"); }).contains("aliases are expanded"));
    check_yaml_size(YAML::Load("a: [1, 2, 3]\nb: {c: d}\n"), "small.yaml");
  }

  void insideIsLexicalAndResolved() {
    const std::string d = at("dir");
    stdfs::create_directories(d + "/sub");
    QVERIFY(fs::is_inside(d, d + "/sub/x"));
    QVERIFY(fs::is_inside(d + "/", d + "/x"));
    QVERIFY(!fs::is_inside(d, d));
    QVERIFY(!fs::is_inside(d, d + "/../x"));
    QVERIFY(!fs::is_inside(d, d + "/sub/../../x"));
    QVERIFY(!fs::is_inside(d, "/etc/passwd"));
    QVERIFY(!fs::is_inside(d, d + "x/y"));  // a sibling whose name starts the same
    stdfs::create_directory_symlink("/tmp", d + "/out");
    QVERIFY(!fs::is_inside(d, d + "/out/x"));  // through a link that leaves the folder
  }

  void sha256KnownAnswers() {
    // FIPS 180-2 appendix B vectors: this hash names users' embedding files and keys the cache.
    QCOMPARE(sha256_hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(sha256_hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    QCOMPARE(sha256_hex(two_blocks), std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    const std::string million(1'000'000, 'a');
    const std::string want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    QCOMPARE(sha256_hex(million), want);
    // Streamed in pieces that straddle the 64-byte blocks at odd offsets, and from a file.
    for (size_t piece : {size_t(1), size_t(7), size_t(63), size_t(65), size_t(1000003)}) {
      Sha256 h;
      for (size_t at = 0; at < million.size(); at += piece)
        h.update(reinterpret_cast<const unsigned char*>(million.data()) + at, std::min(piece, million.size() - at));
      QCOMPARE(h.hex(), want);
    }
    write_bytes(at("million"), million);
    QCOMPARE(sha256_file(at("million")), want);
    // Lengths around the padding boundary (55, 56, 64 bytes) differ from each other.
    QVERIFY(sha256_hex(std::string(55, 'a')) != sha256_hex(std::string(56, 'a')));
    QCOMPARE(sha256_hex(std::string(56, 'a')),
             std::string("b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"));
  }

  void shardNamesStayBesideTheIndex() {
    const std::string idx = at("m.safetensors.index.json");
    QCOMPARE(io::shard_path(idx, "a.safetensors"), at("a.safetensors"));
    for (const char* bad : {"../a.safetensors", "/etc/shadow", "sub/a.safetensors", "..", ".", ""})
      QVERIFY2(error_of([&] { io::shard_path(idx, bad); }).contains("not a file name in the index's folder"), bad);
  }
};

QTEST_GUILESS_MAIN(TestFs)
#include "test_fs.moc"
