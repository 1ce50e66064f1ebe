// SPDX-License-Identifier: Apache-2.0
// The training-run shell with a fake trainer: keep_best keeps the checkpoint of the best figure
// beside the last N (higher or lower is better, a later best replaces it, off keeps nothing
// extra), a resume from before the best forgets it, and a save request checkpoints the step
// and trains on. The real trainers and the stdin line are tested in tests/cli/checkpoint_control.sh.
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

#include "contract/best_checkpoint.h"
#include "io/yaml_config.h"
#include "runtime/cancel.h"
#include "runtime/events.h"
#include "runtime/run_dir.h"
#include "test_util.h"
#include "train/run_options.h"
#include "train/training_run.h"
#include "train/upsampler/upsampler_options.h"

using namespace ws;
namespace stdfs = std::filesystem;

namespace {

// Steps 1..figures.size(); after each, validate() offers figures[step - 1].
class FakeTrainer : public train::TrainerHooks {
 public:
  FakeTrainer(std::vector<double> figures, bool higher_is_better, int64_t resume = 0)
      : figures_(std::move(figures)), higher_(higher_is_better), step_(resume), resume_(resume) {}
  void prepare(train::TrainingRun& run) override {
    run_ = &run;
    run.set_validation_steps(1);
  }
  int64_t global_step() const override { return step_; }
  int64_t resume_step() const override { return resume_; }
  int64_t max_steps() const override { return static_cast<int64_t>(figures_.size()); }
  std::optional<train::StepReport> train_step() override {
    ++step_;
    if (step_ == save_at) runtime::request_save();  // what a `save` line on stdin does
    train::StepReport r;
    r.expert = "upsampler";
    r.expert_step = step_;
    r.loss = 1.0 / static_cast<double>(step_);
    r.samples = 1;
    return r;
  }
  void checkpoint(bool) override {
    runtime::RunDir* dir = run_->run_dir();
    runtime::CheckpointWriter w = dir->begin_checkpoint(step_);
    std::ofstream(w.dir() + "/weights.txt") << step_;
    dir->commit_checkpoint(w, run_->options().checkpoints_total_limit);
    ++saves;
  }
  void validate(int64_t step) override {
    run_->offer_best(step, higher_ ? "val_psnr" : "eval_loss", figures_[static_cast<size_t>(step - 1)], higher_);
  }
  int64_t save_at = -1;
  int saves = 0;

 private:
  std::vector<double> figures_;
  bool higher_;
  int64_t step_, resume_;
  train::TrainingRun* run_ = nullptr;
};

struct Outcome {
  int rc = -1;
  std::vector<int64_t> checkpoints;
  std::optional<contract::BestCheckpoint> best;
};

Outcome run_fake(const std::string& dir, FakeTrainer& t, bool keep_best, int64_t limit, bool resume = false) {
  std::vector<std::string> args{
      "--output_dir", dir,   "--checkpointing_steps", "1000", "--checkpoints_total_limit", std::to_string(limit),
      "--report_to",  "none"};
  if (keep_best) args.push_back("--keep_best");
  if (resume) args.insert(args.end(), {"--resume_from_checkpoint", "latest"});
  io::Config cfg = io::load_config(train::upsampler_option_schema(), args);
  train::TrainingRun run(cfg, train::parse_run_options(cfg));
  Outcome o;
  o.rc = run.execute(t, train::DeviceWishes{false, {}});
  for (const auto& c : runtime::list_checkpoints(dir)) o.checkpoints.push_back(c.step);
  o.best = contract::read_best_checkpoint(dir);
  return o;
}

}  // namespace

