// SPDX-License-Identifier: Apache-2.0
// Wan DiT: both parity kinds on the fixtures in-process, strict loading (missing key named,
// diffusers-named shards), gradient checkpointing = plain backward, padded sequences and
// per-token timesteps, and the config readers.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <fstream>

#include "core/error.h"
#include "io/safetensors.h"
#include "io/weights.h"
#include "models/cpu_gemm.h"
#include "models/grad_checkpoint.h"
#include "models/wan_dit.h"
#include "models/cpu_attention.h"
#include "models/wan_dit_ops.h"
#include "sampling/expert_sampler.h"
#include "cli/parity/parity_dit.h"
#include "test_paths.h"
#include "test_util.h"

using ws::models::WanConfig;
using ws::models::WanModel;

using ws::test::error_of;
using ws::test::read_bytes;
using ws::test::write_bytes;

namespace {

const std::string kDir = std::string(WS_TEST_DATA) + "/dit";
const std::string kCaseA = kDir + "/dit_dev_a_high_t";
const std::string kCaseB = kDir + "/dit_dev_b_low_t_pad";

WanConfig tiny_config() { return ws::models::load_wan_config(kCaseA + ".json"); }

WanModel tiny_model() { return ws::models::load_wan_model(tiny_config(), kCaseA + ".weights.safetensors"); }

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// Official -> diffusers names, written out independently of the loader's table.
std::string to_diffusers(std::string k) {
  const std::vector<std::pair<std::string, std::string>> rules = {
      {"time_embedding.0.", "condition_embedder.time_embedder.linear_1."},
      {"time_embedding.2.", "condition_embedder.time_embedder.linear_2."},
      {"time_projection.1.", "condition_embedder.time_proj."},
      {"text_embedding.0.", "condition_embedder.text_embedder.linear_1."},
      {"text_embedding.2.", "condition_embedder.text_embedder.linear_2."},
      {"head.head.", "proj_out."},
      {".self_attn.q.", ".attn1.to_q."},
      {".self_attn.k.", ".attn1.to_k."},
      {".self_attn.v.", ".attn1.to_v."},
      {".self_attn.o.", ".attn1.to_out.0."},
      {".self_attn.norm_", ".attn1.norm_"},
      {".cross_attn.q.", ".attn2.to_q."},
      {".cross_attn.k.", ".attn2.to_k."},
      {".cross_attn.v.", ".attn2.to_v."},
      {".cross_attn.o.", ".attn2.to_out.0."},
      {".cross_attn.norm_", ".attn2.norm_"},
      {".ffn.0.", ".ffn.net.0.proj."},
      {".ffn.2.", ".ffn.net.2."},
      {".norm3.", ".norm2."},
  };
  if (k == "head.modulation") return "scale_shift_table";
  if (k.size() > 11 && k.substr(k.size() - 11) == ".modulation")
    return k.substr(0, k.size() - 10) + "scale_shift_table";
  for (const auto& [from, to] : rules) {
    auto pos = k.find(from);
    if (pos != std::string::npos) return k.replace(pos, from.size(), to);
  }
  return k;
}

}  // namespace

