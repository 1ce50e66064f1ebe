// SPDX-License-Identifier: Apache-2.0
// The Qwen2 / Qwen2.5-VL tokenizer against HuggingFace `tokenizers` (tests/data/qwen, made by
// packaging/make_qwen_tokenizer_fixture.py): every case's ids and decode, special tokens matched
// whole, token ids, both spellings of merges, and a clear ws::Error for a missing or broken file.
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"
#include "test_paths.h"
#include "test_util.h"
#include "text/qwen_tokenizer.h"

using namespace ws;
using nlohmann::json;
using ws::test::error_of;

namespace {

const std::string kDir = std::string(WS_TEST_DATA) + "/qwen";

json read_json(const std::string& path) { return json::parse(ws::test::read_bytes(path)); }

const json& cases() {
  static const json j = read_json(kDir + "/tokenizer_cases.json");
  return j;
}

std::string show(const std::vector<int64_t>& ids) { return json(ids).dump(); }

}  // namespace

class TestQwenTokenizer : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void parityWithTokenizers() {
    const text::QwenTokenizer tok(kDir);
    QVERIFY(cases()["cases"].size() >= 40);
    for (const json& c : cases()["cases"]) {
      const std::string s = c["text"].get<std::string>();
      const auto ids = tok.encode(s);
      const auto want = c["ids"].get<std::vector<int64_t>>();
      QVERIFY2(ids == want, (c["text"].dump() + ": " + show(ids) + " != " + show(want)).c_str());
      QCOMPARE(tok.decode(ids), c["decoded"].get<std::string>());
      QCOMPARE(tok.decode(ids, true), c["decoded_skip_special"].get<std::string>());
    }
  }

  // Cut-off byte sequences decode to U+FFFD as `tokenizers` does; unknown ids are left out.
  void decodeInvalidBytes() {
    const text::QwenTokenizer tok(kDir + "/tokenizer.json");
    for (const json& c : cases()["decode_cases"])
      QCOMPARE(tok.decode(c["ids"].get<std::vector<int64_t>>()), c["decoded"].get<std::string>());
    QCOMPARE(tok.decode({-1, tok.vocab_size(), int64_t{1} << 40}), std::string());
  }

  void tokenIdsAndVocabSize() {
    const text::QwenTokenizer tok(kDir);
    for (const auto& [token, id] : cases()["token_ids"].items())
      QCOMPARE(tok.token_id(token), id.is_null() ? int64_t{-1} : id.get<int64_t>());
    QCOMPARE(tok.token_id("<|no_such_token|>"), int64_t{-1});
    QCOMPARE(tok.token_id(""), int64_t{-1});
    QCOMPARE(tok.vocab_size(), cases()["vocab_size"].get<int64_t>());
  }

  // Added tokens are whole tokens wherever they stand, and only when complete.
  void specialTokensMatchedWhole() {
    const text::QwenTokenizer tok(kDir);
    const int64_t start = tok.token_id("<|im_start|>"), end = tok.token_id("<|im_end|>");
    const int64_t video = tok.token_id("<|video_pad|>"), call = tok.token_id("<tool_call>");
    QVERIFY(start >= 0 && end >= 0 && video >= 0 && call >= 0);
    QCOMPARE(tok.encode("<|im_start|>"), std::vector<int64_t>{start});
    QCOMPARE(tok.encode("<|video_pad|><|video_pad|><|video_pad|>"), (std::vector<int64_t>{video, video, video}));
    const auto in_word = tok.encode("a<|im_end|>b");
    QCOMPARE(in_word.size(), size_t{3});
    QCOMPARE(in_word[1], end);
    for (const char* partial : {"<|im_start", "im_start|>", "<|im_start |>", "<|IM_START|>"}) {
      const auto ids = tok.encode(partial);
      QVERIFY2(std::find(ids.begin(), ids.end(), start) == ids.end(), partial);
    }
    // Special ones go when asked; the non-special <tool_call> stays.
    const auto ids = tok.encode("<|im_start|>hi<tool_call><|im_end|>");
    QCOMPARE(tok.decode(ids), std::string("<|im_start|>hi<tool_call><|im_end|>"));
    QCOMPARE(tok.decode(ids, true), std::string("hi<tool_call>"));
  }

  // Qwen's release writes merges as "a b"; newer `tokenizers` as ["a", "b"]: both give the same ids.
  void mergesAsPairs() {
    json doc = read_json(kDir + "/tokenizer.json");
    QVERIFY(doc["model"]["merges"][0].is_string());
    for (json& m : doc["model"]["merges"]) {
      const std::string s = m.get<std::string>();
      const size_t sp = s.find(' ');
      m = json::array({s.substr(0, sp), s.substr(sp + 1)});
    }
    QTemporaryDir tmp;
    const std::string path = tmp.path().toStdString() + "/tokenizer.json";
    ws::test::write_bytes(path, doc.dump());
    const text::QwenTokenizer strings(kDir), pairs(tmp.path().toStdString());
    for (const json& c : cases()["cases"])
      QCOMPARE(pairs.encode(c["text"].get<std::string>()), strings.encode(c["text"].get<std::string>()));
  }

  // One tokenizer shared by threads (the piece cache is locked) gives each the same ids.
  void sharedAcrossThreads() {
    const text::QwenTokenizer tok(kDir);
    std::vector<std::vector<int64_t>> want;
    for (const json& c : cases()["cases"]) want.push_back(c["ids"].get<std::vector<int64_t>>());
    std::vector<int> good(4, 0);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < good.size(); ++t)
      threads.emplace_back([&, t] {
        for (int round = 0; round < 20; ++round)
          for (size_t i = 0; i < want.size(); ++i)
            good[t] += tok.encode(cases()["cases"][i]["text"].get<std::string>()) == want[i];
      });
    for (auto& th : threads) th.join();
    for (int g : good) QCOMPARE(g, static_cast<int>(20 * want.size()));
  }

  void missingOrBrokenFileIsAClearError() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    QVERIFY(error_of([&] { text::QwenTokenizer t(dir); }).contains("no tokenizer.json"));
    QVERIFY(error_of([&] { text::QwenTokenizer t(dir + "/nope.json"); }).contains("nope.json"));

    const json good = read_json(kDir + "/tokenizer.json");
    // Each broken variant must be refused with the file named and the reason given.
    auto refused = [&](const std::string& name, const std::string& body, const char* reason) {
      const std::string path = dir + "/" + name;
      ws::test::write_bytes(path, body);
      const QString e = error_of([&] { text::QwenTokenizer t(path); });
      QVERIFY2(e.startsWith(QString::fromStdString(path + ": ")), qPrintable(e));
      QVERIFY2(e.contains(reason), qPrintable(e));
      QVERIFY2(!e.contains('\n'), qPrintable(e));
    };
    refused("truncated.json", good.dump().substr(0, 500), "not a HuggingFace tokenizer.json");
    refused("empty.json", "", "not a HuggingFace tokenizer.json");
    refused("array.json", "[1, 2]", "no \"model\"");
    json j = good;
    j["model"]["type"] = "WordPiece";
    refused("wordpiece.json", j.dump(), "no BPE");
    j = good;
    j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\s+";
    refused("regex.json", j.dump(), "pre_tokenizer is not Qwen2's");
    j = good;
    j["normalizer"] = {{"type", "NFKC"}};
    refused("nfkc.json", j.dump(), "normalizer");
    j = good;
    j["model"]["merges"].push_back("Ġ nosuchtoken");
    refused("merge.json", j.dump(), "not in the vocab");
    j = good;
    j["model"]["merges"].push_back(42);
    refused("merge_type.json", j.dump(), "neither");
    j = good;
    j["model"]["vocab"].erase("Ġ");
    refused("bytes.json", j.dump(), "not a byte-level BPE");
    j = good;
    j["model"]["vocab"]["Ġthe"] = "267";
    refused("id.json", j.dump(), "no valid id");
    j = good;
    j["added_tokens"][0]["id"] = 5000000;
    refused("sparse.json", j.dump(), "token ids run to 5000000");
    j = good;
    j["added_tokens"][0]["lstrip"] = true;
    refused("lstrip.json", j.dump(), "not supported");
  }
};

QTEST_GUILESS_MAIN(TestQwenTokenizer)
#include "test_qwen_tokenizer.moc"
