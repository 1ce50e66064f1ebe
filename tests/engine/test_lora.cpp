// SPDX-License-Identifier: Apache-2.0
// LoRA on the Wan DiT: a fresh adapter changes nothing; the adapter's forward equals the merged
// weights'; alpha/r scales it; files round-trip in both formats under the names musubi-tuner,
// ComfyUI and diffusers use; the adapters train through gradient checkpointing (dropout masks
// replayed); files that do not fit are errors naming the adapter.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include <filesystem>

#include "core/error.h"
#include "io/safetensors.h"
#include "models/wan_dit.h"
#include "models/wan_lora.h"
#include "test_paths.h"
#include "test_util.h"
#include "train/experts/expert_lora.h"
#include "train/experts/expert_step.h"

using ws::models::LoraFormat;
using ws::models::LoraSpec;
using ws::models::WanLora;
using ws::models::WanModel;
using ws::test::error_of;

namespace {

const std::string kCase = std::string(WS_TEST_DATA) + "/dit/dit_dev_a_high_t";

WanModel tiny_model() {
  return ws::models::load_wan_model(ws::models::load_wan_config(kCase + ".json"), kCase + ".weights.safetensors");
}

struct Inputs {
  torch::Tensor x, t, ctx;
};
Inputs inputs() {
  torch::manual_seed(3);
  return {torch::randn({48, 2, 4, 6}), torch::full({1}, 900.0f), torch::randn({5, 32})};
}

torch::Tensor run(WanModel& m, const Inputs& in) {
  torch::NoGradGuard ng;
  m->eval();
  return m->forward(in.x, in.t, in.ctx, 12);
}

// Random (non-zero) up matrices, so the adapter does something.
WanLora random_lora(WanModel& m, int64_t rank, double alpha, std::vector<std::string> targets = {}) {
  torch::manual_seed(11);
  WanLora l = WanLora::create(*m, LoraSpec{rank, alpha, 0.0, std::move(targets)});
  torch::NoGradGuard ng;
  for (const auto& e : l.entries()) e.up.copy_(torch::randn(e.up.sizes()) * 0.05);
  return l;
}

// One training sample for the tiny model at t = 900 (seed 2).
ws::train::ExpertStepInput step_input() {
  torch::manual_seed(2);
  ws::train::ExpertStepInput in;
  in.x0 = torch::randn({48, 2, 4, 6});
  in.noise = torch::randn({48, 2, 4, 6});
  in.sigma = 0.9f;
  in.t = 900;
  in.context = torch::randn({5, 32});
  in.seq_len = 12;
  return in;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

}  // namespace

class TestLora : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void freshAdapterChangesNothing() {
    auto m = tiny_model();
    const Inputs in = inputs();
    const auto ref = run(m, in);
    torch::manual_seed(1);
    WanLora l = WanLora::create(*m, LoraSpec{4, 4, 0.0, {}});
    QCOMPARE(l.entries().size(), size_t(2 * 10));  // 2 blocks × the 10 block Linears
    for (const auto& e : l.entries()) {
      QVERIFY(torch::equal(e.up, torch::zeros_like(e.up)));
      const double bound = 1.0 / std::sqrt(double(e.down.size(1)));  // kaiming-uniform, a = √5
      QVERIFY(e.down.abs().max().item<double>() <= bound);
      QVERIFY(e.down.abs().max().item<double>() > 0.5 * bound);
      QVERIFY(e.down.requires_grad() && e.up.requires_grad());
    }
    l.attach(*m);
    QVERIFY(torch::equal(run(m, in), ref));
  }

