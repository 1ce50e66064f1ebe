// SPDX-License-Identifier: Apache-2.0
// New Run's "will it fit my GPU": the GPU chosen beside Estimate Memory reaches the worker as
// --device cuda --device_memory SIZE, the answer says whether the run fits, what it needs on the
// GPU and in host memory and, when it does not fit, the worker's way to make it fit in words;
// Apply writes those options into the run's config and estimates again. A fake worker pins the
// flags and the words; the real one estimates a large fresh DiT on a 24 GB GPU end to end, and its
// schema puts blocks_to_swap in the form.
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "app/fake_worker.h"
#include "app_resources.h"
#include "config_form.h"
#include "dialogs/new_run_dialog.h"
#include "jobs/estimate_job.h"
#include "jobs/job_manager.h"
#include "jobs/schema_fetcher.h"
#include "option_editor.h"
#include "test_paths.h"

using namespace ws;

namespace {

// The upsampler's options that a way to fit may change (frames and size), from a fixture schema.
const char* kSchemaJson = R"({"verb": "train-upsampler", "job": "upsampler", "options": [
 {"name": "demo_data", "type": "string", "list": false, "required": false, "default": null, "group": "Data", "help": "auto: demo dataset"},
 {"name": "video_sample_size", "type": "int", "list": false, "required": false, "default": 640, "min": 48, "multiple_of": 16, "remainder": 0, "group": "Data", "help": "sample edge"},
 {"name": "video_sample_n_frames", "type": "int", "list": false, "required": false, "default": 81, "min": 1, "multiple_of": 4, "remainder": 1, "group": "Data", "help": "frames, 4k+1"},
 {"name": "output_dir", "type": "path", "list": false, "required": false, "default": "out", "group": "Training", "help": "run folder"}
]})";

NewRunDialog::SchemaSource fixtureSource() {
  return [](const QString& verb, QString* error) -> std::optional<OptionSchema> {
    if (verb == QLatin1String("train-upsampler")) return OptionSchema::fromJson(kSchemaJson, error);
    *error = QStringLiteral("no option schema for '%1'").arg(verb);
    return std::nullopt;
  };
}

// A worker whose `estimate` answers as the real one does: on this machine it fits; on a GPU a
// run of more than 41 frames does not, and fewer frames at a smaller size would.
const char* kEstimateBody = R"sh(
echo "$@" > "$(dirname "$0")/estimate-args.txt"
f=$(sed -n 's/^video_sample_n_frames: *//p' "$3"); f=${f:-81}
case " $* " in *" --device cuda "*) ;; *)
  echo '{"total_bytes":1073741824,"machine_bytes":21474836480,"fits":true,"estimate":{"parts":[{"name":"weights","bytes":1073741824}]}}'
  exit 0;;
esac
host='"host":{"parts":[{"name":"low: weights","bytes":51217432576}],"total_bytes":51217432576}'
if [ "$f" -le 41 ]; then
  echo '{"device":"cuda","total_bytes":23622320128,"machine_bytes":25769803776,"fits":true,"estimate":{"parts":[{"name":"high: weights","bytes":23622320128}]},'"$host"'}'
else
  echo '{"device":"cuda","total_bytes":64424509440,"machine_bytes":25769803776,"fits":false,"estimate":{"parts":[{"name":"high: weights","bytes":64424509440}]},'"$host"',"to_fit":[{"changes":{"video_sample_n_frames":61},"device_bytes":32212254720,"host_bytes":51217432576,"fits":false},{"changes":{"video_sample_n_frames":41,"video_sample_size":320},"device_bytes":25232932864,"host_bytes":51217432576,"fits":true}]}'
fi
)sh";

QString realEngine() {
  const QString env = qEnvironmentVariable("WS_TEST_ENGINE");
  const QString exe = env.isEmpty() ? QStringLiteral(WS_ENGINE_EXE) : env;
  return QFileInfo(exe).isExecutable() ? exe : QString();
}

QSpinBox* spin(NewRunDialog* d, const char* option) {
  return qobject_cast<QSpinBox*>(d->form()->editor(QLatin1String(option))->input());
}

}  // namespace

