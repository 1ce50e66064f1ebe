// SPDX-License-Identifier: Apache-2.0
#include "dialogs/new_run_dialog.h"
#include "config/run_config.h"

#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QVBoxLayout>

#include "config_form.h"
#include "jobs/job_manager.h"
#include "jobs/run_queue.h"
#include "jobs/preset_locator.h"
#include "jobs/schema_fetcher.h"
#include "jobs/worker_job.h"
#include "config/config_validator.h"
#include "contract/jobs.h"
#include "config/run_yaml_codec.h"
#include "option_editor.h"
#include "runfolder/run_paths.h"
#include "runfolder/regular_file.h"
#include "theme.h"

namespace ws {
namespace {

const QString kOutputDir = QString::fromLatin1(NewRunDialog::kOutputDirKey);
const QString kComment = QStringLiteral(
    "Run config written by Wan Studio's New Run dialog.\n"
    "Relative paths resolve against this file's folder.");

}  // namespace

QString NewRunDialog::verbForJob(const QString& job) {
  return QString::fromStdString(contract::verb_for_job(job.toStdString()));
}

NewRunDialog::NewRunDialog(JobManager* jobs, const QString& workspace, const QString& presetsDir, SchemaSource schemas,
                           QWidget* parent)
    : QDialog(parent), jobs_(jobs), workspace_(workspace), presetsDir_(presetsDir) {
  setObjectName(QStringLiteral("newRunDialog"));
  setWindowTitle(tr("New Run"));

  jobCombo_ = new QComboBox(this);
  jobCombo_->setAccessibleName(tr("Job"));
  presetCombo_ = new QComboBox(this);
  presetCombo_->setAccessibleName(tr("Preset"));
  presetCombo_->setToolTip(presetsDir.isEmpty() ? tr("No configs/ folder found (see wanstudio --configs)")
                                                : tr("Run YAMLs under %1").arg(presetsDir));
  runName_ = new QLineEdit(this);
  runName_->setAccessibleName(tr("Run name"));
  runFolder_ = new QLabel(this);
  runFolder_->setObjectName(QStringLiteral("hint"));
  runFolder_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  jobNote_ = new QLabel(this);
  jobNote_->setObjectName(QStringLiteral("hint"));
  jobNote_->setWordWrap(true);
  jobNote_->hide();
  // Where the run folder goes: the workspace, or any folder chosen here (none open yet included).
  folder_ = new QLineEdit(workspace_, this);
  folder_->setAccessibleName(tr("Folder"));
  folder_->setReadOnly(true);
  folder_->setPlaceholderText(tr("no folder yet: choose one"));
  auto* chooseFolder = new QPushButton(tr("C&hoose…"), this);
  chooseFolder->setAccessibleName(tr("Choose the folder"));
  chooseFolder->setToolTip(tr("The folder the run folder is made in (it becomes the studio's workspace)"));
  connect(chooseFolder, &QPushButton::clicked, this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder for the Run"), workspace_);
    if (!dir.isEmpty()) setFolder(dir);
  });
  auto* folderRow = new QHBoxLayout;
  folderRow->addWidget(folder_, 1);
  folderRow->addWidget(chooseFolder);
  auto* head = new QFormLayout;
  head->addRow(tr("&Job"), jobCombo_);
  head->addRow(QString(), jobNote_);
  head->addRow(tr("&Preset"), presetCombo_);
  head->addRow(tr("&Folder"), folderRow);
  if (auto* l = qobject_cast<QLabel*>(head->labelForField(folderRow))) l->setBuddy(folder_);
  head->addRow(tr("Run &name"), runName_);
  head->addRow(QString(), runFolder_);
  // Data parallel on this machine (wanstudio-engine launch): P ranks, each every P-th batch.
  processes_ = new QSpinBox(this);
  processes_->setAccessibleName(tr("Processes"));
  processes_->setRange(1, 64);
  processes_->setValue(1);
  processes_->setToolTip(
      tr("Train data parallel with this many worker processes on this machine (Gloo); "
         "rank 0 writes the run"));
  head->addRow(tr("Pro&cesses"), processes_);

  form_ = new ConfigForm(this);
  yamlEdit_ = new QPlainTextEdit(this);
  yamlEdit_->setAccessibleName(tr("Run YAML"));
  yamlEdit_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  yamlEdit_->setLineWrapMode(QPlainTextEdit::NoWrap);
  yamlStatus_ = new QLabel(this);
  yamlStatus_->setWordWrap(true);
  yamlStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* yamlPage = new QWidget(this);
  auto* yamlLayout = new QVBoxLayout(yamlPage);
  yamlLayout->addWidget(yamlEdit_, 1);
  yamlLayout->addWidget(yamlStatus_);
  tabs_ = new QTabWidget(this);
  tabs_->addTab(form_, tr("Form"));
  tabs_->addTab(yamlPage, tr("YAML"));