  void adapterEqualsMergedWeightsAndScales() {
    const Inputs in = inputs();
    auto base = tiny_model();
    const auto ref = run(base, in);
    auto a = tiny_model();
    WanLora l = random_lora(a, 4, 8);  // alpha/r = 2
    l.attach(*a, 0.5);                 // multiplier 0.5: scale 1
    const auto adapted = run(a, in);
    QVERIFY(max_diff(adapted, ref) > 1e-3);  // it does something
    auto merged = tiny_model();
    l.merge_into(*merged, 0.5);
    QVERIFY2(max_diff(run(merged, in), adapted) < 1e-5,
             qPrintable(QString::number(max_diff(run(merged, in), adapted))));
    // The same adapter at alpha = r and multiplier 1 is the same map (scale 1 again).
    auto b = tiny_model();
    WanLora l2 = random_lora(b, 4, 4);
    l2.attach(*b, 1.0);
    QVERIFY(max_diff(run(b, in), adapted) < 1e-6);
    // Multiplier 0 is the base model; detach removes the adapters.
    l.attach(*a, 0.0);
    QVERIFY(max_diff(run(a, in), ref) < 1e-7);
    l.attach(*a, 1.0);
    WanLora::detach(*a);
    QVERIFY(torch::equal(run(a, in), ref));
  }

  void filesRoundTripUnderTheirNames() {
    const Inputs in = inputs();
    auto m = tiny_model();
    WanLora l = random_lora(m, 4, 2);
    l.attach(*m);
    const auto adapted = run(m, in);
    const auto musubi = l.state_dict(LoraFormat::Musubi);
    for (const char* k :
         {"lora_unet_blocks_0_self_attn_q.lora_down.weight", "lora_unet_blocks_0_self_attn_q.lora_up.weight",
          "lora_unet_blocks_0_self_attn_q.alpha", "lora_unet_blocks_1_cross_attn_o.lora_up.weight",
          "lora_unet_blocks_1_ffn_0.lora_down.weight", "lora_unet_blocks_1_ffn_2.alpha"})
      QVERIFY2(musubi.count(k), k);
    QCOMPARE(musubi.size(), size_t(20 * 3));
    QCOMPARE(musubi.at("lora_unet_blocks_0_self_attn_q.alpha").item<float>(), 2.0f);
    QCOMPARE(musubi.at("lora_unet_blocks_0_self_attn_q.lora_down.weight").sizes().vec(), (std::vector<int64_t>{4, 64}));
    const auto peft = l.state_dict(LoraFormat::Peft);
    for (const char* k :
         {"transformer.blocks.0.attn1.to_q.lora_A.weight", "transformer.blocks.0.attn1.to_out.0.lora_B.weight",
          "transformer.blocks.1.attn2.to_k.lora_A.weight", "transformer.blocks.1.ffn.net.0.proj.lora_B.weight",
          "transformer.blocks.0.ffn.net.2.lora_A.weight"})
      QVERIFY2(peft.count(k), k);
    QCOMPARE(peft.size(), size_t(20 * 2));

    std::filesystem::path dir = std::filesystem::temp_directory_path() / "ws_test_lora";
    std::filesystem::create_directories(dir);
    for (auto f : {LoraFormat::Musubi, LoraFormat::Peft}) {
      const std::string path = (dir / (f == LoraFormat::Musubi ? "m.safetensors" : "p.safetensors")).string();
      l.save(path, f);
      LoraFormat seen{};
      QVERIFY(WanLora::looks_like_lora(ws::io::read_safetensors(path), &seen));
      QVERIFY(seen == f);
      const WanLora back = WanLora::load(path);
      QCOMPARE(back.entries().size(), l.entries().size());
      QCOMPARE(back.rank(), int64_t{4});
      auto m2 = tiny_model();
      back.attach(*m2);
      QVERIFY2(max_diff(run(m2, in), adapted) < 1e-6, path.c_str());
    }
    // The official Wan names with lora_A/lora_B (ComfyUI's other spelling) load too.
    ws::io::StateDict comfy;
    for (const auto& e : l.entries()) {
      comfy["diffusion_model." + e.path + ".lora_A.weight"] = e.down.detach();
      comfy["diffusion_model." + e.path + ".lora_B.weight"] = e.up.detach();
      comfy["diffusion_model." + e.path + ".alpha"] = torch::tensor(2.0f);
    }
    auto m3 = tiny_model();
    WanLora::from_state_dict(comfy, "comfy").attach(*m3);
    QVERIFY(max_diff(run(m3, in), adapted) < 1e-6);
    std::filesystem::remove_all(dir);
  }