class TestDit : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void parityForward() { QCOMPARE(ws::cli::parity_dit(kDir), 0); }

  void parityTrain() { QCOMPARE(ws::cli::parity_dit_train(std::string(WS_TEST_DATA) + "/train"), 0); }

  void strictLoadNamesMissingKey() {
    QTemporaryDir tmp;
    auto sd = ws::io::read_safetensors(kCaseA + ".weights.safetensors");
    QVERIFY(sd.erase("blocks.1.cross_attn.norm_k.weight") == 1);
    const std::string path = tmp.filePath("w.safetensors").toStdString();
    ws::io::write_safetensors(path, sd);
    QString err = error_of([&] { ws::models::load_wan_model(tiny_config(), path); });
    QVERIFY2(err.contains("blocks.1.cross_attn.norm_k.weight"), qPrintable(err));
    QVERIFY2(err.contains("w.safetensors"), qPrintable(err));
    // An extra key is an error too.
    sd = ws::io::read_safetensors(kCaseA + ".weights.safetensors");
    sd["blocks.0.norm2.weight"] = torch::ones({64});
    ws::io::write_safetensors(path, sd);
    err = error_of([&] { ws::models::load_wan_model(tiny_config(), path); });
    QVERIFY2(err.contains("blocks.0.norm2.weight"), qPrintable(err));
  }

  void diffusersShardsLoad() {
    QTemporaryDir tmp;
    auto sd = ws::io::read_safetensors(kCaseA + ".weights.safetensors");
    ws::io::StateDict renamed;
    for (const auto& [k, v] : sd) renamed[to_diffusers(k)] = v;
    QVERIFY(renamed.count("blocks.0.norm2.weight") && renamed.count("scale_shift_table"));
    ws::io::write_sharded_safetensors(tmp.path().toStdString(), "diffusion_pytorch_model", renamed, 200000);
    const std::string index = tmp.filePath("diffusion_pytorch_model.safetensors.index.json").toStdString();
    QVERIFY(QFile::exists(QString::fromStdString(index)));
    auto a = ws::models::load_wan_model(tiny_config(), index);
    auto ref = tiny_model();
    auto pa = a->named_parameters();
    for (const auto& kv : ref->named_parameters()) QVERIFY2(torch::equal(kv.value(), pa[kv.key()]), kv.key().c_str());
  }

  void samplerTextCacheSameLatents() {
    // Two experts, 4 steps: cached, each expert embeds the prompt and the negative prompt once
    // (4 embeddings); recomputed, both at every step (8). The latents agree bit for bit.
    torch::manual_seed(3);
    ws::sampling::SamplerInputs in;
    in.noise = torch::randn({48, 2, 4, 6});
    in.context = torch::randn({5, 32});
    in.context_null = torch::randn({3, 32});
    auto run = [&](bool cache, int64_t& embeddings) {
      ws::sampling::SamplerModels m{tiny_model(), tiny_model()};
      torch::NoGradGuard ng;
      for (auto& p : m.high->parameters()) p.mul_(0.9);  // experts that differ
      m.high->eval();
      m.low->eval();
      ws::sampling::SamplerOptions o;
      o.steps = 4;
      o.shift = 5.0;
      o.boundary = 0.9;
      o.cache_text = cache;
      const int64_t before = ws::models::wan_text_embeddings();
      auto x = ws::sampling::sample_latents(m, in, o);
      embeddings = ws::models::wan_text_embeddings() - before;
      return x;
    };
    int64_t cached = 0, recomputed = 0;
    auto a = run(true, cached), b = run(false, recomputed);
    QCOMPARE(cached, int64_t{4});
    QCOMPARE(recomputed, int64_t{8});
    QVERIFY(torch::equal(a, b));
    // The cache belongs to its model and to inference.
    auto m = tiny_model();
    auto cache = m->encode_text(in.context);
    QVERIFY(error_of([&] { m->forward(in.noise, torch::full({1}, 500.0f), cache); }).contains("inference"));
    torch::NoGradGuard ng;
    ws::models::WanTextCache other;
    QVERIFY(error_of([&] { m->forward(in.noise, torch::full({1}, 500.0f), other); }).contains("another model"));
  }

  void geluLinearKeepsLessSameGradients() {
    // linear(gelu(h)) with only h kept: the same output and gradients, bit for bit, as autograd's
    // over the engine's Linear (whichever GEMM it runs on this CPU, models/cpu_gemm.h).
    torch::manual_seed(5);
    auto h = torch::randn({2, 7, 12}, torch::requires_grad()), w = torch::randn({5, 12}, torch::requires_grad()),
         b = torch::randn({5}, torch::requires_grad());
    auto go = torch::randn({2, 7, 5});
    auto plain = ws::models::gemm_linear(torch::gelu(h, "tanh"), w, b);
    auto fused = ws::models::wan_gelu_linear(h, w, b);
    QVERIFY(torch::equal(plain, fused));
    auto gp = torch::autograd::grad({plain}, {h, w, b}, {go});
    auto gf = torch::autograd::grad({fused}, {h, w, b}, {go});
    for (int i = 0; i < 3; ++i)
      QVERIFY2(torch::equal(gp[i], gf[i]),
               qPrintable(QString("%1: %2").arg(i).arg((gp[i] - gf[i]).abs().max().item<double>())));
  }

  void gradientCheckpointingSameGradients() {
    torch::manual_seed(7);
    auto x = torch::randn({48, 2, 4, 6});
    auto ctx = torch::randn({5, 32});
    auto target = torch::randn({48, 2, 4, 6});
    // Per-token timesteps (e0 differs per token) and a scalar t (e0 broadcast).
    for (const auto& t : {torch::rand({1, 12}) * 1000, torch::full({1}, 937.0f)}) {
      auto grads = [&](bool ckpt) {
        auto m = tiny_model();
        m->train();
        m->set_gradient_checkpointing(ckpt);
        auto loss = torch::mse_loss(m->forward(x, t, ctx, 12), target);
        loss.backward();
        std::map<std::string, torch::Tensor> g;
        for (const auto& kv : m->named_parameters()) g[kv.key()] = kv.value().grad();
        return g;
      };
      const int64_t f0 = ws::models::checkpointed_forwards(), r0 = ws::models::checkpoint_recomputations();
      auto plain = grads(false);
      QCOMPARE(ws::models::checkpointed_forwards(), f0);  // off: no block is checkpointed
      auto ckpt = grads(true);
      // On: each block runs once without a graph and once more in backward.
      QCOMPARE(ws::models::checkpointed_forwards() - f0, tiny_config().num_layers);
      QCOMPARE(ws::models::checkpoint_recomputations() - r0, tiny_config().num_layers);
      QCOMPARE(plain.size(), size_t{69});
      for (const auto& [k, g] : plain) {
        QVERIFY2(g.defined() && ckpt[k].defined(), k.c_str());
        QVERIFY2(max_diff(g, ckpt[k]) <= 1e-6, k.c_str());
      }
    }
  }

  void chunkedAttention() {
    // Query chunks (forward) and the recomputing backward equal plain softmax attention. The
    // composed attention: the tiled one (the CPU's default) has test_cpu_attention.
    const bool tiled = ws::models::cpu_attention_choice() == "tiled";
    ws::models::set_cpu_attention(false);
    struct Restore {
      bool on;
      ~Restore() { ws::models::set_cpu_attention(on); }
    } restore{tiled};
    torch::manual_seed(3);
    auto q = torch::randn({2, 13, 8}, torch::requires_grad()), k = torch::randn({2, 9, 8}, torch::requires_grad()),
         v = torch::randn({2, 9, 8}, torch::requires_grad());
    auto go = torch::randn({2, 13, 8});
    const double s = 1.0 / std::sqrt(8.0);
    auto plain = torch::matmul(torch::softmax(torch::matmul(q, k.transpose(1, 2)) * s, -1), v);
    auto g_ref = torch::autograd::grad({plain}, {q, k, v}, {go});
    // Whole, one head a block, rows of one head, one row.
    for (int64_t max_scores : {int64_t{1} << 25, int64_t{13 * 9 + 1}, int64_t{2 * 9 * 4}, int64_t{1}}) {
      auto out = ws::models::wan_attention(q, k, v, s, max_scores);
      QVERIFY(max_diff(out, plain) <= 1e-6);
      auto g = torch::autograd::grad({out}, {q, k, v}, {go});
      for (int i = 0; i < 3; ++i) QVERIFY(max_diff(g[i], g_ref[i]) <= 1e-6);
      torch::NoGradGuard no_grad;
      QVERIFY(max_diff(ws::models::wan_attention(q, k, v, s, max_scores), plain) <= 1e-6);
    }
  }

  void paddedSequence() {
    torch::NoGradGuard no_grad;
    auto io = ws::io::read_safetensors(kCaseB + ".case.safetensors");
    auto m = tiny_model();
    m->eval();
    const auto x = io.at("x"), ctx = io.at("context");
    auto ref = m->forward(x, io.at("t"), ctx, 30);
    QVERIFY(max_diff(ref, io.at("out")) <= 1e-4);
    // Padding to seq_len 40 with per-token t: the padded entries do not matter.
    auto t = torch::full({1, 40}, 250.0f);
    t.slice(1, 30).fill_(999.0f);
    auto padded = m->forward(x, t, ctx, 40);
    QVERIFY(max_diff(padded, ref) <= 1e-5);
    // seq_len defaults to the token count; scalar t.
    QVERIFY(max_diff(m->forward(x, io.at("t"), ctx), ref) == 0);
    // Per-token t reaches the tokens: changing one token's t changes the output.
    auto t2 = t.clone();
    t2[0][0].fill_(0.0f);
    QVERIFY(max_diff(m->forward(x, t2, ctx, 40), ref) > 1e-3);
    QVERIFY(error_of([&] { m->forward(x, io.at("t"), ctx, 29); }).contains("seq_len"));
    QVERIFY(error_of([&] { m->forward(x, torch::full({1, 35}, 250.0f), ctx, 40); }).contains("t must have"));
    QVERIFY(!error_of([&] { m->forward(x, io.at("t"), torch::randn({17, 32})); }).isEmpty());
  }

  void configs() {
    QTemporaryDir tmp;
    const std::string yaml = tmp.filePath("dit.yaml").toStdString();
    std::ofstream(yaml) << "model_type: ti2v\nin_dim: 48\nout_dim: 48\ndim: 3072\nffn_dim: 14336\nnum_heads: 24\n"
                           "num_layers: 30\neps: 1.0e-6\nqk_norm: true\n";
    auto c = ws::models::load_wan_config(yaml);
    QCOMPARE(c.model_type, std::string("ti2v"));
    QCOMPARE(c.text_len, int64_t{512});
    QCOMPARE(c.parameter_count(), int64_t{4999787712});
    auto diffusers = nlohmann::json::parse(R"({"_class_name": "WanTransformer3DModel", "num_attention_heads": 40,
      "attention_head_dim": 128, "in_channels": 16, "out_channels": 16, "ffn_dim": 13824, "num_layers": 40,
      "qk_norm": "rms_norm_across_heads", "cross_attn_norm": true, "rope_max_seq_len": 1024, "image_dim": null})");
    auto a14b = WanConfig::from_json(diffusers);
    QCOMPARE(a14b.dim, int64_t{5120});
    QCOMPARE(a14b.parameter_count(), int64_t{14288491584});
    int64_t n = 0;
    for (const auto& p : tiny_model()->parameters()) n += p.numel();
    QCOMPARE(tiny_config().parameter_count(), n);
    QVERIFY(error_of([] { WanConfig::from_json(nlohmann::json{{"dim", 64}}); }).contains("missing required key"));
    diffusers["image_dim"] = 1280;
    QVERIFY(!error_of([&] { WanConfig::from_json(diffusers); }).isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestDit)
#include "test_dit.moc"