  problemsLabel_ = new QLabel(this);
  problemsLabel_->setObjectName(QStringLiteral("problems"));
  setTone(problemsLabel_, Tone::Error);
  problemsLabel_->setWordWrap(true);
  problemsLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons_->button(QDialogButtonBox::Ok)->setText(tr("&Start Run"));
  connect(buttons_, &QDialogButtonBox::accepted, this, &NewRunDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &NewRunDialog::reject);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(head);
  layout->addWidget(tabs_, 1);
  layout->addLayout(setUpEstimate());
  layout->addWidget(problemsLabel_);
  layout->addWidget(buttons_);
  resize(760, 820);

  // YAML edits reach the form after a pause in typing, so half-typed lines are not errors.
  yamlTimer_.setSingleShot(true);
  yamlTimer_.setInterval(400);
  connect(&yamlTimer_, &QTimer::timeout, this, &NewRunDialog::syncFormFromYaml);
  connect(yamlEdit_, &QPlainTextEdit::textChanged, &yamlTimer_, qOverload<>(&QTimer::start));
  connect(form_, &ConfigForm::valuesChanged, this, &NewRunDialog::onFormEdited);
  connect(runName_, &QLineEdit::textEdited, this, [this] { nameEdited_ = true; });
  connect(runName_, &QLineEdit::textChanged, this, &NewRunDialog::onRunNameEdited);
  connect(presetCombo_, &QComboBox::currentIndexChanged, this, &NewRunDialog::loadPreset);
  connect(jobCombo_, &QComboBox::currentIndexChanged, this, &NewRunDialog::onJobChosen);

  loadSchemas(schemas ? schemas : SchemaSource([](const QString& verb, QString* error) {
    return SchemaFetcher::fetch(verb, error);
  }));
}

void NewRunDialog::loadSchemas(const SchemaSource& source) {
  const QSignalBlocker block(jobCombo_);
  auto* model = qobject_cast<QStandardItemModel*>(jobCombo_->model());
  QStringList notes;
  int firstUsable = -1;
  for (const contract::Job& e : contract::jobs()) {
    if (!e.new_run) continue;
    const QString job = QLatin1String(e.job);
    QString error;
    const auto schema = source(verbForJob(job), &error);
    jobCombo_->addItem(QString::fromLatin1(e.title), job);
    const int row = jobCombo_->count() - 1;
    if (schema) {
      schemas_.insert(job, *schema);
      if (firstUsable < 0) firstUsable = row;
    } else {
      // The worker cannot run this job (yet): say why and keep it unselectable.
      schemaErrors_.insert(job, error);
      model->item(row)->setEnabled(false);
      model->item(row)->setToolTip(error);
      notes << tr("%1: %2").arg(verbForJob(job), error);
    }
  }
  jobNote_->setText(notes.join(QLatin1Char('\n')));
  jobNote_->setVisible(!notes.isEmpty());
  if (firstUsable >= 0) jobCombo_->setCurrentIndex(firstUsable);
  onJobChosen();
}

bool NewRunDialog::setJob(const QString& job) {
  if (!schemas_.contains(job)) return false;
  jobCombo_->setCurrentIndex(jobCombo_->findData(job));  // onJobChosen() via the signal
  if (job_ != job) onJobChosen();
  return true;
}