class TestNewRunEstimate : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  JobManager jobs_;

 private Q_SLOTS:
  void initTestCase() { QVERIFY(dir_.isValid()); }
  void cleanup() { qunsetenv("WANSTUDIO_ENGINE"); }

  void parsesTheGpuAnswer() {
    const QByteArray out =
        "log line\n{\"device\":\"cuda\",\"total_bytes\":2147483648,\"machine_bytes\":1073741824,\"fits\":false,"
        "\"estimate\":{\"parts\":[]},\"host\":{\"parts\":[{\"name\":\"low: weights\",\"bytes\":1073741824}],"
        "\"total_bytes\":1073741824},\"to_fit\":[{\"changes\":{\"blocks_to_swap\":28,\"fp8\":\"e4m3\","
        "\"gradient_checkpointing\":true},\"device_bytes\":1000,\"host_bytes\":2000,\"fits\":true}]}\n";
    const MemoryEstimateResult r = EstimateJob::parse(out, 0, {});
    QVERIFY(r.ok && r.gpu && !r.fits);
    QCOMPARE(r.hostBytes, 1073741824.0);
    QCOMPARE(r.hostParts, QStringList{QStringLiteral("low: weights 1.00 GiB")});
    QCOMPARE(r.toFit.size(), 1);
    QVERIFY(r.toFit[0].fits);
    QCOMPARE(r.toFit[0].words(), QStringLiteral("blocks_to_swap 28, fp8 e4m3, gradient_checkpointing true"));
    // This machine's answer has none of it.
    const MemoryEstimateResult cpu = EstimateJob::parse("{\"total_bytes\":1,\"machine_bytes\":2,\"fits\":true}", 0, {});
    QVERIFY(cpu.ok && !cpu.gpu && cpu.toFit.isEmpty() && cpu.hostBytes == 0);
  }

  void gpuChoiceReachesTheWorkerAndApplyMakesItFit() {
    const QString worker = fake::writeScript(dir_.path(), "estimate.sh", QString::fromLatin1(kEstimateBody));
    qputenv("WANSTUDIO_ENGINE", worker.toUtf8());
    NewRunDialog d(&jobs_, dir_.filePath(QStringLiteral("ws")), QString(), fixtureSource());
    d.setRunName(QStringLiteral("r1"));
    QComboBox* gpu = d.gpuCombo();
    QCOMPARE(gpu->accessibleName(), QStringLiteral("GPU"));
    QCOMPARE(gpu->count(), 4);
    QCOMPARE(gpu->currentText(), QStringLiteral("This machine (CPU)"));
    spin(&d, "video_sample_n_frames")->setValue(81);
    // This machine: as before, no GPU flags.
    d.estimateButton()->click();
    QTRY_VERIFY(d.estimateLabel()->text().startsWith(QStringLiteral("Needs about")));
    QVERIFY(!fake::readAll(dir_.filePath("estimate-args.txt")).contains("--device"));
    QVERIFY(d.applyFitButton()->isHidden());

    gpu->setCurrentIndex(gpu->findText(QStringLiteral("24 GB GPU")));
    d.estimateButton()->click();
    QTRY_VERIFY(d.estimateLabel()->text().startsWith(QStringLiteral("Does not fit a 24 GB GPU")));
    const QByteArray args = fake::readAll(dir_.filePath("estimate-args.txt"));
    QVERIFY2(args.trimmed().endsWith("--device cuda --device_memory 24GiB"), args.constData());
    const QString said = d.estimateLabel()->text();
    QVERIFY2(said.contains(QStringLiteral("needs about 60.00 GiB of its 24.00 GiB on the GPU")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("47.70 GiB in host memory (low: weights 47.70 GiB)")), qPrintable(said));
    // The best way (the last), in words, with what it then needs.
    QVERIFY2(said.contains(QStringLiteral("Fits with video_sample_n_frames 41, video_sample_size 320: 23.50 GiB on "
                                          "the GPU, 47.70 GiB in host memory.")),
             qPrintable(said));
    QCOMPARE(d.estimateLabel()->property("tone").toString(), QStringLiteral("error"));
    QVERIFY(!d.applyFitButton()->isHidden());
    QCOMPARE(d.suggestedChanges().value(QStringLiteral("video_sample_size")).toInt(), 320);

    // Apply: the options in the form and the YAML, and the estimate again says it fits.
    d.applyFitButton()->click();
    QCOMPARE(spin(&d, "video_sample_n_frames")->value(), 41);
    QCOMPARE(spin(&d, "video_sample_size")->value(), 320);
    QVERIFY(d.yamlText().contains(QStringLiteral("video_sample_n_frames: 41")));
    QVERIFY(d.yamlText().contains(QStringLiteral("video_sample_size: 320")));
    QVERIFY(d.applyFitButton()->isHidden());
    QTRY_VERIFY(d.estimateLabel()->text().startsWith(QStringLiteral("Fits a 24 GB GPU")));
    QVERIFY2(d.estimateLabel()->text().contains(QStringLiteral("about 22.00 GiB of its 24.00 GiB on the GPU")),
             qPrintable(d.estimateLabel()->text()));
    QCOMPARE(d.estimateLabel()->property("tone").toString(), QString());

    // Another size is another flag; another GPU drops a suggestion made for this one.
    spin(&d, "video_sample_n_frames")->setValue(81);
    gpu->setCurrentIndex(gpu->findText(QStringLiteral("80 GB GPU")));
    d.estimateButton()->click();
    QTRY_VERIFY(d.estimateLabel()->text().startsWith(QStringLiteral("Does not fit a 80 GB GPU")));
    QVERIFY(fake::readAll(dir_.filePath("estimate-args.txt")).trimmed().endsWith("--device_memory 80GiB"));
    QVERIFY(!d.applyFitButton()->isHidden());
    gpu->setCurrentIndex(gpu->findText(QStringLiteral("48 GB GPU")));
    QVERIFY(d.applyFitButton()->isHidden());
    QVERIFY(d.suggestedChanges().isEmpty());
  }

  // The real worker: a fresh 3.9B-parameter DiT pair does not fit 24 GB as it is; it suggests block
  // swap (with checkpointing), and after Apply the same worker says it fits.
  void realWorkerSuggestsBlockSwapForA24GbGpu() {
    const QString engine = realEngine();
    if (engine.isEmpty()) QSKIP("wanstudio-engine is not built (set WS_TEST_ENGINE to use another)");
    qputenv("WANSTUDIO_ENGINE", engine.toUtf8());
    const NewRunDialog::SchemaSource schemas = [engine](const QString& verb, QString* error) {
      return SchemaFetcher::fetch(verb, error, engine);
    };
    NewRunDialog d(&jobs_, dir_.filePath(QStringLiteral("ws")), QString(), schemas);
    d.setRunName(QStringLiteral("big"));
    QVERIFY2(d.setJob(QStringLiteral("experts")), qPrintable(d.schemaError(QStringLiteral("experts"))));
    // The worker's new option is in the form, from its schema: an integer, 0 by default.
    OptionEditor* swap = d.form()->editor(QStringLiteral("blocks_to_swap"));
    QVERIFY(swap);
    QVERIFY(qobject_cast<QSpinBox*>(swap->input()));
    QCOMPARE(swap->value().toLongLong(), 0);
    QVERIFY(swap->isDefault());

    QFile dit(dir_.filePath(QStringLiteral("big-dit.yaml")));
    QVERIFY(dit.open(QIODevice::WriteOnly));
    dit.write(
        "model_type: t2v\npatch_size: [1, 2, 2]\ntext_len: 16\nin_dim: 48\ndim: 3072\nffn_dim: 8192\nfreq_dim: "
        "256\ntext_dim: 32\nout_dim: 48\nnum_heads: 24\nnum_layers: 30\nwindow_size: [-1, -1]\nqk_norm: true\n"
        "cross_attn_norm: true\neps: 1.0e-6\n");
    dit.close();
    const QString configs = QStringLiteral(WS_TEST_DATA "/../../configs");
    const QString data = dir_.filePath(QStringLiteral("data"));
    d.setYamlText(QStringLiteral("job: experts\nconfig_path: %1/demo/experts-model.yaml\ntransformer_config: %2\n"
                                 "vae_path: %1/demo/demo_vae.safetensors\ndemo_data: auto\ntrain_data_meta: %3/"
                                 "metadata.json\ntext_embeddings_dir: %4\ntext_encoder_path: %1/demo/umt5_demo."
                                 "safetensors\ntokenizer_path: %1/demo/umt5_demo_spiece.model\nvideo_sample_size: 256\n"
                                 "video_sample_n_frames: 17\ngradient_checkpointing: false\nlow_vram: true\n")
                      .arg(QDir::cleanPath(configs), dit.fileName(), data, dir_.filePath(QStringLiteral("text"))));
    d.syncFormFromYaml();
    QVERIFY2(d.yamlError().isEmpty(), qPrintable(d.yamlError()));
    QVERIFY(QDir().mkpath(dir_.filePath(QStringLiteral("text"))));  // the demo encoder fills it at the start
    d.gpuCombo()->setCurrentIndex(d.gpuCombo()->findText(QStringLiteral("24 GB GPU")));
    d.estimateButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!d.estimateLabel()->text().startsWith(QStringLiteral("Estimating")), 120'000);
    const QString said = d.estimateLabel()->text();
    QVERIFY2(said.startsWith(QStringLiteral("Does not fit a 24 GB GPU")), qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("in host memory")), qPrintable(said));
    const qlonglong blocks = d.suggestedChanges().value(QStringLiteral("blocks_to_swap")).toLongLong();
    QVERIFY2(blocks > 0 && blocks <= 30, qPrintable(said));
    QVERIFY2(said.contains(QStringLiteral("Fits with blocks_to_swap %1, gradient_checkpointing true: ").arg(blocks)),
             qPrintable(said));
    QVERIFY(!d.applyFitButton()->isHidden());
    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {  // the README's picture of the GPU estimate
      applyStyle(*qApp);                                      // the studio's look: the answer in its warning colour
      d.setRunName(QStringLiteral("a-big-dit-on-24gb"));
      d.resize(1000, 600);
      d.show();
      QVERIFY(QTest::qWaitForWindowExposed(&d));
      d.form()->setFilter(QStringLiteral("swap"));
      QTest::qWait(300);
      QVERIFY(
          d.grab().save(QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("new-run-gpu.png"))));
      d.form()->setFilter({});
    }
    d.applyFitButton()->click();
    QCOMPARE(swap->value().toLongLong(), blocks);
    QVERIFY(d.form()->value(QStringLiteral("gradient_checkpointing")).toBool());
    QVERIFY(d.yamlText().contains(QStringLiteral("blocks_to_swap: %1").arg(blocks)));
    QTRY_VERIFY_WITH_TIMEOUT(d.estimateLabel()->text().startsWith(QStringLiteral("Fits a 24 GB GPU")), 120'000);
  }
};

QTEST_MAIN(TestNewRunEstimate)
#include "test_new_run_estimate.moc"
