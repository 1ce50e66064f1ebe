// SPDX-License-Identifier: Apache-2.0
// The New Run form: generated from a schema (a fixture here, and the real worker's when it
// is built), form -> YAML -> form round trips, YAML edits reach the form, bad YAML keeps the
// form, every validation rule shows next to its field, and Start writes run.yaml and runs it.
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QToolButton>
#include <QAccessible>
#include <QtTest>

#include "app/fake_worker.h"
#include "config_form.h"
#include "dialogs/new_run_dialog.h"
#include "float_spin_box.h"
#include "jobs/job_manager.h"
#include "jobs/schema_fetcher.h"
#include "jobs/worker_job.h"
#include "config/config_validator.h"
#include "config/run_config.h"
#include "config/run_yaml_codec.h"
#include "option_editor.h"
#include "option_label.h"
#include "test_paths.h"

using namespace ws;

namespace {

// A small schema in the worker's format, one option of every kind the rules care about.
const char* kSchemaJson = R"({"verb": "train-upsampler", "job": "upsampler", "options": [
 {"name": "train_data_meta", "type": "path", "list": false, "required": true, "default": null, "group": "Data", "help": "metadata.json of the dataset"},
 {"name": "train_data_dir", "type": "path", "list": false, "required": false, "default": null, "group": "Data", "help": "data folder"},
 {"name": "demo_data", "type": "string", "list": false, "required": false, "default": null, "group": "Data", "help": "auto: demo dataset"},
 {"name": "video_sample_size", "type": "int", "list": false, "required": false, "default": 640, "min": 48, "multiple_of": 16, "remainder": 0, "group": "Data", "help": "sample edge"},
 {"name": "video_sample_n_frames", "type": "int", "list": false, "required": false, "default": 81, "min": 1, "multiple_of": 4, "remainder": 1, "group": "Data", "help": "frames, 4k+1"},
 {"name": "degradation_ops_range", "type": "int", "list": true, "required": false, "default": [1, 4], "group": "Data", "help": "ops"},
 {"name": "output_dir", "type": "path", "list": false, "required": false, "default": "out", "group": "Training", "help": "run folder"},
 {"name": "max_train_steps", "type": "int", "list": false, "required": false, "default": null, "min": 1, "group": "Training", "help": "steps"},
 {"name": "use_ema", "type": "bool", "list": false, "required": false, "default": false, "group": "Training", "help": "EMA weights"},
 {"name": "mixed_precision", "type": "enum", "list": false, "required": false, "default": "bf16", "choices": ["no", "fp16", "bf16"], "group": "Training", "help": "precision"},
 {"name": "resume_from_checkpoint", "type": "string", "list": false, "required": false, "default": null, "group": "Training", "help": "'latest' or a checkpoint folder"},
 {"name": "logging_dir", "type": "string", "list": false, "required": false, "default": "logs", "group": "Training", "help": "log folder"},
 {"name": "learning_rate", "type": "float", "list": false, "required": false, "default": 2e-05, "min": 0, "group": "Optimizer", "help": "the learning rate"},
 {"name": "adam_beta1", "type": "float", "list": false, "required": false, "default": 0.9, "min": 0, "max": 1, "group": "Optimizer", "help": "beta1"},
 {"name": "noise_shift", "type": "float", "list": false, "required": false, "default": null, "group": "Optimizer", "help": "shift"},
 {"name": "trainable_modules", "type": "string", "list": true, "required": false, "default": ["."], "group": "Model", "help": "modules"},
 {"name": "validation_paths", "type": "path", "list": true, "required": false, "default": [], "group": "Validation", "help": "videos"},
 {"name": "validation_steps", "type": "int", "list": false, "required": false, "default": 2000, "min": 1, "group": "Validation", "help": "validate every N steps"},
 {"name": "validation_epochs", "type": "int", "list": false, "required": false, "default": 5, "min": 1, "group": "Validation", "help": "validate every N epochs"}
]})";

OptionSchema fixtureSchema() {
  QString error;
  auto s = OptionSchema::fromJson(kSchemaJson, &error);
  if (!s) qFatal("fixture schema: %s", qPrintable(error));
  return *s;
}

// Upsampler from the fixture; experts unavailable, as with a worker that lacks the verb.
NewRunDialog::SchemaSource fixtureSource() {
  return [](const QString& verb, QString* error) -> std::optional<OptionSchema> {
    if (verb == QLatin1String("train-upsampler")) return fixtureSchema();
    *error = QStringLiteral("no option schema for '%1' (known: train-upsampler)").arg(verb);
    return std::nullopt;
  };
}

QString realEngine() {
  const QString env = qEnvironmentVariable("WS_TEST_ENGINE");
  const QString exe = env.isEmpty() ? QStringLiteral(WS_ENGINE_EXE) : env;
  return QFileInfo(exe).isExecutable() ? exe : QString();
}

}  // namespace