void NewRunDialog::onJobChosen() {
  const QString job = jobCombo_->currentData().toString();
  if (!schemas_.contains(job)) {
    job_.clear();
    revalidate();
    return;
  }
  job_ = job;
  form_->setSchema(schemas_.value(job));
  form_->setLocked(kOutputDir, true, tr("The run folder: <workspace>/<run name>"));
  if (!nameEdited_) {
    const QSignalBlocker block(runName_);
    runName_->setText(
        QStringLiteral("%1-%2").arg(job, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
  }
  fillPresets();
  loadPreset();
}

void NewRunDialog::fillPresets() {
  const QSignalBlocker block(presetCombo_);
  presetCombo_->clear();
  presetCombo_->addItem(tr("Schema defaults"), QString());
  for (const QString& path : presetFiles(presetsDir_, job_))
    presetCombo_->addItem(QDir(presetsDir_).relativeFilePath(path), path);
  // A preset is a better start than bare defaults (the demo preset runs anywhere).
  if (presetCombo_->count() > 1) presetCombo_->setCurrentIndex(1);
}

bool NewRunDialog::selectPreset(const QString& path) {
  const int i = path.isEmpty() ? 0 : presetCombo_->findData(QFileInfo(path).absoluteFilePath());
  if (i < 0) return false;
  if (i == presetCombo_->currentIndex()) loadPreset();
  else presetCombo_->setCurrentIndex(i);
  return true;
}

void NewRunDialog::onFormEdited() {
  yamlIsSource_ = false;
  yaml_ = ParsedRunYaml{};
  writeYamlFromForm();
  revalidate();
}

void NewRunDialog::onRunNameEdited() {
  form_->setValue(kOutputDir, runDirectory());
  // Keep a YAML the user is fixing as it is; a valid one follows the form.
  const bool yamlHasErrors =
      yamlIsSource_ && (!yaml_.ok() || !yaml_.typeErrors.isEmpty() || !yaml_.unknownKeys.isEmpty());
  if (!yamlHasErrors && !job_.isEmpty()) writeYamlFromForm();
  revalidate();
}

void NewRunDialog::setDataset(const QString& metadataPath, const QString& textEmbeddingsDir) {
  dataset_ = metadataPath;
  datasetEmbeddings_ = textEmbeddingsDir;
  loadPreset();
}

void NewRunDialog::setRunName(const QString& name) {
  nameEdited_ = true;
  runName_->setText(name);
}

QString NewRunDialog::runDirectory() const {
  const QString name = runName_->text().trimmed();
  if (workspace_.isEmpty() || name.isEmpty()) return {};
  return QDir::cleanPath(QDir(workspace_).absoluteFilePath(name));
}

QString NewRunDialog::yamlText() const { return yamlEdit_->toPlainText(); }

void NewRunDialog::setYamlText(const QString& text) { yamlEdit_->setPlainText(text); }

QVariantMap NewRunDialog::runValues() const {
  QVariantMap values = form_->values();
  values.insert(kOutputDir, runDirectory());
  return values;
}

void NewRunDialog::writeYamlFromForm() {
  if (job_.isEmpty()) return;
  const QSignalBlocker block(yamlEdit_);
  yamlEdit_->setPlainText(RunYamlCodec::write(schemas_[job_], job_, runValues(), kComment));
  yamlTimer_.stop();
}

void NewRunDialog::syncFormFromYaml() {
  yamlTimer_.stop();
  if (job_.isEmpty()) return;
  yaml_ = RunYamlCodec::parse(schemas_[job_], yamlEdit_->toPlainText());
  yamlIsSource_ = true;
  if (yaml_.ok()) {
    QVariantMap values;
    for (auto it = yaml_.values.cbegin(); it != yaml_.values.cend(); ++it)
      if (!it->isNull()) values.insert(it.key(), *it);
    // A field whose YAML value has the wrong type keeps what the form had.
    for (auto it = yaml_.typeErrors.cbegin(); it != yaml_.typeErrors.cend(); ++it)
      if (OptionEditor* e = form_->editor(it.key()); e && !e->isDefault()) values.insert(it.key(), e->value());
    values.insert(kOutputDir, runDirectory());  // the run folder, whatever the text says
    form_->setValues(values);
  }
  // A parse error leaves the form as it was: nothing is lost while the YAML is half-edited.
  revalidate();
}

void NewRunDialog::revalidate() {
  problems_.clear();
  QStringList yamlLines;
  QMap<QString, QString> fieldErrors;
  if (job_.isEmpty()) {
    problems_ << (schemas_.isEmpty() ? tr("The worker offers no job schema: %1")
                                           .arg(QStringList(schemaErrors_.values()).join(QStringLiteral("; ")))
                                     : tr("Choose a job"));
  } else {
    updateScheduleNote();
    fieldErrors = ConfigValidator::validate(schemas_[job_], runValues(), runDirectory());
    const auto inputErrors = form_->inputErrors();
    for (auto it = inputErrors.cbegin(); it != inputErrors.cend(); ++it) fieldErrors.insert(it.key(), *it);
    if (yamlIsSource_) {
      if (!yaml_.ok()) yamlLines << tr("YAML %1 (the form keeps its values)").arg(yaml_.parseError);
      for (auto it = yaml_.typeErrors.cbegin(); it != yaml_.typeErrors.cend(); ++it) {
        fieldErrors.insert(it.key(), *it);
        yamlLines << QStringLiteral("%1: %2").arg(it.key(), *it);
      }
      for (const QString& u : yaml_.unknownKeys) yamlLines << u;
      if (!yaml_.job.isEmpty() && yaml_.job != job_)
        yamlLines << tr("job: %1 disagrees with the chosen job %2").arg(yaml_.job, job_);
    }
  }
  if (workspace_.isEmpty()) problems_ << tr("No folder for the run: Choose… one beside Folder");
  const QString name = runName_->text().trimmed();
  if (name.isEmpty()) problems_ << tr("Give the run a name");
  else if (name.contains(QLatin1Char('/')) || name.contains(QLatin1Char('\\')) || name == QLatin1String(".") ||
           name == QLatin1String(".."))
    problems_ << tr("The run name must be a plain folder name");
  else if (!workspace_.isEmpty()) {
    const QDir dir(runDirectory());
    if (dir.exists() && !dir.isEmpty()) problems_ << tr("%1 already exists and is not empty").arg(dir.path());
  }
  problems_ << yamlLines;
  form_->setErrors(fieldErrors);
  for (auto it = fieldErrors.cbegin(); it != fieldErrors.cend(); ++it)
    problems_ << QStringLiteral("%1: %2").arg(it.key(), *it);

  runFolder_->setText(runDirectory().isEmpty() ? QString() : tr("Writes %1/run.yaml").arg(runDirectory()));
  yamlStatus_->setText(yamlLines.isEmpty() ? tr("In sync with the form.") : yamlLines.join(QLatin1Char('\n')));
  setTone(yamlStatus_, yamlLines.isEmpty() ? Tone::None : Tone::Error);
  QStringList shown = problems_.mid(0, 6);
  if (problems_.size() > 6) shown << tr("… and %n more", nullptr, int(problems_.size() - 6));
  if (!presetNote_.isEmpty()) shown << presetNote_;
  problemsLabel_->setText(shown.join(QLatin1Char('\n')));
  problemsLabel_->setVisible(!shown.isEmpty());
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(problems_.isEmpty());
  // The queue is the workspace's: a run in another folder is started, not queued.
  const bool queueable = queue_ && workspace_ == queueWorkspace_;
  if (queueButton_) {
    queueButton_->setEnabled(problems_.isEmpty() && queueable);
    queueButton_->setToolTip(queueable ? tr("Write the run and start it after the queued runs, one after another")
                                       : tr("The queue belongs to %1: the run goes elsewhere").arg(queueWorkspace_));
  }
}

QString NewRunDialog::writeRunYaml() {
  if (yamlTimer_.isActive()) syncFormFromYaml();
  revalidate();
  if (!problems_.isEmpty()) return {};
  const QString dir = runDirectory();
  const QString path = runFile(dir, contract::kRunYaml);
  QString error;
  if (!QDir().mkpath(dir)) {
    error = tr("Cannot create %1").arg(dir);
  } else {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) ||
        f.write(RunYamlCodec::write(schemas_[job_], job_, runValues(), kComment).toUtf8()) < 0 || !f.commit())
      error = tr("Cannot write %1: %2").arg(path, f.errorString());
  }
  if (!error.isEmpty()) {
    QMessageBox::warning(this, windowTitle(), error);
    return {};
  }
  return path;
}

void NewRunDialog::accept() {
  const QString path = writeRunYaml();
  if (path.isEmpty()) return;
  QString error;
  started_ = jobs_->startRun(path, {}, &error, processes_->value());
  if (!started_) {
    QMessageBox::warning(this, windowTitle(), error);
    return;
  }
  QDialog::accept();
}

void NewRunDialog::setQueue(RunQueue* queue) {
  queue_ = queue;
  queueWorkspace_ = workspace_;
  if (!queueButton_) {
    queueButton_ = buttons_->addButton(tr("Add to &Queue"), QDialogButtonBox::ActionRole);
    connect(queueButton_, &QPushButton::clicked, this, &NewRunDialog::addToQueue);
  }
  queueButton_->setVisible(queue_ != nullptr);
  revalidate();
}

void NewRunDialog::addToQueue() {
  if (!queue_) return;
  const QString path = writeRunYaml();
  if (path.isEmpty()) return;
  QString error;
  queuedId_ = queue_->add(path, processes_->value(), &error);
  if (queuedId_.isEmpty()) {
    QMessageBox::warning(this, windowTitle(), error);
    return;
  }
  QDialog::accept();
}

}  // namespace ws
