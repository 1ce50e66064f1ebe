// SPDX-License-Identifier: Apache-2.0
// Sampling (docs/design/sampling.md): the shifted schedules against the official tables (every
// timestep of the T2V-A14B, I2V-A14B and TI2V-5B presets, both solvers), the expert split at the
// boundary, the seeded noise rule, and the solvers' last step returning the data prediction.
#include <QtTest/QtTest>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <vector>

#include "core/error.h"
#include "sampling/expert_sampler.h"
#include "sampling/flow_schedule.h"
#include "sampling/flow_solvers.h"
#include "test_util.h"

using ws::sampling::Solver;

namespace {

std::vector<int64_t> ts(Solver s, int64_t n, double shift) {
  return ws::sampling::flow_schedule(s, n, shift).timesteps;
}

int64_t high_steps(const std::vector<int64_t>& t, double boundary) {
  ws::sampling::SamplerOptions o;
  o.boundary = boundary;
  int64_t n = 0;
  for (int64_t v : t) n += ws::sampling::choose_expert(o, true, v).high;
  return n;
}

}  // namespace

class TestSampling : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void presetSchedules() {
    // docs/design/sampling.md §2.4, computed with the official code.
    const std::vector<int64_t> t2v_unipc{999, 997, 995, 993, 990, 988, 985, 982, 979, 976, 972, 969, 965, 961,
                                         956, 952, 947, 941, 936, 929, 922, 915, 907, 898, 888, 877, 865, 852,
                                         837, 819, 799, 776, 749, 717, 678, 631, 571, 492, 386, 235};
    const std::vector<int64_t> t2v_dpm{1000, 997, 995, 993, 990, 988, 985, 982, 979, 976, 972, 969, 965, 961,
                                       957,  952, 947, 941, 936, 929, 923, 915, 907, 898, 888, 878, 865, 852,
                                       837,  819, 800, 776, 750, 717, 679, 631, 571, 493, 387, 235};
    QCOMPARE(ts(Solver::UniPC, 40, 12.0), t2v_unipc);
    QCOMPARE(ts(Solver::DpmPP, 40, 12.0), t2v_dpm);
    QCOMPARE(high_steps(t2v_unipc, 0.875), int64_t{26});
    const std::vector<int64_t> i2v_unipc{999, 994, 989, 983, 978, 972, 965, 959, 952, 944, 937, 929, 920, 911,
                                         902, 892, 882, 870, 859, 846, 833, 818, 803, 786, 768, 749, 728, 706,
                                         681, 654, 624, 591, 555, 514, 468, 416, 356, 288, 208, 113};
    QCOMPARE(ts(Solver::UniPC, 40, 5.0), i2v_unipc);
    QCOMPARE(high_steps(i2v_unipc, 0.9), int64_t{15});
    const std::vector<int64_t> ti2v_dpm{1000, 995, 991, 987, 982, 978, 973, 968, 963, 957, 952, 946, 940,
                                        934,  927, 921, 913, 906, 898, 890, 882, 873, 864, 854, 844, 833,
                                        821,  809, 797, 783, 769, 753, 737, 720, 701, 681, 660, 637, 612,
                                        585,  555, 523, 487, 448, 405, 357, 303, 241, 172, 92};
    QCOMPARE(ts(Solver::DpmPP, 50, 5.0), ti2v_dpm);
    // Few-step splits: T2V shift 12 with 4/6/8/10/12/20 steps, I2V shift 5.
    const int64_t n[] = {4, 6, 8, 10, 12, 20}, t2v_high[] = {3, 4, 6, 7, 8, 13}, i2v_high[] = {2, 3, 3, 4, 5, 8};
    for (int k = 0; k < 6; ++k) {
      QCOMPARE(high_steps(ts(Solver::UniPC, n[k], 12.0), 0.875), t2v_high[k]);
      QCOMPARE(high_steps(ts(Solver::UniPC, n[k], 5.0), 0.9), i2v_high[k]);
    }
    // DPM++ 40 steps at shift 12 hits 800.0 exactly at step 30: truncation, not rounding.
    QCOMPARE(ts(Solver::DpmPP, 40, 12.0)[30], int64_t{800});
    auto s = ws::sampling::flow_schedule(Solver::UniPC, 40, 12.0);
    QCOMPARE(s.sigmas.size(), size_t{41});
    QCOMPARE(s.sigmas.back(), 0.0f);
    QCOMPARE(s.sigmas.front(), 0.99991661f);
  }

  void guideTupleIsLowHigh() {
    ws::sampling::SamplerOptions o;
    o.guide_low = 3.0;
    o.guide_high = 4.0;
    o.boundary = 0.875;
    QCOMPARE(ws::sampling::choose_expert(o, true, 877).guide, 4.0);
    QCOMPARE(QString(ws::sampling::choose_expert(o, true, 875).name), QString("high"));
    QCOMPARE(ws::sampling::choose_expert(o, true, 874).guide, 3.0);
    QCOMPARE(QString(ws::sampling::choose_expert(o, false, 999).name), QString("model"));
  }

  void lastStepIsTheDataPrediction() {
    for (Solver s : {Solver::UniPC, Solver::DpmPP}) {
      auto sched = ws::sampling::flow_schedule(s, 3, 5.0);
      auto solver = ws::sampling::make_solver(s, sched.sigmas);
      torch::manual_seed(0);
      torch::Tensor x = torch::randn({2, 1, 2, 2}), out;
      for (int64_t i = 0; i < 3; ++i) {
        auto v = torch::randn_like(x);
        out = solver->step(i, v, x);
        QVERIFY(torch::isfinite(out).all().item<bool>());
        if (i == 2) QVERIFY(torch::allclose(out, x - sched.sigmas[2] * v));
        x = out;
      }
    }
  }

  void badInput() {
    QVERIFY(!ws::test::error_of([] { ws::sampling::flow_schedule(Solver::UniPC, 0, 5.0); }).isEmpty());
    QVERIFY(ws::test::error_of([] { ws::sampling::parse_solver("euler"); }).contains("unipc or dpm++"));
  }
};

QTEST_APPLESS_MAIN(TestSampling)
#include "test_sampling.moc"
