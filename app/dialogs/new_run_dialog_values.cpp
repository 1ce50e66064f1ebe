// SPDX-License-Identifier: Apache-2.0
// Where New Run's values come from: a preset, an existing run ("like this one") and the dataset
// open in the studio, all through one path (valuesFromFile, applyValues).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>

#include <algorithm>

#include "config/run_config.h"
#include "config/run_yaml_codec.h"
#include "config_form.h"
#include "dialogs/new_run_dialog.h"
#include "runfolder/regular_file.h"

namespace ws {
namespace {

const QString kOutputDir = QString::fromLatin1(NewRunDialog::kOutputDirKey);

QString readText(const QString& path, QString* error) {
  QFile f(path);
  if (!openRegularFile(f, QIODevice::ReadOnly, error)) return {};
  return QString::fromUtf8(f.readAll());
}

// Up to `n` video files of a metadata.json that exist on disk (file paths are relative to its folder).
QStringList datasetVideos(const QString& metadataPath, int n) {
  QString error;
  const QJsonArray rows = QJsonDocument::fromJson(readText(metadataPath, &error).toUtf8()).array();
  const QDir dir = QFileInfo(metadataPath).absoluteDir();
  QStringList out;
  for (const QJsonValue& row : rows) {
    const QJsonObject o = row.toObject();
    if (o.value(QStringLiteral("type")).toString(QStringLiteral("video")) != QLatin1String("video")) continue;
    const QString file = QDir::cleanPath(dir.absoluteFilePath(o.value(QStringLiteral("file_path")).toString()));
    if (QFileInfo(file).isFile()) out << file;
    if (out.size() >= n) break;
  }
  return out;
}

}  // namespace

// A run file's values with its relative paths made absolute against its folder; `note` says what
// was skipped (or why the file could not be read).
QVariantMap NewRunDialog::valuesFromFile(const QString& path, QString* note) const {
  const OptionSchema& schema = schemas_[job_];
  QString error;
  const QString text = readText(path, &error);
  const ParsedRunYaml parsed = error.isEmpty() ? RunYamlCodec::parse(schema, text) : ParsedRunYaml{};
  if (!error.isEmpty() || !parsed.ok()) {
    *note = error.isEmpty() ? tr("%1: %2").arg(path, parsed.parseError) : error;
    return {};
  }
  // Relative paths in a run file mean its own folder; the new run YAML lives elsewhere.
  const QVariantMap values = RunYamlCodec::absolutePaths(schema, parsed.values, QFileInfo(path).absolutePath());
  QStringList skipped = parsed.unknownKeys;
  for (auto it = parsed.typeErrors.cbegin(); it != parsed.typeErrors.cend(); ++it)
    skipped << it.key() + QStringLiteral(": ") + *it;
  if (!skipped.isEmpty())
    *note = tr("%1: skipped %2").arg(QFileInfo(path).fileName(), skipped.join(QStringLiteral("; ")));
  return values;
}

void NewRunDialog::loadPreset() {
  if (job_.isEmpty()) return;
  const QString path = presetCombo_->currentData().toString();
  presetNote_.clear();
  applyValues(path.isEmpty() ? QVariantMap() : valuesFromFile(path, &presetNote_));
}

bool NewRunDialog::startFrom(const QString& runYaml, QString* error) {
  const auto cfg = RunConfig::load(runYaml, error);
  if (!cfg) return false;
  if (!setJob(cfg->job)) {
    if (error) *error = tr("%1: the worker has no schema for job '%2'").arg(runYaml, cfg->job);
    return false;
  }
  // Named after the run it copies: <name>-2, -3, ... whichever is free.
  const QString base = QFileInfo(QFileInfo(runYaml).absolutePath()).fileName();
  QString name;
  for (int n = 2; name.isEmpty() || QFileInfo::exists(QDir(workspace_).filePath(name)); ++n)
    name = QStringLiteral("%1-%2").arg(base).arg(n);
  setRunName(name);
  presetNote_.clear();
  QVariantMap values = valuesFromFile(runYaml, &presetNote_);
  values.remove(QStringLiteral("resume_from_checkpoint"));  // a new run starts fresh
  presetNote_ = tr("Like %1").arg(base) + (presetNote_.isEmpty() ? QString() : QStringLiteral(" — ") + presetNote_);
  applyValues(values);
  return true;
}

void NewRunDialog::applyValues(QVariantMap values) {
  const OptionSchema& schema = schemas_[job_];
  if (!dataset_.isEmpty()) {
    // The open dataset wins over the preset's, which is usually the demo's.
    values.insert(QStringLiteral("train_data_meta"), dataset_);
    values.remove(QStringLiteral("train_data_dir"));  // file paths resolve against the metadata's folder
    values.remove(QStringLiteral("demo_data"));
    if (!datasetEmbeddings_.isEmpty() && schema.find(QStringLiteral("text_embeddings_dir")))
      values.insert(QStringLiteral("text_embeddings_dir"), datasetEmbeddings_);
    // The preset's validation clips are usually the demo's (present once the demo has run): a run
    // on this dataset validates on two of its own unless every clip given lies in its folder.
    const QString key = QStringLiteral("validation_paths");
    const QStringList given = values.value(key).toStringList();
    const QString root = QFileInfo(dataset_).absoluteDir().absolutePath() + QLatin1Char('/');
    const bool foreign = std::any_of(given.begin(), given.end(), [&root](const QString& f) {
      const QFileInfo info(f);
      return !info.exists() || !info.absoluteFilePath().startsWith(root);
    });
    if (schema.find(key) && foreign) {
      const QStringList clips = datasetVideos(dataset_, 2);
      if (!clips.isEmpty()) {
        values.insert(key, QVariantList(clips.begin(), clips.end()));
        presetNote_ += (presetNote_.isEmpty() ? QString() : QStringLiteral(" — ")) +
                       tr("validation clips taken from the dataset (the preset's are not in its folder)");
      }
    }
  }
  values.insert(kOutputDir, runDirectory());
  form_->setValues(values);
  yamlIsSource_ = false;
  yaml_ = ParsedRunYaml{};
  writeYamlFromForm();
  revalidate();
}

void NewRunDialog::updateScheduleNote() {
  // Each job validates on two schedules at once; the form shows them apart, so say it here.
  const auto every = [this](const char* key) { return form_->value(QLatin1String(key)).toLongLong(); };
  const auto isSet = [this](const char* key) {
    const QVariant v = form_->value(QLatin1String(key));
    return v.typeId() == QMetaType::QVariantList ? !v.toList().isEmpty() : !v.toString().trimmed().isEmpty();
  };
  QString note;
  if (job_ == QLatin1String("upsampler")) {
    note = isSet("validation_paths")
               ? tr("Validation runs on both schedules: every %1 steps (validation_steps) and after every %2 "
                    "epochs (validation_epochs).")
                     .arg(every("validation_steps"))
                     .arg(every("validation_epochs"))
               : tr("No validation clips (validation_paths): this run validates nothing.");
  } else if (job_ == QLatin1String("experts")) {
    const QString eval = isSet("eval_data_meta") ? tr("eval loss every %1 steps (eval_steps)").arg(every("eval_steps"))
                                                 : tr("no eval loss (no eval_data_meta)");
    QString videos = tr("no validation videos (no validation_prompts)");
    if (isSet("validation_prompts") || isSet("validation_prompt_embeddings")) {
      videos =
          tr("validation videos every %1 steps (validation_steps) and after the last").arg(every("validation_steps"));
      if (form_->value(QStringLiteral("validation_at_start")).toBool()) videos += tr(", and before the first update");
    }
    note = tr("Two schedules: %1; %2.").arg(eval, videos);
  }
  form_->setGroupNote(QStringLiteral("Validation"), note);
}

void NewRunDialog::setResumeFrom(const QString& checkpointDir) {
  form_->setValue(QStringLiteral("resume_from_checkpoint"), checkpointDir);
  onFormEdited();
}

void NewRunDialog::setFolder(const QString& dir) {
  workspace_ = QDir::cleanPath(dir);
  folder_->setText(workspace_);
  onRunNameEdited();  // output_dir follows, and the checks run again
}

}  // namespace ws
