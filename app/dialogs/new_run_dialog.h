// SPDX-License-Identifier: Apache-2.0
// File ▸ New Run…: pick a job and a preset, edit the options in a form generated from the
// worker's own schema or as raw YAML (kept in sync both ways), see problems next to their
// field, then write <workspace>/<run name>/run.yaml and start it through the JobManager.
#pragma once

#include <QDialog>
#include <QMap>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <optional>

#include "config/parsed_run_yaml.h"
#include "jobs/worker_job.h"
#include "option_schema.h"

class QComboBox;
class QPushButton;
class QSpinBox;
class QDialogButtonBox;
class QLabel;
class QLayout;
class QLineEdit;
class QPlainTextEdit;
class QTabWidget;

namespace ws {

class ConfigForm;
class EstimateJob;
class JobManager;
class RunQueue;
struct MemoryEstimateResult;

class NewRunDialog : public QDialog {
  Q_OBJECT
 public:
  // Where schemas come from: the worker by default; tests hand in fixtures.
  using SchemaSource = std::function<std::optional<OptionSchema>(const QString& verb, QString* error)>;

  NewRunDialog(JobManager* jobs, const QString& workspace, const QString& presetsDir, SchemaSource schemas = {},
               QWidget* parent = nullptr);

  static QString verbForJob(const QString& job);
  static constexpr const char* kOutputDirKey = "output_dir";  // the run folder: <workspace>/<run name>

  // The job (upsampler | experts); false when it is unknown or its schema is unavailable.
  bool setJob(const QString& job);
  QString job() const { return job_; }
  bool selectPreset(const QString& path);  // "" = the schema's defaults
  void setRunName(const QString& name);
  // The dataset the studio has open: every preset then trains on it (train_data_meta, and the
  // embeddings folder for the experts when given) and never on the demo's stand-in data
  // (demo_data dropped, so a wrong path is an error, not a silent demo). "" = the preset's own.
  void setDataset(const QString& metadataPath, const QString& textEmbeddingsDir = {});
  QString dataset() const { return dataset_; }
  // "New run like this one": the job and every value of an existing run's run.yaml (paths made
  // absolute, resume_from_checkpoint dropped), named <its name>-N. False with *error when the file
  // cannot be read or its job has no schema.
  bool startFrom(const QString& runYaml, QString* error = nullptr);
  // A branch: the new run starts from this checkpoint's weights and state (resume_from_checkpoint).
  void setResumeFrom(const QString& checkpointDir);
  QString runDirectory() const;  // <workspace>/<run name>
  // The folder the run folder is made in (the workspace at first); Choose… changes it.
  void setFolder(const QString& dir);
  QString folder() const { return workspace_; }
  QString yamlText() const;
  void setYamlText(const QString& text);  // as if typed; the form follows after a short pause
  void syncFormFromYaml();                // that pause, now
  QString yamlError() const { return yaml_.parseError; }
  QStringList problems() const { return problems_; }  // what blocks Start; empty = ready
  QString schemaError(const QString& job) const { return schemaErrors_.value(job); }
  WorkerJob* startedJob() const { return started_; }
  // Offers "Add to Queue" beside "Start Run": the run is written and queued instead.
  void setQueue(RunQueue* queue);
  QString queuedId() const { return queuedId_; }  // after Add to Queue
  QPushButton* queueButton() const { return queueButton_; }
  // Estimate Memory: `wanstudio-engine estimate` on the run as it stands, shown under the form
  // (red when it needs more than this machine has).
  QPushButton* estimateButton() const { return estimateButton_; }
  QLabel* estimateLabel() const { return estimateLabel_; }
  // What the estimate is against: this machine, or a 24, 48 or 80 GB GPU (--device cuda). For a
  // GPU the run does not fit, the worker's best way to make it fit is offered: Apply sets it.
  QComboBox* gpuCombo() const { return gpu_; }
  QPushButton* applyFitButton() const { return applyFit_; }
  QVariantMap suggestedChanges() const { return fit_; }

  ConfigForm* form() const { return form_; }
  QComboBox* jobCombo() const { return jobCombo_; }
  QComboBox* presetCombo() const { return presetCombo_; }
  QSpinBox* processes() const { return processes_; }
  QLineEdit* runNameEdit() const { return runName_; }
  QPlainTextEdit* yamlEdit() const { return yamlEdit_; }
  QTabWidget* tabs() const { return tabs_; }

 public Q_SLOTS:
  void accept() override;  // Start Run
  void addToQueue();
  void estimateMemory();
  void applyFit();  // the suggested options into the form, then estimate again

 private:
  void loadSchemas(const SchemaSource& source);
  void onJobChosen();
  void fillPresets();
  void loadPreset();
  void onFormEdited();
  void onRunNameEdited();
  void writeYamlFromForm();
  void revalidate();
  void updateScheduleNote();      // the Validation section says every schedule that will run
  QVariantMap runValues() const;  // the form's values with output_dir = the run folder
  // Validates and writes <run folder>/run.yaml; its path, or "" after telling the user why.
  QString writeRunYaml();

  JobManager* jobs_;
  QString workspace_;
  QString queueWorkspace_;  // the workspace whose queue Add to Queue writes to
  QLineEdit* folder_ = nullptr;
  QString presetsDir_;
  QMap<QString, OptionSchema> schemas_;
  QMap<QString, QString> schemaErrors_;
  QString job_;
  ParsedRunYaml yaml_;         // the last parse of the YAML tab
  bool yamlIsSource_ = false;  // the YAML tab was edited last: its errors count
  bool nameEdited_ = false;
  QString presetNote_;
  QStringList problems_;
  QTimer yamlTimer_;
  QPointer<WorkerJob> started_;
  QString dataset_, datasetEmbeddings_;
  QVariantMap valuesFromFile(const QString& path, QString* note) const;
  void applyValues(QVariantMap values);
  RunQueue* queue_ = nullptr;
  QString queuedId_;
  QPushButton* queueButton_ = nullptr;
  EstimateJob* estimate_;
  QPushButton* estimateButton_;
  QLabel* estimateLabel_;
  QComboBox* gpu_;
  QPushButton* applyFit_;
  QVariantMap fit_;          // the suggestion Apply sets
  QString estimatedFor_;     // the GPU the answer in flight is for ("" = this machine)
  QLayout* setUpEstimate();  // the estimate's row under the form
  void showEstimate(const MemoryEstimateResult& r);

  QComboBox* jobCombo_;
  QComboBox* presetCombo_;
  QLineEdit* runName_;
  QLabel* runFolder_;
  QLabel* jobNote_;
  QSpinBox* processes_;
  QTabWidget* tabs_;
  ConfigForm* form_;
  QPlainTextEdit* yamlEdit_;
  QLabel* yamlStatus_;
  QLabel* problemsLabel_;
  QDialogButtonBox* buttons_;
};

}  // namespace ws
