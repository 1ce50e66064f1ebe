// SPDX-License-Identifier: Apache-2.0
// Data parallel over c10d/Gloo with real worker processes on this machine: P ranks with A
// micro-batches each train exactly what one process with A·P micro-batches trains (same batches,
// same random draws; gradients equal up to summation order), rank 0 alone writes the run folder,
// a cancel reaching one rank stops all, and bad rank variables are one clear error.
#include <QtTest/QtTest>
#include <QProcess>

#include <csignal>
#include <filesystem>

#include "core/fs.h"
#include "io/safetensors.h"
#include "parallel/dist_env.h"
#include "test_paths.h"
#include "test_util.h"

// QVERIFY2 in a helper that returns a value.
#define QVERIFY2_RET(cond, msg, ret)                                                            \
  do {                                                                                          \
    if (!QTest::qVerify(static_cast<bool>(cond), #cond, (msg), __FILE__, __LINE__)) return ret; \
  } while (false)

using namespace ws;

namespace {

int port_base() { return 20000 + static_cast<int>(QCoreApplication::applicationPid() % 20000); }

QProcess* start(const QStringList& args, int rank, int world, int port, QObject* parent) {
  auto* p = new QProcess(parent);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("WORLD_SIZE", QString::number(world));
  env.insert("RANK", QString::number(rank));
  env.insert("LOCAL_RANK", QString::number(rank));
  env.insert("MASTER_ADDR", "127.0.0.1");
  env.insert("MASTER_PORT", QString::number(port));
  env.insert("OMP_NUM_THREADS", "1");
  p->setProcessEnvironment(env);
  p->setProcessChannelMode(QProcess::SeparateChannels);
  p->start(WS_ENGINE_EXE, args);
  return p;
}

// Runs `args` as `world` ranks; returns rank 0's stdout; all exit codes must be 0.
QString run_ranks(const QStringList& args, int world, int port, QObject* parent, QString* err) {
  std::vector<QProcess*> ps;
  for (int r = 0; r < world; ++r) ps.push_back(start(args, r, world, port, parent));
  QString out;
  for (int r = 0; r < world; ++r) {
    if (!ps[r]->waitForFinished(300000) || ps[r]->exitCode() != 0)
      *err += QString("rank %1 exit %2: %3\n")
                  .arg(r)
                  .arg(ps[r]->exitCode())
                  .arg(QString::fromUtf8(ps[r]->readAllStandardError()).right(800));
    if (r == 0) out = QString::fromUtf8(ps[r]->readAllStandardOutput());
  }
  return out;
}

// Largest |a − b| over the tensors of two safetensors files (same keys).
double max_diff(const std::string& a, const std::string& b, bool* same_keys) {
  auto x = io::read_safetensors(a), y = io::read_safetensors(b);
  *same_keys = x.size() == y.size();
  double m = 0;
  for (auto& [k, v] : x) {
    auto it = y.find(k);
    if (it == y.end()) {
      *same_keys = false;
      continue;
    }
    m = std::max(m, (v.to(torch::kDouble) - it->second.to(torch::kDouble)).abs().max().item<double>());
  }
  return m;
}

// A copy of a run folder without one of its checkpoints (to resume from the one before).
void copy_run(const std::string& from, const std::string& to, const std::string& drop) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(to + "/" + drop);
}

QStringList steps_field(const QString& events, const QString& field) {
  QStringList out;
  for (const QString& line : events.split('\n'))
    if (line.contains("\"type\":\"step\"")) {
      QRegularExpression re("\"" + field + "\":([^,}]*)");
      auto m = re.match(line);
      out << (m.hasMatch() ? m.captured(1) : QString());
    }
  return out;
}

}  // namespace

class TestDataParallel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    dir_ = tmp_.path().toStdString();
    QProcess p;
    p.start(WS_ENGINE_EXE, {"demo-data", QString::fromStdString(dir_ + "/data")});
    QVERIFY(p.waitForFinished(120000) && p.exitCode() == 0);
    fs::write_file_atomic(dir_ + "/dit.yaml",
                          "in_dim: 48\nout_dim: 48\ndim: 32\nffn_dim: 64\nnum_heads: 2\nnum_layers: 1\n"
                          "text_dim: 16\ntext_len: 8\n");
    fs::write_file_atomic(dir_ + "/ups.yaml",
                          "latent_upsampler_kwargs:\n  mid_channels: 32\n  num_blocks_per_stage: 1\n");
  }

  void experts_two_ranks_equal_one_process_accumulating_two() {
    const QString d = QString::fromStdString(dir_);
    const QStringList common = experts_args(100);
    QString err;
    run_ranks(common + QStringList{"--gradient_accumulation_steps", "2", "--output_dir", d + "/e1"}, 1, port_base(),
              this, &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    const QString out = run_ranks(common + QStringList{"--output_dir", d + "/e2"}, 2, port_base() + 1, this, &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    QVERIFY(out.contains("\"world_size\":2"));
    const QString single = QString::fromStdString(fs::read_file(dir_ + "/e1/events.jsonl"));
    // Same routes, timesteps and (to rounding) losses.
    QCOMPARE(steps_field(out, "expert"), steps_field(single, "expert"));
    // Rank 0's step events list its own samples: its timestep is the single run's first of two.
    QStringList t0 = steps_field(out, "timesteps");
    for (auto& t : t0) t.remove(']');
    QCOMPARE(t0, steps_field(single, "timesteps"));
    const auto l2 = steps_field(out, "loss"), l1 = steps_field(single, "loss");
    QCOMPARE(l2.size(), 3);
    for (int i = 0; i < 3; ++i)
      QVERIFY2(std::fabs(l2[i].toDouble() - l1[i].toDouble()) < 1e-5 * l1[i].toDouble(),
               qPrintable(l2[i] + " vs " + l1[i]));
    for (const char* f :
         {"high_noise_transformer/diffusion_pytorch_model.safetensors",
          "low_noise_transformer/diffusion_pytorch_model.safetensors", "trainer_state/optimizer_high.safetensors"}) {
      bool keys = false;
      const double m = max_diff(dir_ + "/e1/checkpoint-3/" + f, dir_ + "/e2/checkpoint-3/" + f, &keys);
      QVERIFY2(keys && m < 1e-5, qPrintable(QString("%1: %2").arg(f).arg(m)));
    }
    // One events.jsonl, written by rank 0; one started line.
    const QString ev = QString::fromStdString(fs::read_file(dir_ + "/e2/events.jsonl"));
    QCOMPARE(ev.count("\"type\":\"started\""), 1);
    QCOMPARE(ev.count("\"type\":\"step\""), 3);
  }

  // ZeRO stage 2 (docs/design/zero.md): 2 sharded ranks train what one process accumulating two
  // micro-batches trains, each rank holds about half of the AdamW moments, and the checkpoint
  // (the ordinary layout) resumes with 1 process or with 2 sharded ranks.
  void experts_zero2_matches_one_process_and_resumes_with_other_rank_counts() {
    const QString single = zero2_matches_one_process({}, "z", 10);
    QVERIFY(!QTest::currentTestFailed());
    QVERIFY(single.contains("\"weight_dtype\":\"fp32\""));
  }

  // weight_dtype bf16: the block Linears in bf16 on every rank, their fp32 masters only on the
  // owning rank (optimizer_bytes counts them), the checkpoint saves the masters in fp32, and the
  // same equalities hold.
  void experts_zero2_shards_the_fp32_masters_of_bf16_weights() {
    const QString single = zero2_matches_one_process({"--weight_dtype", "bf16"}, "b", 20);
    QVERIFY(!QTest::currentTestFailed());
    QVERIFY(single.contains("\"weight_dtype\":\"bf16\""));
    // The option acts: from the second step (the fresh head is zero, so the first loss does not
    // depend on the other weights) the losses are the bf16-rounded weights' (z1 is the fp32 run
    // of the test before).
    const QString fp32 = QString::fromStdString(fs::read_file(dir_ + "/z1/events.jsonl"));
    const QStringList lb = steps_field(single, "loss"), lf = steps_field(fp32, "loss");
    QCOMPARE(lb.size(), 3);
    QCOMPARE(lb.value(0), lf.value(0));
    QVERIFY2(lb.value(2) != lf.value(2), qPrintable(lb.join(' ') + " vs " + lf.join(' ')));
    // The masters are saved, in fp32 and off the bf16 grid after the updates.
    const auto sd =
        io::read_safetensors(dir_ + "/b2/checkpoint-3/low_noise_transformer/diffusion_pytorch_model.safetensors");
    const torch::Tensor w = sd.at("blocks.0.self_attn.q.weight");
    QCOMPARE(w.scalar_type(), torch::kFloat);
    QVERIFY(!torch::equal(w, w.to(torch::kBFloat16).to(torch::kFloat)));
  }

  void upsampler_two_ranks_equal_one_process_accumulating_two() {
    const QString d = QString::fromStdString(dir_);
    QStringList common = {"train-upsampler",
                          "--config_path",
                          d + "/ups.yaml",
                          "--vae_path",
                          WS_TEST_DATA "/vae/vae_dev_weights.safetensors",
                          "--train_data_meta",
                          d + "/data/metadata.json",
                          "--video_sample_size",
                          "128",
                          "--video_sample_n_frames",
                          "5",
                          "--learning_rate",
                          "1e-3",
                          "--lr_warmup_steps",
                          "0",
                          "--seed",
                          "7",
                          "--enable_noisy_training",
                          "--use_ema",
                          "--max_train_steps",
                          "3",
                          "--checkpointing_steps",
                          "100",
                          "--validation_steps",
                          "1000",
                          "--dataloader_num_workers",
                          "1",
                          "--gradient_checkpointing=false"};
    QString err;
    run_ranks(common + QStringList{"--gradient_accumulation_steps", "2", "--output_dir", d + "/u1"}, 1, port_base() + 2,
              this, &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    const QString out = run_ranks(common + QStringList{"--output_dir", d + "/u2"}, 2, port_base() + 3, this, &err);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    const QString single = QString::fromStdString(fs::read_file(dir_ + "/u1/events.jsonl"));
    QCOMPARE(steps_field(out, "step"), steps_field(single, "step"));
    const auto l2 = steps_field(out, "loss"), l1 = steps_field(single, "loss");
    for (int i = 0; i < l1.size(); ++i)
      QVERIFY2(std::fabs(l2[i].toDouble() - l1[i].toDouble()) < 1e-5 * l1[i].toDouble(),
               qPrintable(l2[i] + " vs " + l1[i]));
    bool keys = false;
    const std::string f = "/checkpoint-3/latent_upsampler/diffusion_pytorch_model.safetensors";
    const double m = max_diff(dir_ + "/u1" + f, dir_ + "/u2" + f, &keys);
    QVERIFY2(keys && m < 1e-5, qPrintable(QString::number(m)));
  }

  void a_cancel_on_one_rank_stops_all() {
    const QString d = QString::fromStdString(dir_);
    QStringList args = {"train-experts",
                        "--transformer_config",
                        d + "/dit.yaml",
                        "--vae_path",
                        WS_TEST_DATA "/vae/vae_dev_weights.safetensors",
                        "--train_data_meta",
                        d + "/data/metadata.json",
                        "--text_embeddings_dir",
                        d + "/text",
                        "--video_sample_size",
                        "64",
                        "--video_sample_n_frames",
                        "5",
                        "--max_train_steps",
                        "100000",
                        "--checkpointing_steps",
                        "100000",
                        "--dataloader_num_workers",
                        "1",
                        "--output_dir",
                        d + "/c"};
    const int port = port_base() + 4;
    QProcess* r0 = start(args, 0, 2, port, this);
    QProcess* r1 = start(args, 1, 2, port, this);
    QString seen;
    QElapsedTimer t;
    t.start();
    while (!seen.contains("\"type\":\"step\"") && t.elapsed() < 120000) {
      r0->waitForReadyRead(200);
      seen += QString::fromUtf8(r0->readAllStandardOutput());
    }
    QVERIFY2(seen.contains("\"type\":\"step\""), "no step within 120 s");
    ::kill(static_cast<pid_t>(r1->processId()), SIGTERM);  // the other rank than the writer
    QVERIFY(r0->waitForFinished(120000));
    QVERIFY(r1->waitForFinished(120000));
    QCOMPARE(r0->exitCode(), 130);
    QCOMPARE(r1->exitCode(), 130);
    seen += QString::fromUtf8(r0->readAllStandardOutput());
    QVERIFY(seen.contains("\"status\":\"cancelled\""));
    QRegularExpression re("\"status\":\"cancelled\",\"step\":(\\d+)");
    auto m = re.match(seen);
    QVERIFY(m.hasMatch());
    QVERIFY(fs::is_dir(dir_ + "/c/checkpoint-" + m.captured(1).toStdString()));
  }

  // srun sets Slurm's variables only: rank, world, local rank and the master (the job's first node)
  // come from them; torchrun's WORLD_SIZE, where set, wins.
  void slurm_environment_places_the_rank() {
    QCOMPARE(parallel::first_slurm_host("gpu[07-09,12],cpu1"), std::string("gpu07"));
    QCOMPARE(parallel::first_slurm_host("node3,node4"), std::string("node3"));
    QCOMPARE(parallel::first_slurm_host("rack[2]-n[1-4]"), std::string("rack2-n1"));
    QCOMPARE(parallel::first_slurm_host("solo"), std::string("solo"));
    for (const char* bad : {"", "gpu[", "gpu[]", "gpu[a-b]", ",x"})
      QVERIFY2(!test::error_of([&] { parallel::first_slurm_host(bad); }).isEmpty(), bad);

    const char* names[] = {"WORLD_SIZE",   "RANK",         "LOCAL_RANK",    "MASTER_ADDR",       "MASTER_PORT",
                           "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_JOB_NODELIST"};
    for (const char* n : names) qunsetenv(n);
    qputenv("SLURM_NTASKS", "16");
    qputenv("SLURM_PROCID", "9");
    qputenv("SLURM_LOCALID", "1");
    qputenv("SLURM_JOB_NODELIST", "gpu[01-02]");
    auto e = parallel::DistEnv::from_environment();
    QCOMPARE(e.world, 16);
    QCOMPARE(e.rank, 9);
    QCOMPARE(e.local_rank, 1);
    QCOMPARE(e.master_addr, std::string("gpu01"));
    QCOMPARE(e.launcher, std::string("slurm"));
    qputenv("MASTER_ADDR", "10.0.0.5");  // an explicit master wins over the node list
    QCOMPARE(parallel::DistEnv::from_environment().master_addr, std::string("10.0.0.5"));
    qputenv("SLURM_PROCID", "16");
    QVERIFY(test::error_of([] { parallel::DistEnv::from_environment(); }).contains("RANK 16 is outside 0..15"));
    qputenv("WORLD_SIZE", "1");  // torchrun inside an allocation: its variables win
    e = parallel::DistEnv::from_environment();
    QCOMPARE(e.world, 1);
    QCOMPARE(e.launcher, std::string("torchrun"));
    for (const char* n : names) qunsetenv(n);
  }

  void bad_rank_variables_are_one_error() {
    QProcess* p = start({"train-experts", "--transformer_config", QString::fromStdString(dir_ + "/dit.yaml"),
                         "--vae_path", WS_TEST_DATA "/vae/vae_dev_weights.safetensors", "--train_data_meta",
                         QString::fromStdString(dir_ + "/data/metadata.json"), "--text_embeddings_dir",
                         QString::fromStdString(dir_ + "/text"), "--output_dir", QString::fromStdString(dir_ + "/bad")},
                        5, 2, port_base() + 5, this);
    QVERIFY(p->waitForFinished(60000));
    QCOMPARE(p->exitCode(), 1);
    const QString out = QString::fromUtf8(p->readAllStandardOutput());
    QVERIFY2(out.contains("\"type\":\"error\"") && out.contains("RANK 5 is outside 0..1"), qPrintable(out));
  }

 private:
  QTemporaryDir tmp_;
  std::string dir_;

  // Three steps of the tiny experts on the demo data, a checkpoint every `checkpointing` steps.
  QStringList experts_args(int checkpointing) const {
    const QString d = QString::fromStdString(dir_);
    return {"train-experts",
            "--transformer_config",
            d + "/dit.yaml",
            "--vae_path",
            WS_TEST_DATA "/vae/vae_dev_weights.safetensors",
            "--train_data_meta",
            d + "/data/metadata.json",
            "--text_embeddings_dir",
            d + "/text",
            "--demo_data",
            "auto",
            "--video_sample_size",
            "64",
            "--video_sample_n_frames",
            "5",
            "--learning_rate",
            "1e-3",
            "--lr_warmup_steps",
            "0",
            "--boundary_ratio",
            "0.5",
            "--seed",
            "3",
            "--max_train_steps",
            "3",
            "--checkpointing_steps",
            QString::number(checkpointing),
            "--dataloader_num_workers",
            "1",
            "--gradient_checkpointing=false",
            "--max_grad_norm",
            "1.0"};
  }

  // One process accumulating 2 micro-batches (<tag>1), 2 plain ranks (<tag>0) and 2 sharded ranks
  // (<tag>2) with `extra` options; returns the one process's events.
  QString zero2_matches_one_process(const QStringList& extra, const QString& tag, int port) {
    const QString d = QString::fromStdString(dir_);
    const std::string t = tag.toStdString();
    const QStringList common = experts_args(2) + extra;
    const QStringList one = {"--gradient_accumulation_steps", "2"}, zero = {"--zero_stage", "2"};
    QString err;
    auto run = [&](const QStringList& args, const std::string& out, int world, int p) {
      const QString ev = run_ranks(common + args + QStringList{"--output_dir", d + "/" + QString::fromStdString(out)},
                                   world, port_base() + port + p, this, &err);
      if (!err.isEmpty()) QTest::qFail(qPrintable(err), __FILE__, __LINE__);
      return ev;
    };
    const QString single = run(one, t + "1", 1, 0);
    const QString plain = run({}, t + "0", 2, 1);
    const QString sharded = run(zero, t + "2", 2, 2);
    if (QTest::currentTestFailed()) return single;
    QVERIFY2_RET(sharded.contains("\"zero_stage\":2"), "no zero_stage 2 in the started event", single);
    QVERIFY2_RET(steps_field(sharded, "expert") == steps_field(single, "expert"), "the routes differ", single);
    auto started_number = [](const QString& events, const QString& field) {
      QRegularExpression re("\"" + field + "\":([0-9]+)");
      return re.match(events).captured(1).toLongLong();
    };
    // Each rank keeps about half of the moments (the shares are balanced by tensor size).
    const qint64 full = started_number(plain, "optimizer_bytes"), half = started_number(sharded, "optimizer_bytes");
    QVERIFY2_RET(full > 0 && half > 0.4 * full && half < 0.6 * full,
                 qPrintable(QString("%1 of %2").arg(half).arg(full)), single);
    QVERIFY2_RET(started_number(single, "optimizer_bytes") == full, "one process holds another optimizer size", single);
    const char* files[] = {"high_noise_transformer/diffusion_pytorch_model.safetensors",
                           "low_noise_transformer/diffusion_pytorch_model.safetensors",
                           "trainer_state/optimizer_high.safetensors", "trainer_state/optimizer_low.safetensors"};
    auto close = [&](const std::string& a, const std::string& b) {
      for (const char* f : files) {
        bool keys = false;
        const double m = max_diff(a + "/" + f, b + "/" + f, &keys);
        if (!keys || !(m < 1e-5))
          return QString("%1/%2: keys %3, max diff %4").arg(QString::fromStdString(b), f).arg(keys).arg(m);
      }
      return QString();
    };
    const std::string r = dir_ + "/" + t;
    QString why = close(r + "1/checkpoint-3", r + "2/checkpoint-3");
    QVERIFY2_RET(why.isEmpty(), qPrintable(why), single);
    why = close(r + "1/checkpoint-2", r + "2/checkpoint-2");  // the gathered state is the whole state
    QVERIFY2_RET(why.isEmpty(), qPrintable(why), single);
    // Saved sharded on 2 ranks, resumed by 1 process; saved by 1 process, resumed sharded on 2.
    copy_run(r + "2", r + "r1", "checkpoint-3");
    run(one + QStringList{"--resume_from_checkpoint", "latest"}, t + "r1", 1, 3);
    why = close(r + "1/checkpoint-3", r + "r1/checkpoint-3");
    QVERIFY2_RET(why.isEmpty(), qPrintable(why), single);
    copy_run(r + "1", r + "r2", "checkpoint-3");
    run(zero + QStringList{"--resume_from_checkpoint", "latest"}, t + "r2", 2, 4);
    why = close(r + "1/checkpoint-3", r + "r2/checkpoint-3");
    QVERIFY2_RET(why.isEmpty(), qPrintable(why), single);
    return single;
  }
};

QTEST_GUILESS_MAIN(TestDataParallel)
#include "test_data_parallel.moc"
