// SPDX-License-Identifier: Apache-2.0
// The UMT5 encoder and tokenizer beyond the parity cases (docs/design/umt5.md): the bucket
// thresholds, padding that never changes a real token's output, the unpadded path, bf16, strict
// loading, and the tokenizer's edge cases (empty, very long, special-token strings).
#include <QtTest/QtTest>

#include <chrono>

#include "core/error.h"
#include "core/sha256.h"
#include "io/safetensors.h"
#include "models/umt5.h"
#include "test_paths.h"
#include "test_util.h"
#include "text/caption_clean.h"
#include "text/prompts.h"
#include "text/umt5_tokenizer.h"

using namespace ws;
using ws::test::error_of;

namespace {
const std::string kDir = std::string(WS_TEST_DATA) + "/t5";
models::Umt5Encoder tiny() { return models::Umt5Encoder::load(kDir + "/t5_dev_weights.safetensors"); }
}  // namespace

class TestUmt5 : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void bucketThresholds() {
    // The released 32 buckets: a → b per the table of §3.3, the last bucket from 91.
    const std::vector<std::pair<int64_t, int64_t>> table{{0, 0},   {7, 7},   {8, 8},   {11, 8},  {12, 9},  {15, 9},
                                                         {16, 10}, {22, 10}, {23, 11}, {31, 11}, {32, 12}, {45, 12},
                                                         {46, 13}, {63, 13}, {64, 14}, {90, 14}, {91, 15}, {5000, 15}};
    for (auto [a, b] : table) {
      QCOMPARE(models::umt5_relative_bucket(-a, 32, 128), b);                 // keys before the query
      if (a > 0) QCOMPARE(models::umt5_relative_bucket(a, 32, 128), 16 + b);  // after: the upper half
    }
  }

  void configFromShapes() {
    const auto e = tiny();
    QCOMPARE(e.config().vocab, int64_t{512});
    QCOMPARE(e.config().dim, int64_t{32});
    QCOMPARE(e.config().num_heads, int64_t{4});
    QCOMPARE(e.config().num_layers, int64_t{2});
    const auto inferred = models::Umt5Config::infer(io::read_safetensors(kDir + "/t5_dev_weights.safetensors"), "x");
    QCOMPARE(inferred.to_json(), e.config().to_json());
  }

  // Padding never changes a real token's output: other ids in the padded positions leave the
  // real rows bit-identical, and each caption alone at its own length matches the padded batch.
  void paddingIsInvisible() {
    const auto e = tiny();
    torch::manual_seed(5);
    const int64_t L = 24, n = 9;
    auto ids = torch::zeros({1, L}, torch::kInt64), mask = torch::zeros({1, L}, torch::kInt64);
    ids.index_put_({0, torch::indexing::Slice(0, n - 1)}, torch::randint(3, 512, {n - 1}, torch::kInt64));
    ids.index_put_({0, n - 1}, 1);
    mask.index_put_({0, torch::indexing::Slice(0, n)}, 1);
    auto other = ids.clone();
    other.index_put_({0, torch::indexing::Slice(n, L)}, torch::randint(3, 512, {L - n}, torch::kInt64));
    const auto a = e.forward(ids, mask)[0].slice(0, 0, n), b = e.forward(other, mask)[0].slice(0, 0, n);
    QVERIFY(torch::equal(a, b));
    std::vector<int64_t> real(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + n);
    const auto alone = e.encode(real);
    QCOMPARE(alone.size(0), n);
    QVERIFY((alone - a).abs().max().item<double>() <= 3e-6);
  }

  // The released checkpoint is bf16: held as loaded and converted a matrix at a time (through a
  // reused buffer), it must give exactly what the same values held in fp32 give.
  void bf16WeightsComputeInFp32Exactly() {
    const auto pth = models::Umt5Encoder::load(kDir + "/t5_dev_weights.pth");
    const auto st = tiny();
    const std::vector<int64_t> a{5, 17, 300, 42, 1}, b{9, 1};
    QVERIFY(torch::equal(pth.encode(a), st.encode(a)));
    QVERIFY(torch::equal(pth.encode(b), st.encode(b)));  // buffers reused across calls
    QVERIFY(torch::equal(pth.encode(a), st.encode(a)));
  }

  void bf16IsCloseAndFp16Refused() {
    auto e = tiny();
    const std::vector<int64_t> ids{5, 17, 300, 42, 1};
    const auto f32 = e.encode(ids);
    e.set_compute_dtype(torch::kBFloat16);
    const auto bf = e.encode(ids);
    QCOMPARE(bf.scalar_type(), torch::kBFloat16);
    QVERIFY((bf.to(torch::kFloat) - f32).abs().max().item<double>() < 0.2);  // umt5.md §8: the bf16 tolerance
    QVERIFY(error_of([&] { e.set_compute_dtype(torch::kHalf); }).contains("fp16"));
    QVERIFY(error_of([&] { tiny().encode({600, 1}); }).contains("vocabulary"));
  }

  void strictLoading() {
    auto sd = io::read_safetensors(kDir + "/t5_dev_weights.safetensors");
    const auto c = models::Umt5Encoder::load(kDir + "/t5_dev_weights.safetensors").config();
    auto missing = sd;
    missing.erase("blocks.1.ffn.fc2.weight");
    QVERIFY(error_of([&] { models::Umt5Encoder(c, missing, "m.pth"); }).contains("blocks.1.ffn.fc2.weight"));
    auto extra = sd;
    extra["blocks.0.attn.q.bias"] = torch::zeros({32});
    QVERIFY(error_of([&] { models::Umt5Encoder(c, extra, "m.pth"); }).contains("unexpected key blocks.0.attn.q.bias"));
    auto wrong = sd;
    wrong["norm.weight"] = torch::zeros({31});
    QVERIFY(error_of([&] { models::Umt5Encoder(c, wrong, "m.pth"); }).contains("norm.weight has shape [31]"));
    // The transformers layout loads under its own names.
    io::StateDict hf;
    for (auto& [k, v] : sd) {
      std::string n = k;
      auto rep = [&](const std::string& a, const std::string& b) {
        auto p = n.find(a);
        if (p != std::string::npos) n.replace(p, a.size(), b);
      };
      if (n == "token_embedding.weight") n = "shared.weight";
      rep("blocks.", "encoder.block.");
      rep(".norm1", ".layer.0.layer_norm");
      rep(".attn.", ".layer.0.SelfAttention.");
      rep(".pos_embedding.embedding", ".layer.0.SelfAttention.relative_attention_bias");
      rep(".norm2", ".layer.1.layer_norm");
      rep(".ffn.gate.0", ".layer.1.DenseReluDense.wi_0");
      rep(".ffn.fc1", ".layer.1.DenseReluDense.wi_1");
      rep(".ffn.fc2", ".layer.1.DenseReluDense.wo");
      if (n == "norm.weight") n = "encoder.final_layer_norm.weight";
      hf[n] = v;
    }
    const models::Umt5Encoder a(c, sd), b(c, hf);
    QVERIFY(torch::equal(a.encode({7, 8, 9, 1}), b.encode({7, 8, 9, 1})));
  }

  void tokenizerEdgeCases() {
    const text::Umt5Tokenizer t(kDir + "/t5_dev_tokenizer.model");
    auto empty = t.encode("", 512);
    QCOMPARE(empty.ids, std::vector<int64_t>{t.eos_id()});  // EOS alone
    QVERIFY(!empty.truncated);
    std::string longer;
    for (int i = 0; i < 10000; ++i) longer += "a fox runs ";  // 110 000 characters
    const auto t0 = std::chrono::steady_clock::now();
    auto l = t.encode(longer, 512);
    QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));  // not quadratic
    QVERIFY(l.truncated);
    QCOMPARE(l.ids.size(), size_t{512});
    QCOMPARE(l.ids.back(), t.eos_id());
    QVERIFY(l.content_tokens > 511);
    // "</s>" in a caption (e.g. from "&lt;/s&gt;") is the EOS token, as HF matches it whole.
    auto s = t.encode("a &lt;/s&gt; b", 512);
    QVERIFY(std::count(s.ids.begin(), s.ids.end(), t.eos_id()) == 2);
    QVERIFY(error_of([&] { text::Umt5Tokenizer("/nonexistent/spiece.model"); }).contains("/nonexistent/spiece.model"));
    QVERIFY(error_of([&] {
              text::Umt5Tokenizer(kDir + "/t5_dev_weights.safetensors");
            }).contains("not a SentencePiece model"));
  }

  void cleaningRules() {
    QCOMPARE(text::clean_caption("  a\tb\n\nc  "), std::string("a b c"));
    QCOMPARE(text::clean_caption("Tom &amp;amp; Jerry &EACUTE;t&eacute;"),
             std::string("Tom & Jerry \xC3\x89t\xC3\xA9"));
    QCOMPARE(text::clean_caption("\xE2\x80\x9Cquoted\xE2\x80\x9D it\xE2\x80\x99s"), std::string("\"quoted\" it's"));
    QCOMPARE(text::clean_caption("x\x1B[31mred\x1B[0m y"), std::string("xred y"));
    QCOMPARE(text::html_unescape("&amp &ampx; &#x41;&#66 &#0; &#xD800;"),
             std::string("& &x; AB \xEF\xBF\xBD \xEF\xBF\xBD"));
    // With "<" in the text ftfy decodes no entity, but html.unescape still does.
    QCOMPARE(text::ftfy_fix_text("<b>&amp;</b>"), std::string("<b>&amp;</b>"));
    QCOMPARE(text::clean_caption("<b>&amp;amp;</b>"), std::string("<b>&</b>"));
    QCOMPARE(sha256_hex(text::kWanNegativePrompt),
             std::string("ce96e0324e4b54ce4b6e867f669ca520952e1a34cc116543516b1897f0d3c47e"));
  }
};

QTEST_APPLESS_MAIN(TestUmt5)
#include "test_umt5.moc"