  void trainsThroughCheckpointingWithDropout() {
    const Inputs in = inputs();
    auto grads = [&](bool checkpointing) {
      auto m = tiny_model();
      for (auto& p : m->parameters()) p.requires_grad_(false);
      torch::manual_seed(5);
      WanLora l = WanLora::create(*m, LoraSpec{4, 4, 0.3, {}});
      {
        torch::NoGradGuard ng;
        for (const auto& e : l.entries()) e.up.copy_(torch::randn(e.up.sizes()) * 0.05);
      }
      l.attach(*m, 1.0, 0.3);
      m->train();
      m->set_gradient_checkpointing(checkpointing);
      torch::manual_seed(99);  // the dropout masks
      auto loss = m->forward(in.x, in.t, in.ctx, 12).pow(2).mean();
      loss.backward();
      std::vector<torch::Tensor> g;
      for (const auto& [name, t] : l.named_parameters()) {
        if (!t.grad().defined()) return std::vector<torch::Tensor>{};
        g.push_back(t.grad().clone());
      }
      for (const auto& p : m->parameters()) Q_ASSERT(!p.grad().defined());  // the base stays frozen
      return g;
    };
    const auto plain = grads(false), ckpt = grads(true);
    QCOMPARE(plain.size(), size_t(40));
    QCOMPARE(ckpt.size(), plain.size());
    double worst = 0;
    for (size_t i = 0; i < plain.size(); ++i) worst = std::max(worst, max_diff(plain[i], ckpt[i]));
    QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
    QVERIFY(plain[1].abs().max().item<double>() > 0);  // the up matrices get gradients
  }

  void frozenBaseInBf16() {
    auto m = tiny_model();
    auto lora = ws::train::make_expert_lora(m, LoraSpec{4, 4, 0.0, {"self_attn.q", "ffn.2"}}, true, 42, true);
    QCOMPARE(lora.entries().size(), size_t(2 * 2));
    auto& b = *m->blocks[0]->as<ws::models::WanBlockImpl>();
    QVERIFY(b.self_attn->q->weight.scalar_type() == torch::kBFloat16);
    QVERIFY(b.ffn->l0->weight.scalar_type() == torch::kBFloat16);
    QVERIFY(m->patch_embedding->weight.scalar_type() == torch::kFloat);
    for (const auto& p : m->parameters()) QVERIFY(!p.requires_grad());
    QVERIFY(b.self_attn->lora[0].defined() && !b.self_attn->lora[1].defined() && b.ffn->lora[1].defined());
    // The same seed and expert draw the same adapters; the other expert others.
    auto m2 = tiny_model();
    auto same = ws::train::make_expert_lora(m2, LoraSpec{4, 4, 0.0, {"self_attn.q", "ffn.2"}}, true, 42, true);
    QVERIFY(torch::equal(same.entries()[0].down, lora.entries()[0].down));
    auto m3 = tiny_model();
    auto other = ws::train::make_expert_lora(m3, LoraSpec{4, 4, 0.0, {"self_attn.q", "ffn.2"}}, true, 42, false);
    QVERIFY(!torch::equal(other.entries()[0].down, lora.entries()[0].down));
    // A bf16 base still runs (fp32 activations).
    const Inputs in = inputs();
    QVERIFY(run(m, in).isfinite().all().item<bool>());
  }