class TestTrainingRun : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    runtime::EventStream::global().set_stdout(false);
    runtime::reset_cancel();
  }

  void keepBestKeepsTheHighestBesideTheLastN() {
    QTemporaryDir tmp;
    FakeTrainer t({1, 5, 3, 4, 2, 0}, /*higher_is_better=*/true);
    const Outcome o = run_fake(tmp.path().toStdString(), t, true, 1);
    QCOMPARE(o.rc, 0);
    QCOMPARE(o.checkpoints, (std::vector<int64_t>{2, 6}));  // the best, and the last one
    QVERIFY(o.best);
    QCOMPARE(o.best->step, int64_t{2});
    QCOMPARE(o.best->path, std::string("checkpoint-2"));
    QCOMPARE(o.best->metric, std::string("val_psnr"));
    QCOMPARE(o.best->value, 5.0);
    QCOMPARE(t.saves, 3);  // step 1 and step 2 were each best once; the final save
  }

  void aLaterBestReplacesTheEarlierOne() {
    QTemporaryDir tmp;
    FakeTrainer t({1, 5, 3, 7, 2, 0}, true);
    const Outcome o = run_fake(tmp.path().toStdString(), t, true, 1);
    QCOMPARE(o.checkpoints, (std::vector<int64_t>{4, 6}));  // checkpoint-2 left with its title
    QCOMPARE(o.best->step, int64_t{4});
    QCOMPARE(o.best->value, 7.0);
  }

  void lowerIsBetterForLosses() {
    QTemporaryDir tmp;
    FakeTrainer t({0.9, 0.4, 0.6, 0.5, 0.45, 0.8}, /*higher_is_better=*/false);
    const Outcome o = run_fake(tmp.path().toStdString(), t, true, 2);
    // The newest 2 (the best one among them) and nothing else: step 1, a best once, is gone.
    QCOMPARE(o.checkpoints, (std::vector<int64_t>{2, 6}));
    QCOMPARE(o.best->step, int64_t{2});
    QCOMPARE(o.best->metric, std::string("eval_loss"));
  }

  void withoutKeepBestOnlyTheLastN() {
    QTemporaryDir tmp;
    FakeTrainer t({1, 5, 3, 4, 2, 0}, true);
    const Outcome o = run_fake(tmp.path().toStdString(), t, false, 1);
    QCOMPARE(o.checkpoints, (std::vector<int64_t>{6}));
    QVERIFY(!o.best);
    QCOMPARE(t.saves, 1);
  }

  void theBestIsInTheEventStream() {
    QTemporaryDir tmp;
    FakeTrainer t({1, 5, 3}, true);
    run_fake(tmp.path().toStdString(), t, true, 1);
    std::ifstream in(tmp.path().toStdString() + "/events.jsonl");
    std::vector<int64_t> best_steps;
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j["type"] == "best") best_steps.push_back(j["step"].get<int64_t>());
    }
    QCOMPARE(best_steps, (std::vector<int64_t>{1, 2}));
  }

  void aResumeFromBeforeTheBestForgetsIt() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    FakeTrainer first({1, 2, 9, 3}, true);
    first.save_at = 2;  // a checkpoint before the best to resume from
    QCOMPARE(run_fake(dir, first, true, 5).best->step, int64_t{3});
    // Resumed from checkpoint-2: the figure of 9 at step 3 belongs to a discarded future.
    FakeTrainer again({1, 2, 1, 1, 0.5}, true, /*resume=*/2);
    const Outcome o = run_fake(dir, again, true, 5, true);
    QCOMPARE(o.rc, 0);
    QCOMPARE(o.best->step, int64_t{3});  // the new timeline's own best: 1 at step 3
    QCOMPARE(o.best->value, 1.0);
    std::ifstream in(dir + "/checkpoint-3/weights.txt");
    int64_t written = 0;
    in >> written;
    QCOMPARE(written, int64_t{3});
  }

  void saveNowCheckpointsAndTrainsOn() {
    QTemporaryDir tmp;
    FakeTrainer t({0, 0, 0, 0, 0, 0}, true);
    t.save_at = 3;
    const Outcome o = run_fake(tmp.path().toStdString(), t, false, 10);
    QCOMPARE(o.rc, 0);
    QCOMPARE(o.checkpoints, (std::vector<int64_t>{3, 6}));
    QVERIFY(!runtime::take_save_request());  // taken by the loop
  }
};

QTEST_APPLESS_MAIN(TestTrainingRun)
#include "test_training_run.moc"