class TestConfigForm : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  JobManager jobs_;

  QString write(const QString& name, const QByteArray& data) {
    const QString path = dir_.filePath(name);
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    f.open(QIODevice::WriteOnly | QIODevice::Truncate);
    f.write(data);
    return path;
  }

  std::unique_ptr<NewRunDialog> dialog(const QString& workspace = {}) {
    auto d =
        std::make_unique<NewRunDialog>(&jobs_, workspace.isEmpty() ? dir_.filePath(QStringLiteral("ws")) : workspace,
                                       dir_.filePath(QStringLiteral("presets")), fixtureSource());
    d->setRunName(QStringLiteral("r1"));
    return d;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    qRegisterMetaType<ws::WorkerJob*>();
    write(QStringLiteral("data/metadata.json"), "[]");
    write(QStringLiteral("presets/demo/up.yaml"),
          "job: upsampler\ndemo_data: auto\ntrain_data_meta: ../../data/metadata.json\noutput_dir: somewhere\n"
          "video_sample_size: 256\nvideo_sample_n_frames: 17\nlearning_rate: 1.0e-4\n");
    write(QStringLiteral("presets/other/experts.yaml"), "job: experts\nmax_train_steps: 3\n");
    write(QStringLiteral("presets/model.yaml"), "vae_kwargs:\n  dim: 16\n");  // a model config, not a preset
  }

  void schemaParsesTypesDefaultsAndLimits() {
    const OptionSchema s = fixtureSchema();
    QCOMPARE(s.options().size(), 19);
    QCOMPARE(s.groups(), (QStringList{"Data", "Training", "Optimizer", "Model", "Validation"}));
    QCOMPARE(s.find("video_sample_size")->defaultValue, QVariant(qlonglong(640)));
    QCOMPARE(*s.find("video_sample_size")->min, 48.0);
    QCOMPARE(*s.find("adam_beta1")->max, 1.0);
    QVERIFY(s.find("max_train_steps")->defaultValue.isNull());
    QCOMPARE(s.find("degradation_ops_range")->defaultValue.toList(), (QVariantList{qlonglong(1), qlonglong(4)}));
    QCOMPARE(s.find("mixed_precision")->choices, (QStringList{"no", "fp16", "bf16"}));
    QString error;
    QVERIFY(!OptionSchema::fromJson("{\"options\": [{\"name\": \"x\", \"type\": \"complex\"}]}", &error));
    QVERIFY(error.contains("unknown type"));
    QVERIFY(!OptionSchema::fromJson("not json", &error));
  }

  void formHasOneEditorPerOptionByType() {
    ConfigForm form;
    form.setSchema(fixtureSchema());
    QCOMPARE(form.findChildren<OptionEditor*>().size(), 19);
    QVERIFY(qobject_cast<QCheckBox*>(form.editor("use_ema")->input()));
    QVERIFY(qobject_cast<QSpinBox*>(form.editor("video_sample_size")->input()));
    QVERIFY(qobject_cast<FloatSpinBox*>(form.editor("learning_rate")->input()));
    QVERIFY(qobject_cast<QComboBox*>(form.editor("mixed_precision")->input()));
    QVERIFY(qobject_cast<QLineEdit*>(form.editor("logging_dir")->input()));
    QVERIFY(qobject_cast<QLineEdit*>(form.editor("degradation_ops_range")->input()));
    QVERIFY(form.editor("train_data_meta")->findChild<QToolButton*>());  // browse
    QVERIFY(!form.editor("logging_dir")->findChild<QToolButton*>());
    // Grouped as the schema says; help and default in the tooltip.
    QStringList titles;
    for (auto* box : form.findChildren<QGroupBox*>()) titles << box->title();
    QCOMPARE(titles, fixtureSchema().groups());
    QVERIFY(form.editor("learning_rate")->input()->toolTip().contains("the learning rate"));
    QVERIFY(form.editor("learning_rate")->input()->toolTip().contains("Default: 2e-05"));
    // Defaults are shown, and a fresh form differs from nothing.
    auto* lr = qobject_cast<FloatSpinBox*>(form.editor("learning_rate")->input());
    QCOMPARE(lr->text(), QStringLiteral("2e-05"));
    QCOMPARE(qobject_cast<QSpinBox*>(form.editor("video_sample_size")->input())->value(), 640);
    QCOMPARE(qobject_cast<QComboBox*>(form.editor("mixed_precision")->input())->currentText(), QStringLiteral("bf16"));
    QCOMPARE(qobject_cast<QLineEdit*>(form.editor("trainable_modules")->input())->text(), QStringLiteral("."));
    QVERIFY(form.values().isEmpty());
    QVERIFY(form.value("max_train_steps").isNull());
  }

  // Labels in plain words with the config key under them; a screen reader hears the same words,
  // and a value it sets is an edit like a typed one (the form re-validates).
  void plainLabelsAndEditsThroughAccessibility() {
    QCOMPARE(plainLabel("lr_warmup_steps"), QStringLiteral("Learning-rate warmup steps"));
    QCOMPARE(plainLabel("video_sample_n_frames"), QStringLiteral("Video sample frames"));
    QCOMPARE(plainLabel("use_8bit_adam"), QStringLiteral("Use 8-bit Adam"));
    QCOMPARE(plainLabel("train_data_dir"), QStringLiteral("Train data folder"));
    QCOMPARE(plainLabel("vae_path"), QStringLiteral("VAE path"));
    ConfigForm form;
    form.setSchema(fixtureSchema());
    form.show();
    QWidget* lr = form.editor("learning_rate")->input();
    QLabel* label = nullptr;
    for (QLabel* l : form.findChildren<QLabel*>())
      if (l->buddy() == lr) label = l;
    QVERIFY(label);
    QVERIFY2(label->text().startsWith(QStringLiteral("Learning rate")) &&
                 label->text().contains(QStringLiteral("<small>learning_rate</small>")),
             qPrintable(label->text()));
    QCOMPARE(lr->accessibleName(), QStringLiteral("Learning rate"));
    QVERIFY(lr->accessibleDescription().contains(QStringLiteral("learning_rate")));
    form.setFilter(QStringLiteral("learning rate"));  // the plain words find it too
    QVERIFY(form.editor("learning_rate")->isVisibleTo(&form));
    QVERIFY(!form.editor("use_ema")->isVisibleTo(&form));
    form.setFilter({});

    QSignalSpy changed(&form, &ConfigForm::valuesChanged);
    QWidget* dir = form.editor("logging_dir")->input();
    QAccessibleInterface* iface = QAccessible::queryAccessibleInterface(dir);
    QVERIFY(iface && iface->editableTextInterface());
    iface->setText(QAccessible::Value, QStringLiteral("elsewhere"));
    QCOMPARE(form.value("logging_dir").toString(), QStringLiteral("elsewhere"));
    QCOMPARE(changed.size(), 1);
    auto* precision = qobject_cast<QComboBox*>(form.editor("mixed_precision")->input());
    precision->setCurrentIndex(precision->findText(QStringLiteral("fp16")));  // as an assistive tool does
    QCOMPARE(changed.size(), 2);
    QCOMPARE(form.value("mixed_precision").toString(), QStringLiteral("fp16"));
    QAccessibleInterface* size = QAccessible::queryAccessibleInterface(form.editor("video_sample_size")->input());
    QVERIFY(size && size->valueInterface());
    size->valueInterface()->setCurrentValue(7);
    QCOMPARE(changed.size(), 3);
    QVERIFY(!form.editor("video_sample_size")->isDefault());
    // Setting values from a file is not an edit.
    form.setValue("logging_dir", QStringLiteral("again"));
    QCOMPARE(changed.size(), 3);
  }

  // Both validation schedules of a run are said together at the top of its Validation section.
  void validationSchedulesShownTogether() {
    auto d = dialog();
    QVERIFY(d->setJob("upsampler"));
    QVERIFY2(d->form()->groupNote("Validation").contains("validates nothing"),
             qPrintable(d->form()->groupNote("Validation")));
    d->form()->setValue("validation_paths", QVariantList{dir_.filePath("data/a.mp4")});
    qobject_cast<QSpinBox*>(d->form()->editor("validation_steps")->input())->setValue(300);
    const QString note = d->form()->groupNote("Validation");
    QVERIFY2(note.contains("every 300 steps") && note.contains("every 5 epochs"), qPrintable(note));
  }

  void realWorkerSchemaBuildsAForm() {
    const QString engine = realEngine();
    if (engine.isEmpty()) QSKIP("wanstudio-engine is not built (set WS_TEST_ENGINE to use another)");
    QString error;
    const auto schema = SchemaFetcher::fetch(QStringLiteral("train-upsampler"), &error, engine);
    QVERIFY2(schema, qPrintable(error));
    QCOMPARE(schema->job(), QStringLiteral("upsampler"));
    ConfigForm form;
    form.setSchema(*schema);
    QCOMPARE(form.findChildren<OptionEditor*>().size(), schema->options().size());
    for (const char* name :
         {"train_data_meta", "video_sample_size", "video_sample_n_frames", "learning_rate", "output_dir"})
      QVERIFY2(form.editor(QLatin1String(name)), name);
    QVERIFY(form.values().isEmpty());  // every editor shows its default exactly
    // The worker's shape rule travels in the schema; the form has no copy of it.
    const OptionSpec* frames = schema->find(QStringLiteral("video_sample_n_frames"));
    QVERIFY(frames);
    QCOMPARE(frames->multipleOf, 4);
    QCOMPARE(frames->remainder, 1);
    // The demo preset's values survive the form and come back as the same YAML.
    QFile demo(QStringLiteral(WS_TEST_DATA "/../../configs/demo-upsampler.yaml"));
    if (demo.open(QIODevice::ReadOnly)) {
      const ParsedRunYaml p = RunYamlCodec::parse(*schema, QString::fromUtf8(demo.readAll()));
      QVERIFY(p.ok());
      QVERIFY2(p.unknownKeys.isEmpty() && p.typeErrors.isEmpty(), qPrintable(p.unknownKeys.join(';')));
      form.setValues(p.values);
      const ParsedRunYaml back = RunYamlCodec::parse(*schema, RunYamlCodec::write(*schema, "upsampler", form.values()));
      for (auto it = p.values.cbegin(); it != p.values.cend(); ++it) {
        const OptionSpec& spec = *schema->find(it.key());  // a value equal to the default is not written
        const QVariant got = back.values.contains(it.key()) ? back.values.value(it.key()) : spec.defaultValue;
        QVERIFY2(OptionSchema::sameValue(spec, got, *it), qPrintable(it.key()));
      }
    }
    // train-experts: a schema, or the worker's own message (the dialog disables the job).
    QString expertsError;
    const auto experts = SchemaFetcher::fetch(QStringLiteral("train-experts"), &expertsError, engine);
    QVERIFY(experts || !expertsError.isEmpty());
    if (!experts)
      QVERIFY2(!expertsError.startsWith("error:") && expertsError.contains("train-experts"), qPrintable(expertsError));
  }

  void formYamlFormRoundTripKeepsValues() {
    const OptionSchema schema = fixtureSchema();
    ConfigForm form;
    form.setSchema(schema);
    QSignalSpy changed(&form, &ConfigForm::valuesChanged);
    qobject_cast<QSpinBox*>(form.editor("video_sample_size")->input())->setValue(512);
    qobject_cast<QCheckBox*>(form.editor("use_ema")->input())->setChecked(true);
    qobject_cast<FloatSpinBox*>(form.editor("learning_rate")->input())->setValue(1e-4);
    qobject_cast<FloatSpinBox*>(form.editor("noise_shift")->input())->setValue(3.5);
    auto* precision = qobject_cast<QComboBox*>(form.editor("mixed_precision")->input());
    precision->setCurrentIndex(precision->findText("no"));
    Q_EMIT precision->activated(precision->currentIndex());
    auto* ops = qobject_cast<QLineEdit*>(form.editor("degradation_ops_range")->input());
    ops->setText("2, 3");
    Q_EMIT ops->textEdited(ops->text());
    auto* modules = qobject_cast<QLineEdit*>(form.editor("trainable_modules")->input());
    modules->setText("");
    Q_EMIT modules->textEdited(modules->text());
    form.setValue("validation_paths", QVariantList{"/v/a b.mp4", "/v/c.mp4"});
    form.setValue("max_train_steps", qlonglong(7));
    QVERIFY(changed.count() >= 6);

    const QVariantMap values = form.values();
    QCOMPARE(values.size(), 9);
    QCOMPARE(values.value("video_sample_size"), QVariant(qlonglong(512)));
    QCOMPARE(values.value("trainable_modules").toList(), QVariantList{});  // differs from ["."]
    const QString yaml = RunYamlCodec::write(schema, "upsampler", values);
    QVERIFY(yaml.startsWith("job: upsampler\n"));
    // Only what differs from the default is written.
    QVERIFY(!yaml.contains("adam_beta1"));
    QVERIFY(!yaml.contains("logging_dir"));
    QVERIFY(yaml.contains("learning_rate: 0.0001") || yaml.contains("learning_rate: 1e-04"));

    const ParsedRunYaml parsed = RunYamlCodec::parse(schema, yaml);
    QVERIFY(parsed.ok());
    QCOMPARE(parsed.job, QStringLiteral("upsampler"));
    QVERIFY(parsed.typeErrors.isEmpty() && parsed.unknownKeys.isEmpty());
    ConfigForm again;
    again.setSchema(schema);
    again.setValues(parsed.values);
    const QVariantMap back = again.values();
    QCOMPARE(back.keys(), values.keys());
    for (auto it = values.cbegin(); it != values.cend(); ++it)
      QVERIFY2(OptionSchema::sameValue(*schema.find(it.key()), back.value(it.key()), *it), qPrintable(it.key()));
    QCOMPARE(qobject_cast<FloatSpinBox*>(again.editor("learning_rate")->input())->value(), 1e-4);
    QCOMPARE(again.value("validation_paths").toList(), (QVariantList{"/v/a b.mp4", "/v/c.mp4"}));
  }

  void presetsAreRunYamlsOfTheJob() {
    auto d = dialog();
    QVERIFY(d->setJob("upsampler"));
    QCOMPARE(d->presetCombo()->count(), 2);  // schema defaults + presets/demo/up.yaml
    QCOMPARE(d->presetCombo()->currentText(), QStringLiteral("demo/up.yaml"));
    // Relative paths of a preset mean its folder; output_dir is the new run's folder.
    QCOMPARE(d->form()->value("train_data_meta").toString(), QDir::cleanPath(dir_.filePath("data/metadata.json")));
    QCOMPARE(d->form()->value("output_dir").toString(), QDir::cleanPath(dir_.filePath("ws/r1")));
    QVERIFY(d->yamlText().contains("video_sample_size: 256"));
    QVERIFY2(d->problems().isEmpty(), qPrintable(d->problems().join('\n')));
    QVERIFY(d->selectPreset({}));
    QCOMPARE(d->form()->value("video_sample_size"), QVariant(qlonglong(640)));
  }

  // New Run knows the dataset the studio has open: every preset trains on it, and the demo's
  // stand-in (demo_data) is dropped so a wrong path is an error rather than a silent demo.
  void newRunTrainsOnTheOpenDataset() {
    const QString meta = write(QStringLiteral("mine/metadata.json"), "[]");
    auto d = dialog();
    QVERIFY(d->setJob("upsampler"));
    QCOMPARE(d->form()->value("train_data_meta").toString(), QDir::cleanPath(dir_.filePath("data/metadata.json")));
    QVERIFY(d->yamlText().contains("demo_data"));
    d->setDataset(meta);
    QCOMPARE(d->form()->value("train_data_meta").toString(), meta);
    QVERIFY2(!d->yamlText().contains("demo_data"), qPrintable(d->yamlText()));
    QVERIFY(d->yamlText().contains("video_sample_size: 256"));  // the rest of the preset stays
    QVERIFY(d->selectPreset({}));                               // and so it does for any preset
    QCOMPARE(d->form()->value("train_data_meta").toString(), meta);
    QVERIFY2(d->problems().isEmpty(), qPrintable(d->problems().join('\n')));
  }

  // The preset's validation clips are another dataset's (the demo's, once the demo has run): a run
  // on the open dataset validates on two of its own clips, even where the preset's exist; clips that
  // lie in the dataset's folder stay.
  void newRunValidatesOnTheOpenDatasetsClips() {
    // Presets of this test only (another test counts the folder's).
    const auto cleanup =
        qScopeGuard([this] { QDir(dir_.filePath(QStringLiteral("presets/val"))).removeRecursively(); });
    const QString other = write(QStringLiteral("demo-data/videos/clip_00.mp4"), "not a video");
    const QString own1 = write(QStringLiteral("mine2/videos/a.mp4"), "x");
    const QString own2 = write(QStringLiteral("mine2/videos/b.mp4"), "x");
    const QString own3 = write(QStringLiteral("mine2/videos/c.mp4"), "x");
    const QString meta =
        write(QStringLiteral("mine2/metadata.json"),
              R"([{"file_path": "videos/a.mp4", "text": "a"}, {"file_path": "videos/b.mp4", "text": "b"},
                                   {"file_path": "videos/c.mp4", "text": "c"}])");
    const QString preset = write(QStringLiteral("presets/val/up-val.yaml"),
                                 "job: upsampler\nvalidation_paths: [" + other.toUtf8() + "]\n");
    const QString mine = write(QStringLiteral("presets/val/up-mine.yaml"),
                               "job: upsampler\nvalidation_paths: [" + own3.toUtf8() + "]\n");
    auto d = dialog();
    QVERIFY(d->setJob("upsampler"));
    d->setDataset(meta);
    QVERIFY(d->selectPreset(preset));
    QCOMPARE(d->form()->value("validation_paths").toList(), (QVariantList{own1, own2}));
    QVERIFY2(!d->yamlText().contains(other), qPrintable(d->yamlText()));
    // A preset whose clips are the dataset's keeps them.
    QVERIFY(d->selectPreset(mine));
    QCOMPARE(d->form()->value("validation_paths").toList(), (QVariantList{own3}));
  }

  // "New run like this one": every value of an existing run, its relative paths made absolute, the
  // resume dropped, under a free name beside it.
  void newRunLikeAnExistingOne() {
    const QString yaml = write(QStringLiteral("ws/orig/run.yaml"),
                               "job: upsampler\ntrain_data_meta: ../../data/metadata.json\noutput_dir: .\n"
                               "learning_rate: 3.0e-4\nvideo_sample_size: 320\nresume_from_checkpoint: latest\n");
    write(QStringLiteral("ws/orig-2/run.yaml"), "job: upsampler\n");  // taken: the next free name is -3
    auto d = dialog();
    QString error;
    QVERIFY2(d->startFrom(yaml, &error), qPrintable(error));
    QCOMPARE(d->job(), QStringLiteral("upsampler"));
    QCOMPARE(d->runNameEdit()->text(), QStringLiteral("orig-3"));
    QCOMPARE(d->form()->value("learning_rate").toDouble(), 3e-4);
    QCOMPARE(d->form()->value("video_sample_size"), QVariant(qlonglong(320)));
    QCOMPARE(d->form()->value("train_data_meta").toString(), QDir::cleanPath(dir_.filePath("data/metadata.json")));
    QCOMPARE(d->form()->value("output_dir").toString(), QDir::cleanPath(dir_.filePath("ws/orig-3")));
    QVERIFY2(!d->yamlText().contains("resume_from_checkpoint: latest"), qPrintable(d->yamlText()));
    QVERIFY2(d->problems().isEmpty(), qPrintable(d->problems().join('\n')));
    // Branched from a checkpoint: the new run goes on from it.
    d->setResumeFrom(dir_.filePath("ws/orig/checkpoint-4"));
    QVERIFY2(d->yamlText().contains("resume_from_checkpoint: " + dir_.filePath("ws/orig/checkpoint-4")),
             qPrintable(d->yamlText()));
    QVERIFY(!d->startFrom(dir_.filePath("ws/none/run.yaml"), &error));
    QVERIFY(error.contains("none"));
  }

  // New Run opened before any workspace: the folder is chosen in the dialog, not before it.
  void theFolderIsChosenInTheDialog() {
    NewRunDialog d(&jobs_, QString(), dir_.filePath(QStringLiteral("presets")), fixtureSource());
    d.setRunName(QStringLiteral("r1"));
    QVERIFY(d.setJob("upsampler"));
    QVERIFY2(d.problems().join('\n').contains("No folder"), qPrintable(d.problems().join('\n')));
    QVERIFY(d.runDirectory().isEmpty());
    const QString elsewhere = dir_.filePath(QStringLiteral("elsewhere"));
    QVERIFY(QDir().mkpath(elsewhere));
    d.setFolder(elsewhere);
    QCOMPARE(d.folder(), QDir::cleanPath(elsewhere));
    QCOMPARE(d.runDirectory(), QDir::cleanPath(elsewhere + QStringLiteral("/r1")));
    QCOMPARE(d.form()->value("output_dir").toString(), d.runDirectory());
    QVERIFY2(d.problems().isEmpty(), qPrintable(d.problems().join('\n')));
  }

  void unavailableJobIsDisabledWithTheWorkersMessage() {
    auto d = dialog();
    const int row = d->jobCombo()->findData("experts");
    QVERIFY(row >= 0);
    auto* model = qobject_cast<QStandardItemModel*>(d->jobCombo()->model());
    QVERIFY(!model->item(row)->isEnabled());
    QVERIFY(model->item(row)->toolTip().contains("no option schema"));
    QVERIFY(d->schemaError("experts").contains("no option schema"));
    QVERIFY(!d->setJob("experts"));
    QCOMPARE(d->job(), QStringLiteral("upsampler"));
  }

  void formEditsUpdateTheYaml() {
    auto d = dialog();
    auto* size = qobject_cast<QSpinBox*>(d->form()->editor("video_sample_size")->input());
    size->setValue(320);
    QVERIFY(d->yamlText().contains("video_sample_size: 320"));
    QVERIFY(d->yamlText().contains("output_dir: " + QDir::cleanPath(dir_.filePath("ws/r1"))));
    d->setRunName("r2");
    QVERIFY(d->yamlText().contains("output_dir: " + QDir::cleanPath(dir_.filePath("ws/r2"))));
  }

  void yamlEditsUpdateTheForm() {
    auto d = dialog();
    QString yaml = d->yamlText();
    yaml.replace("video_sample_size: 256", "video_sample_size: 512");
    yaml += "use_ema: true\nmixed_precision: fp16\nvalidation_paths: [" + dir_.filePath("data/metadata.json") + "]\n";
    d->setYamlText(yaml);
    // The form follows after a pause in typing.
    QTRY_COMPARE(d->form()->value("video_sample_size"), QVariant(qlonglong(512)));
    QCOMPARE(d->form()->value("use_ema"), QVariant(true));
    QCOMPARE(d->form()->value("mixed_precision"), QVariant("fp16"));
    QCOMPARE(d->form()->value("validation_paths").toList().size(), 1);
    QVERIFY2(d->problems().isEmpty(), qPrintable(d->problems().join('\n')));
    // Removing a key puts the option back to its default.
    yaml.remove("use_ema: true\n");
    d->setYamlText(yaml);
    d->syncFormFromYaml();
    QCOMPARE(d->form()->value("use_ema"), QVariant(false));
  }

  // The worker reads 1/0/yes/off as booleans and None/~ as "no value" for numbers; the form, one
  // grammar with the worker (contract/option_values.h), must not call such a preset wrong.
  void presetWordsTheWorkerAcceptsAreAccepted() {
    auto d = dialog();
    d->setYamlText(
        "job: upsampler\ndemo_data: auto\ntrain_data_meta: /nowhere/metadata.json\n"
        "use_ema: 1\nmax_train_steps: None\nnoise_shift: ~\n");
    d->syncFormFromYaml();
    QVERIFY2(d->problems().isEmpty(), qPrintable(d->problems().join('\n')));
    QCOMPARE(d->form()->value("use_ema"), QVariant(true));
    QVERIFY(d->form()->value("max_train_steps").isNull());
    d->setYamlText("job: upsampler\ndemo_data: auto\ntrain_data_meta: /nowhere/metadata.json\nuse_ema: off\n");
    d->syncFormFromYaml();
    QCOMPARE(d->form()->value("use_ema"), QVariant(false));
  }

  void badYamlShowsTheErrorAndKeepsTheForm() {
    auto d = dialog();
    qobject_cast<QSpinBox*>(d->form()->editor("video_sample_size")->input())->setValue(480);
    const QVariantMap before = d->form()->values();
    d->setYamlText("job: upsampler\nvideo_sample_size: [1, 2\nlearning_rate: 3\n");
    d->syncFormFromYaml();
    QVERIFY(!d->yamlError().isEmpty());
    QVERIFY(d->yamlError().contains("line"));
    QCOMPARE(d->form()->values(), before);
    QVERIFY(d->problems().join('\n').contains("YAML line"));
    // The text stays as typed so it can be fixed.
    QVERIFY(d->yamlText().contains("[1, 2\n"));
    QVERIFY(!d->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
    // Fixing it syncs again.
    d->setYamlText("job: upsampler\ndemo_data: auto\ntrain_data_meta: /nowhere/m.json\nvideo_sample_size: 496\n");
    d->syncFormFromYaml();
    QVERIFY(d->yamlError().isEmpty());
    QCOMPARE(d->form()->value("video_sample_size"), QVariant(qlonglong(496)));
  }

  void validationShowsNextToTheField_data() {
    QTest::addColumn<QString>("yaml");
    QTest::addColumn<QString>("field");  // "" = a general problem
    QTest::addColumn<QString>("message");
    const QString base = "job: upsampler\ndemo_data: auto\ntrain_data_meta: /nowhere/metadata.json\n";
    QTest::newRow("unknown key") << base + "learning_rat: 0.1\n"
                                 << ""
                                 << "line 4: unknown option learning_rat";
    QTest::newRow("wrong type int") << base + "video_sample_size: big\n"
                                    << "video_sample_size"
                                    << "line 4: expected an integer";
    QTest::newRow("wrong type bool") << base + "use_ema: maybe\n"
                                     << "use_ema"
                                     << "expected true or false";
    QTest::newRow("wrong type list") << base + "degradation_ops_range: [1, x]\n"
                                     << "degradation_ops_range"
                                     << "expected a list of int";
    QTest::newRow("missing meta") << "job: upsampler\ntrain_data_meta: /nowhere/metadata.json\n"
                                  << "train_data_meta"
                                  << "/nowhere/metadata.json does not exist";
    QTest::newRow("required") << "job: upsampler\n"
                              << "train_data_meta"
                              << "required";
    QTest::newRow("missing input path") << base + "validation_paths: [/nowhere/v.mp4]\n"
                                        << "validation_paths"
                                        << "/nowhere/v.mp4 does not exist";
    QTest::newRow("frames 4k+1") << base + "video_sample_n_frames: 16\n"
                                 << "video_sample_n_frames"
                                 << "4k+1";
    QTest::newRow("size multiple of 16") << base + "video_sample_size: 250\n"
                                         << "video_sample_size"
                                         << "multiple of 16";
    QTest::newRow("min") << base + "video_sample_size: 32\n"
                         << "video_sample_size"
                         << "at least 48";
    QTest::newRow("max") << base + "adam_beta1: 1.5\n"
                         << "adam_beta1"
                         << "at most 1";
    QTest::newRow("min null default") << base + "max_train_steps: 0\n"
                                      << "max_train_steps"
                                      << "at least 1";
    QTest::newRow("enum") << base + "mixed_precision: fp8\n"
                          << "mixed_precision"
                          << "not one of no, fp16, bf16";
    QTest::newRow("job mismatch") << "job: experts\ndemo_data: auto\ntrain_data_meta: /x/m.json\n"
                                  << ""
                                  << "disagrees";
  }

  void validationShowsNextToTheField() {
    QFETCH(QString, yaml);
    QFETCH(QString, field);
    QFETCH(QString, message);
    auto d = dialog();
    d->setYamlText(yaml);
    d->syncFormFromYaml();
    QVERIFY(d->yamlError().isEmpty());
    const QString all = d->problems().join('\n');
    QVERIFY2(all.contains(message), qPrintable(all));
    if (!field.isEmpty()) QVERIFY2(d->form()->error(field).contains(message), qPrintable(d->form()->error(field)));
    QVERIFY(!d->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled());
  }

  void demoDataAutoExcusesAMissingDataset() {
    const OptionSchema schema = fixtureSchema();
    QVariantMap v{{"train_data_meta", "/nowhere/metadata.json"}, {"train_data_dir", "/nowhere"}};
    QVERIFY(ConfigValidator::validate(schema, v, dir_.path()).contains("train_data_meta"));
    v.insert("demo_data", "auto");
    QVERIFY(ConfigValidator::validate(schema, v, dir_.path()).isEmpty());
    // Relative paths resolve against the run folder.
    const QMap<QString, QString> rel =
        ConfigValidator::validate(schema, {{"train_data_meta", "data/metadata.json"}}, dir_.path());
    QVERIFY2(rel.isEmpty(), qPrintable(rel.value("train_data_meta")));
    // Values the form cannot hold (a word in a list of ints) are an error too.
    ConfigForm form;
    form.setSchema(schema);
    qobject_cast<QLineEdit*>(form.editor("degradation_ops_range")->input())->setText("1, two");
    QVERIFY(form.inputErrors().value("degradation_ops_range").contains("\"two\" is not a int"));
  }

  void runNameMustBeNewAndPlain() {
    write("ws/taken/run.yaml", "job: upsampler\n");
    auto d = dialog();
    d->setRunName("taken");
    QVERIFY(d->problems().join('\n').contains("already exists"));
    d->setRunName("a/b");
    QVERIFY(d->problems().join('\n').contains("plain folder name"));
    d->setRunName("fresh");
    QVERIFY2(d->problems().isEmpty(), qPrintable(d->problems().join('\n')));
  }

  void startWritesRunYamlAndStartsTheWorker() {
    const QString worker = fake::writeScript(
        dir_.path(), "worker.sh",
        "echo \"$@\" > \"$(dirname \"$0\")/args.txt\"\nstarted 1\nstep 1\nfinished completed 1\nexit 0");
    qputenv("WANSTUDIO_ENGINE", worker.toUtf8());
    auto d = dialog();
    d->setRunName("started");
    qobject_cast<QSpinBox*>(d->form()->editor("video_sample_n_frames")->input())->setValue(9);
    QSignalSpy jobStarted(&jobs_, &JobManager::jobStarted);
    d->accept();
    qunsetenv("WANSTUDIO_ENGINE");
    QCOMPARE(d->result(), int(QDialog::Accepted));
    QCOMPARE(jobStarted.count(), 1);
    QVERIFY(d->startedJob());
    const QString runDir = QDir::cleanPath(dir_.filePath("ws/started"));
    QCOMPARE(d->runDirectory(), runDir);
    QString error;
    const auto cfg = RunConfig::load(runDir + "/run.yaml", &error);
    QVERIFY2(cfg, qPrintable(error));
    QCOMPARE(cfg->job, QStringLiteral("upsampler"));
    QCOMPARE(cfg->outputDir, runDir);
    const ParsedRunYaml p =
        RunYamlCodec::parse(fixtureSchema(), QString::fromUtf8(fake::readAll(runDir + "/run.yaml")));
    QCOMPARE(p.values.value("video_sample_n_frames"), QVariant(qlonglong(9)));
    QCOMPARE(p.values.value("demo_data"), QVariant("auto"));
    QVERIFY(!p.values.contains("adam_beta1"));
    QTRY_VERIFY(d->startedJob()->phase() == WorkerJob::Phase::Ended);
    QCOMPARE(d->startedJob()->arguments().first(), QStringLiteral("train-upsampler"));
    QCOMPARE(jobs_.lastJobForRun(runDir), d->startedJob());
  }

  void estimateShowsTheMemoryAndWarnsWhenItDoesNotFit() {
    // A worker that answers `estimate` with the run file's size as its need: the YAML it gets
    // is the dialog's, and a bigger run (more frames) needs more.
    const QString worker =
        fake::writeScript(dir_.path(), "estimate.sh",
                          "echo \"$@\" > \"$(dirname \"$0\")/estimate-args.txt\"\n"
                          "f=$(sed -n 's/^video_sample_n_frames: *//p' \"$3\")\n"
                          "echo '{\"total_bytes\":'$((f * 1073741824))',\"machine_bytes\":21474836480,\"fits\":'$([ $f "
                          "-le 20 ] && echo true || echo false)',"
                          "\"estimate\":{\"parts\":[{\"name\":\"weights\",\"bytes\":1073741824},{\"name\":"
                          "\"activations\",\"bytes\":'$(((f - 1) * 1073741824))'}]}}'\n");
    qputenv("WANSTUDIO_ENGINE", worker.toUtf8());
    auto d = dialog();
    auto* frames = qobject_cast<QSpinBox*>(d->form()->editor("video_sample_n_frames")->input());
    frames->setValue(17);
    d->estimateButton()->click();
    QTRY_VERIFY(d->estimateLabel()->text().startsWith(QStringLiteral("Needs about")));
    QVERIFY2(d->estimateLabel()->text().contains(QStringLiteral("17.00 GiB of this machine's 20.00 GiB")),
             qPrintable(d->estimateLabel()->text()));
    QVERIFY2(d->estimateLabel()->text().contains(QStringLiteral("activations 16.00 GiB, weights 1.00 GiB")),
             qPrintable(d->estimateLabel()->text()));
    QVERIFY(fake::readAll(dir_.filePath("estimate-args.txt")).startsWith("estimate --config "));
    frames->setValue(33);
    d->estimateButton()->click();
    QTRY_VERIFY(d->estimateLabel()->text().startsWith(QStringLiteral("Warning")));
    QVERIFY2(d->estimateLabel()->text().contains(QStringLiteral("33.00 GiB, more than this machine's 20.00 GiB")),
             qPrintable(d->estimateLabel()->text()));
    QCOMPARE(d->estimateLabel()->property("tone").toString(), QStringLiteral("error"));  // shown in red
    // A worker that cannot estimate says why.
    const QString broken =
        fake::writeScript(dir_.path(), "broken.sh", "echo 'error: config_path: file not found' >&2\nexit 1\n");
    qputenv("WANSTUDIO_ENGINE", broken.toUtf8());
    d->estimateButton()->click();
    QTRY_VERIFY(d->estimateLabel()->text().startsWith(QStringLiteral("No estimate")));
    QVERIFY2(d->estimateLabel()->text().contains(QStringLiteral("config_path: file not found")),
             qPrintable(d->estimateLabel()->text()));
    qunsetenv("WANSTUDIO_ENGINE");
  }
};

QTEST_MAIN(TestConfigForm)
#include "test_config_form.moc"
