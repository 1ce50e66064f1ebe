// SPDX-License-Identifier: Apache-2.0
// Block swap on the CPU build: "host" and "device" are both CPU memory, so the schedule runs for
// real (every swapped block copied before it runs and dropped after) and the results must equal
// an unswapped twin's bit for bit — sampling forwards, the text cache, full fine-tuning with
// gradient accumulation and LoRA on an fp8 base — with the expected number of copies: N a
// forward, 2N − 1 a training step (the backward starts with the block the forward ended on).
#include <QtTest/QtTest>
#include <torch/torch.h>

#include "core/error.h"
#include "models/grad_checkpoint.h"
#include "models/wan_dit.h"
#include "tiny_checkpointed_dit.h"
#include "test_util.h"
#include "train/experts/expert_lora.h"
#include "train/experts/expert_step.h"

using ws::models::WanModel;
using ws::test::error_of;

namespace {

constexpr int64_t kLayers = ws::test::kTinyDitLayers;

// Two models with the same fresh weights (the init draws from the seeded generator).
WanModel fresh(int64_t swap = 0) {
  WanModel m = ws::test::tiny_checkpointed_dit();
  m->set_blocks_to_swap(swap);
  return m;
}

ws::train::ExpertStepInput sample(int seed) { return ws::test::tiny_dit_sample(seed); }

bool same_parameters(const WanModel& a, const WanModel& b) {
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (const auto& kv : pa)
    if (!torch::equal(kv.value(), pb[kv.key()])) return false;
  return true;
}

// Data pointers of every tensor of block i: the same after a forward means the block went home.
std::vector<const void*> block_storage(WanModel& m, int64_t i) {
  std::vector<const void*> out;
  for (const auto& p : m->blocks[static_cast<size_t>(i)]->parameters()) out.push_back(p.data_ptr());
  return out;
}

}  // namespace

class TestBlockSwap : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void forwardEqualsUnswapped() {
    auto a = fresh(), b = fresh(2);
    QCOMPARE(b->blocks_to_swap(), int64_t{2});
    const auto in = sample(1);
    const auto home3 = block_storage(b, 3);
    torch::NoGradGuard ng;
    a->eval();
    b->eval();
    const auto ya = a->forward(in.x0, torch::full({1}, 700.0f), in.context, 12);
    const auto yb = b->forward(in.x0, torch::full({1}, 700.0f), in.context, 12);
    QVERIFY(torch::equal(ya, yb));
    auto st = b->block_swap_stats();
    QCOMPARE(st.copies, int64_t{2});  // blocks 2 and 3, once each
    QVERIFY(st.bytes > 0);
    QCOMPARE(block_storage(b, 3), home3);  // back home after the forward
    QCOMPARE(a->block_swap_stats().copies, int64_t{0});

    // The text cache reads every block's cross-attention too.
    const auto ca = a->encode_text(in.context), cb = b->encode_text(in.context);
    QCOMPARE(b->block_swap_stats().copies, int64_t{4});
    QVERIFY(torch::equal(a->forward(in.x0, torch::full({1}, 700.0f), ca, 12),
                         b->forward(in.x0, torch::full({1}, 700.0f), cb, 12)));
    QCOMPARE(b->block_swap_stats().copies, int64_t{6});

    // Off again: the blocks stay where they are and nothing is copied.
    b->set_blocks_to_swap(0);
    QVERIFY(torch::equal(ya, b->forward(in.x0, torch::full({1}, 700.0f), in.context, 12)));
    QCOMPARE(b->block_swap_stats().copies, int64_t{0});
  }

  void trainingEqualsUnswapped_data() {
    QTest::addColumn<int>("swap");
    QTest::newRow("two of four") << 2;
    QTest::newRow("all four") << 4;
  }
  void trainingEqualsUnswapped() {
    QFETCH(int, swap);
    ws::train::ExpertStepOptions o;
    o.learning_rate = 1e-3;
    o.clip.max_grad_norm = 0.5;
    ws::train::ExpertStep a(fresh(), o), b(fresh(swap), o);
    const int64_t recomputes = ws::models::checkpoint_recomputations();
    for (int step = 0; step < 2; ++step) {
      // Two micro-batches: the second backward adds to gradients that waited in host memory.
      double la = 0, lb = 0;
      for (auto* e : {&a, &b}) e->begin_accumulation();
      for (int micro = 0; micro < 2; ++micro) {
        const auto in = sample(10 * step + micro);
        la += a.accumulate(in, 0.5);
        lb += b.accumulate(in, 0.5);
      }
      QVERIFY(la == lb);  // exact, not QCOMPARE's fuzzy doubles
      const auto ca = a.finish_gradients(), cb = b.finish_gradients();
      QVERIFY(ca.grad_norm == cb.grad_norm);
      QVERIFY(a.last_max_abs_gradient() == b.last_max_abs_gradient());
      a.update();
      b.update();
      QVERIFY2(same_parameters(a.model(), b.model()), "parameters differ after the update");
    }
    QVERIFY(ws::models::checkpoint_recomputations() > recomputes);  // the backward went through the recompute
    // Each micro-batch: swap copies in forward, swap − 1 in backward.
    const auto st = b.model()->block_swap_stats();
    QCOMPARE(st.copies, int64_t{2 * 2 * (2 * swap - 1)});
    QVERIFY(st.returns > 0);                        // gradients came home from the device
    QVERIFY(!same_parameters(fresh(), b.model()));  // and the steps did train
  }

  void loraOnFp8BaseEqualsUnswapped() {
    auto make = [](int64_t swap) {
      auto m = fresh();
      m->set_fp8(true);
      auto lora = ws::train::make_expert_lora(m, ws::models::LoraSpec{4, 4, 0.0, {}}, true, 42, false,
                                              /*fp8_only=*/true);
      m->set_blocks_to_swap(swap);
      ws::train::ExpertStepOptions o;
      o.learning_rate = 1e-2;
      return std::make_unique<ws::train::ExpertStep>(m, o, std::move(lora));
    };
    auto a = make(0), b = make(3);
    auto& blk = *b->model()->blocks[3]->as<ws::models::WanBlockImpl>();
    const void* codes = blk.ffn->fp8[0].codes.data_ptr();
    for (int step = 0; step < 2; ++step) {
      const auto in = sample(20 + step);
      const auto ra = a->step(in), rb = b->step(in);
      QVERIFY(ra.loss == rb.loss);
      QVERIFY(ra.clip.grad_norm == rb.clip.grad_norm);
    }
    for (size_t i = 0; i < a->lora()->entries().size(); ++i) {
      QVERIFY(torch::equal(a->lora()->entries()[i].up, b->lora()->entries()[i].up));
      QVERIFY(torch::equal(a->lora()->entries()[i].down, b->lora()->entries()[i].down));
    }
    QCOMPARE(b->model()->block_swap_stats().copies, int64_t{2 * 5});
    QCOMPARE(blk.ffn->fp8[0].codes.data_ptr(), codes);  // the codes went home
  }

  void misuseIsAnError() {
    auto m = fresh(2);
    m->set_gradient_checkpointing(false);
    m->train();
    const auto in = sample(3);
    QVERIFY(error_of([&] {
              m->forward(in.x0, torch::full({1}, 700.0f), in.context, 12);
            }).contains("blocks_to_swap needs gradient checkpointing"));
    QVERIFY(error_of([&] { m->set_blocks_to_swap(kLayers + 1); }).contains("between 0 and the model's 4 blocks"));
  }
};

QTEST_GUILESS_MAIN(TestBlockSwap)
#include "test_block_swap.moc"
