// SPDX-License-Identifier: Apache-2.0
// The two finer ways of gradient checkpointing on the CPU build. Offloaded, each block's input is
// copied to "host" memory in forward and back in backward (both CPU here, so the copies are real):
// results bit-equal to keeping it, with two copies a block a micro-batch, also beside block swap.
// Part-wise, the recompute checkpoints each block's three parts again: the same losses, gradients
// equal to rounding (the parts hand their gradients back separately), three more recomputes a
// block, and for LoRA on an fp8 base the same.
#include <QtTest/QtTest>
#include <torch/torch.h>

#include "models/grad_checkpoint.h"
#include "models/wan_dit.h"
#include "tiny_checkpointed_dit.h"
#include "train/experts/expert_lora.h"
#include "train/experts/expert_step.h"

using ws::models::WanModel;

namespace {

constexpr int64_t kLayers = ws::test::kTinyDitLayers;

struct Mode {
  bool offload = false, parts = false;
  int64_t swap = 0;
};

WanModel fresh(const Mode& mode) {
  WanModel m = ws::test::tiny_checkpointed_dit();
  m->set_checkpoint_offload(mode.offload);
  m->set_checkpoint_parts(mode.parts);
  m->set_blocks_to_swap(mode.swap);
  return m;
}

ws::train::ExpertStepInput sample(int seed) { return ws::test::tiny_dit_sample(seed); }

// Largest |a − b| over every parameter, relative to the largest |a|.
double parameter_difference(const WanModel& a, const WanModel& b) {
  double diff = 0, scale = 0;
  const auto pb = b->named_parameters();
  for (const auto& kv : a->named_parameters()) {
    diff = std::max(diff, (kv.value() - pb[kv.key()]).abs().max().item<double>());
    scale = std::max(scale, kv.value().abs().max().item<double>());
  }
  return diff / scale;
}

struct Trace {
  std::vector<double> losses, norms;
};

// Two updates of two micro-batches each, full fine-tuning.
Trace train(ws::train::ExpertStep& e) {
  Trace t;
  for (int step = 0; step < 2; ++step) {
    e.begin_accumulation();
    double loss = 0;
    for (int micro = 0; micro < 2; ++micro) loss += e.accumulate(sample(10 * step + micro), 0.5);
    t.losses.push_back(loss);
    t.norms.push_back(e.finish_gradients().grad_norm);
    e.update();
  }
  return t;
}

ws::train::ExpertStepOptions options() {
  ws::train::ExpertStepOptions o;
  o.learning_rate = 1e-3;
  o.clip.max_grad_norm = 0.5;
  return o;
}

}  // namespace

class TestCheckpointModes : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void offloadEqualsKeeping_data() {
    QTest::addColumn<int>("swap");
    QTest::newRow("no swap") << 0;
    QTest::newRow("beside block swap") << 2;
  }
  void offloadEqualsKeeping() {
    QFETCH(int, swap);
    ws::train::ExpertStep a(fresh({}), options()), b(fresh({true, false, swap}), options());
    const auto before = ws::models::checkpoint_offload_stats();
    const Trace ta = train(a);
    const auto between = ws::models::checkpoint_offload_stats();
    QCOMPARE(between.copies, before.copies);  // keeping the inputs copies nothing
    const Trace tb = train(b);
    for (size_t i = 0; i < ta.losses.size(); ++i) {
      QVERIFY(ta.losses[i] == tb.losses[i]);  // exact, not QCOMPARE's fuzzy doubles
      QVERIFY(ta.norms[i] == tb.norms[i]);
    }
    QVERIFY(parameter_difference(a.model(), b.model()) == 0);
    // Each micro-batch: every block's input to host memory in forward and back in backward.
    const auto after = ws::models::checkpoint_offload_stats();
    QCOMPARE(after.copies - between.copies, int64_t{4 * 2 * kLayers});
    // The residual stream: seq_len 12 rows of dim floats, each way.
    const int64_t dim = a.model()->config().dim;
    QCOMPARE(after.bytes - between.bytes, int64_t{4 * 2 * kLayers * 12 * dim * 4});
  }

  void partsMatchBlocks() {
    ws::train::ExpertStep a(fresh({}), options()), b(fresh({false, true, 0}), options());
    const int64_t r0 = ws::models::checkpoint_recomputations();
    const Trace ta = train(a);
    const int64_t r1 = ws::models::checkpoint_recomputations();
    const Trace tb = train(b);
    const int64_t r2 = ws::models::checkpoint_recomputations();
    // A block a micro-batch, and with parts its three parts besides.
    QCOMPARE(r1 - r0, int64_t{4 * kLayers});
    QCOMPARE(r2 - r1, int64_t{4 * kLayers * 4});
    QVERIFY(ta.losses[0] == tb.losses[0]);  // the forward is the same computation
    for (size_t i = 0; i < ta.losses.size(); ++i) {
      QVERIFY2(std::abs(ta.losses[i] - tb.losses[i]) <= 1e-6 * std::abs(ta.losses[i]), "losses drift");
      QVERIFY2(std::abs(ta.norms[i] - tb.norms[i]) <= 1e-5 * ta.norms[i], "gradient norms differ");
    }
    const double d = parameter_difference(a.model(), b.model());
    QVERIFY2(d < 1e-6, qPrintable(QString("parameters differ by %1").arg(d)));
    QVERIFY(parameter_difference(fresh({}), b.model()) > 1e-4);  // and the steps did train
  }

  void partsAndOffloadWithLoraOnFp8() {
    auto make = [](const Mode& mode) {
      auto m = fresh({});
      m->set_fp8(true);
      auto lora = ws::train::make_expert_lora(m, ws::models::LoraSpec{4, 4, 0.0, {}}, true, 42, false,
                                              /*fp8_only=*/true);
      m->set_checkpoint_offload(mode.offload);
      m->set_checkpoint_parts(mode.parts);
      m->set_blocks_to_swap(mode.swap);
      ws::train::ExpertStepOptions o;
      o.learning_rate = 1e-2;
      return std::make_unique<ws::train::ExpertStep>(m, o, std::move(lora));
    };
    auto a = make({}), b = make({true, true, 3});
    for (int step = 0; step < 3; ++step) {
      const auto in = sample(20 + step);
      const auto ra = a->step(in), rb = b->step(in);
      QVERIFY2(std::abs(ra.loss - rb.loss) <= 1e-6 * std::abs(ra.loss), "losses drift");
      QVERIFY2(std::abs(ra.clip.grad_norm - rb.clip.grad_norm) <= 1e-5 * ra.clip.grad_norm, "gradient norms differ");
    }
    double diff = 0, scale = 0;
    for (size_t i = 0; i < a->lora()->entries().size(); ++i) {
      const auto& ea = a->lora()->entries()[i];
      const auto& eb = b->lora()->entries()[i];
      diff =
          std::max({diff, (ea.up - eb.up).abs().max().item<double>(), (ea.down - eb.down).abs().max().item<double>()});
      scale = std::max(scale, ea.up.abs().max().item<double>());
    }
    QVERIFY2(scale > 0 && diff <= 1e-5 * scale, qPrintable(QString("adapters differ by %1").arg(diff / scale)));
  }
};

QTEST_GUILESS_MAIN(TestCheckpointModes)
#include "test_checkpoint_modes.moc"