  void expertStepTrainsOnlyTheAdapters() {
    for (const bool ckpt : {false, true}) {
      auto m = tiny_model();
      m->set_gradient_checkpointing(ckpt);
      const auto before = ws::io::module_state_dict(*m);
      auto lora = ws::train::make_expert_lora(m, LoraSpec{4, 4, 0.1, {}}, true, 42, true);
      ws::train::ExpertStepOptions o;
      o.learning_rate = 1e-2;
      ws::train::ExpertStep step(m, o, std::move(lora));
      QCOMPARE(step.parameters().size(), size_t(40));
      const auto rec = step.step(step_input());
      QVERIFY2(rec.clip.grad_norm > 0,
               qPrintable(QStringLiteral("checkpointing %1: grad norm %2").arg(ckpt).arg(rec.clip.grad_norm)));
      double up = 0;
      for (const auto& e : step.lora()->entries()) up = std::max(up, e.up.abs().max().item<double>());
      QVERIFY(up > 0);
      // The base did not move (bf16 storage rounds the block Linears once, nothing else).
      for (const auto& [k, v] : ws::io::module_state_dict(*m))
        QVERIFY2(torch::equal(v.to(torch::kFloat), before.at(k).to(v.scalar_type()).to(torch::kFloat)), k.c_str());
    }
  }

  void fp8BaseKeepsOnlyItsCopies() {
    const Inputs in = inputs();
    auto ref_model = tiny_model();
    ref_model->set_fp8(true);
    auto ref_lora = ws::train::make_expert_lora(ref_model, LoraSpec{4, 4, 0.0, {}}, true, 42, false, false);
    const auto ref = run(ref_model, in);
    auto m = tiny_model();
    m->set_fp8(true);
    const int64_t copies = m->fp8_bytes();
    auto lora = ws::train::make_expert_lora(m, LoraSpec{4, 4, 0.0, {}}, true, 42, false, /*fp8_only=*/true);
    QVERIFY(m->fp8_only());
    auto& b = *m->blocks[1]->as<ws::models::WanBlockImpl>();
    QCOMPARE(b.cross_attn->v->weight.numel(), int64_t{0});  // no master weight left
    QCOMPARE(m->fp8_bytes(), copies);
    QVERIFY(torch::equal(run(m, in), ref));  // the same fp8 copies compute the same
    m->refresh_fp8();                        // after an update: the copies stay
    QVERIFY(torch::equal(run(m, in), ref));
    ws::train::ExpertStepOptions o;
    o.learning_rate = 1e-2;
    ws::train::ExpertStep step(m, o, std::move(lora));
    QVERIFY(step.step(step_input()).clip.grad_norm > 0);
    QVERIFY(!torch::equal(run(m, in), ref));  // the adapters moved
  }

  void filesThatDoNotFitAreErrors() {
    auto m = tiny_model();
    WanLora l = random_lora(m, 4, 4);
    auto sd = l.state_dict(LoraFormat::Musubi);
    // Another model: one block only.
    auto cfg = ws::models::load_wan_config(kCase + ".json");
    cfg.num_layers = 1;
    WanModel small(cfg);
    QVERIFY(error_of([&] { l.attach(*small); }).contains("blocks.1."));
    // Another width.
    cfg.num_layers = 2;
    cfg.dim = 32;
    cfg.ffn_dim = 64;
    cfg.num_heads = 2;
    WanModel narrow(cfg);
    QVERIFY(error_of([&] { l.attach(*narrow); }).contains("is [64,64], the weight [32,32]"));
    // Not a LoRA; a stray key; a down without its up; an unknown target.
    QVERIFY(error_of([&] {
              WanLora::from_state_dict({{"blocks.0.self_attn.q.weight", torch::zeros({2, 2})}}, "x.safetensors");
            }).contains("x.safetensors: not a LoRA file"));
    auto stray = sd;
    stray["lora_unet_head_head.lora_down.weight"] = torch::zeros({4, 64});
    QVERIFY(!error_of([&] { WanLora::from_state_dict(stray, "s"); }).isEmpty());
    auto lonely = sd;
    lonely.erase("lora_unet_blocks_0_ffn_0.lora_up.weight");
    QVERIFY(
        error_of([&] { WanLora::from_state_dict(lonely, "s"); }).contains("lora_unet_blocks_0_ffn_0.lora_up.weight"));
    QVERIFY(error_of([&] {
              WanLora::create(*m, LoraSpec{4, 4, 0.0, {"ffn.1"}});
            }).contains("unknown LoRA target 'ffn.1'"));
  }
};

QTEST_MAIN(TestLora)
#include "test_lora.moc"
