// SPDX-License-Identifier: Apache-2.0
#include "pages/caption_panel.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include "contract/events.h"
#include "jobs/job_manager.h"
#include "item_models/dataset_model.h"
#include "pages/dataset_page.h"

namespace ws {

namespace {

QPushButton* panelButton(const QString& text, const QString& tip, QWidget* parent) {
  auto* b = new QPushButton(text, parent);
  b->setAccessibleName(text);
  b->setToolTip(tip);
  b->setAccessibleDescription(tip);
  return b;
}

}  // namespace

CaptionPanel::CaptionPanel(DatasetPage* page) : QWidget(page), page_(page) {
  QSettings settings;
  backend_ = new QComboBox(this);
  backend_->addItem(tr("Qwen2.5-VL in the engine"));
  backend_->addItem(tr("OpenAI-compatible server"));
  backend_->setAccessibleName(tr("Captioning backend"));
  backend_->setToolTip(
      tr("The engine runs a Qwen2.5-VL release itself; a server is one you run (vLLM, llama.cpp, "
         "Ollama, LM Studio)"));
  backend_->setCurrentIndex(settings.value(QStringLiteral("captioner/backend"), 0).toInt() == 1 ? 1 : 0);
  modelPath_ = new QLineEdit(settings.value(QStringLiteral("captioner/model_path")).toString(), this);
  modelPath_->setAccessibleName(tr("Qwen2.5-VL folder"));
  modelPath_->setPlaceholderText(tr("a Qwen2.5-VL-3B/7B-Instruct folder (config.json, *.safetensors, tokenizer.json)"));
  modelPath_->setToolTip(modelPath_->placeholderText());
  device_ = new QComboBox(this);
  device_->addItems({QStringLiteral("auto"), QStringLiteral("cpu"), QStringLiteral("cuda")});
  device_->setAccessibleName(tr("Captioning device"));
  device_->setToolTip(tr("auto: a GPU when there is one, else the CPU; bf16 for a release's bf16 weights"));
  device_->setCurrentText(settings.value(QStringLiteral("captioner/device"), QStringLiteral("auto")).toString());
  endpoint_ = new QLineEdit(
      settings.value(QStringLiteral("captioner/endpoint"), QStringLiteral("http://127.0.0.1:8000/v1")).toString(),
      this);
  endpoint_->setAccessibleName(tr("Server endpoint"));
  endpoint_->setToolTip(tr("The API root of a local OpenAI-compatible server (vLLM, llama.cpp, Ollama, LM Studio)"));
  model_ = new QLineEdit(settings.value(QStringLiteral("captioner/model")).toString(), this);
  model_->setAccessibleName(tr("Model"));
  model_->setPlaceholderText(tr("the model name the server knows"));
  prompt_ = new QPlainTextEdit(settings.value(QStringLiteral("captioner/prompt")).toString(), this);
  prompt_->setAccessibleName(tr("Prompt"));
  prompt_->setPlaceholderText(tr("Empty: the engine's Wan-style prompt ({frames} and {file_name} are filled in)"));
  prompt_->setTabChangesFocus(true);  // Tab leaves the field, as in a form
  prompt_->setMaximumHeight(80);
  // Remembered for the next dataset and the next start.
  auto remember = [this] {
    QSettings s;
    s.setValue(QStringLiteral("captioner/backend"), backend_->currentIndex());
    s.setValue(QStringLiteral("captioner/model_path"), modelPath_->text());
    s.setValue(QStringLiteral("captioner/device"), device_->currentText());
    s.setValue(QStringLiteral("captioner/endpoint"), endpoint_->text());
    s.setValue(QStringLiteral("captioner/model"), model_->text());
    s.setValue(QStringLiteral("captioner/prompt"), prompt_->toPlainText());
  };
  connect(backend_, &QComboBox::currentIndexChanged, this, remember);
  connect(modelPath_, &QLineEdit::textChanged, this, remember);
  connect(device_, &QComboBox::currentIndexChanged, this, remember);
  connect(endpoint_, &QLineEdit::textChanged, this, remember);
  connect(model_, &QLineEdit::textChanged, this, remember);
  connect(prompt_, &QPlainTextEdit::textChanged, this, remember);

  selected_ =
      panelButton(tr("Caption Selected Rows"), tr("A suggestion for each selected row, captioned or not"), this);
  uncaptioned_ = panelButton(tr("Caption Rows Without a Caption"),
                             tr("A suggestion for every row without a caption and without a suggestion"), this);
  cancel_ = panelButton(tr("Cancel captioning"), tr("Stop after the rows in flight; what was answered is kept"), this);
  cancel_->setText(tr("Cancel"));
  progress_ = new QProgressBar(this);
  progress_->setAccessibleName(tr("Captioning progress"));
  progress_->setVisible(false);
  status_ = new QLabel(this);
  status_->setAccessibleName(tr("Captioning status"));
  status_->setWordWrap(true);

  form_ = new QFormLayout;
  form_->addRow(tr("Backend"), backend_);
  form_->addRow(tr("Model folder"), modelPath_);
  form_->addRow(tr("Device"), device_);
  form_->addRow(tr("Endpoint"), endpoint_);
  form_->addRow(tr("Model"), model_);
  form_->addRow(tr("Prompt"), prompt_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(selected_);
  buttons->addWidget(uncaptioned_);
  buttons->addWidget(cancel_);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form_);
  layout->addLayout(buttons);
  layout->addWidget(progress_);
  layout->addWidget(status_);
  layout->addWidget(new QLabel(tr("Suggestions are reviewed in the Row tab (the filter ? lists the rows)."), this));
  layout->addStretch(1);

  connect(selected_, &QPushButton::clicked, this, [this] {
    QString error;
    if (!start(page_->selectedRows(), &error)) status_->setText(error);
  });
  connect(uncaptioned_, &QPushButton::clicked, this, [this] {
    QString error;
    if (!start({}, &error)) status_->setText(error);
  });
  connect(cancel_, &QPushButton::clicked, this, &CaptionPanel::cancel);
  connect(backend_, &QComboBox::currentIndexChanged, this, &CaptionPanel::showBackendFields);
  showBackendFields();
  connect(page_->model(), &QAbstractItemModel::modelReset, this, &CaptionPanel::updateButtons);
  // A save of the page while the job runs: see ended().
  connect(page_->model(), &DatasetModel::modifiedChanged, this, [this](bool modified) {
    if (!modified && job_ && job_->isRunning()) savedDuringJob_ = true;
  });
  updateButtons();
}

void CaptionPanel::updateButtons() {
  const bool running = (job_ && job_->isRunning()) || queued_;
  const bool open = !page_->model()->path().isEmpty();
  selected_->setEnabled(open && !running);
  uncaptioned_->setEnabled(open && !running);
  cancel_->setEnabled(running);
}

CaptionPanel::Backend CaptionPanel::chosenBackend() const {
  return backend_->currentIndex() == 1 ? Backend::Server : Backend::Engine;
}

// Only the chosen backend's fields are shown.
void CaptionPanel::showBackendFields() {
  const bool engine = chosenBackend() == Backend::Engine;
  form_->setRowVisible(modelPath_, engine);
  form_->setRowVisible(device_, engine);
  form_->setRowVisible(endpoint_, !engine);
  form_->setRowVisible(model_, !engine);
}

QStringList CaptionPanel::arguments(const QVector<int>& rows) const {
  QStringList a{QStringLiteral("caption"), QStringLiteral("--metadata"), page_->model()->path()};
  if (chosenBackend() == Backend::Engine)
    a << QStringLiteral("--model_path") << modelPath_->text().trimmed() << QStringLiteral("--device")
      << device_->currentText();
  else
    a << QStringLiteral("--endpoint") << endpoint_->text().trimmed() << QStringLiteral("--model")
      << model_->text().trimmed();
  if (!rows.isEmpty()) {
    QStringList list;
    for (int r : rows) list << QString::number(r);
    a << QStringLiteral("--rows") << list.join(QLatin1Char(','));
  }
  if (const QString p = prompt_->toPlainText().trimmed(); !p.isEmpty()) a << QStringLiteral("--prompt") << p;
  return a;
}

bool CaptionPanel::start(const QVector<int>& rows, QString* error) {
  auto fail = [&](const QString& m) {
    if (error) *error = m;
    return false;
  };
  if (job_ && job_->isRunning()) return fail(tr("Already captioning"));
  if (page_->model()->path().isEmpty()) return fail(tr("Open a dataset first"));
  if (chosenBackend() == Backend::Engine) {
    const QString dir = modelPath_->text().trimmed();
    if (dir.isEmpty()) return fail(tr("Choose a Qwen2.5-VL folder"));
    if (!QFileInfo::exists(dir + QStringLiteral("/config.json")))
      return fail(tr("%1 has no config.json: choose the folder of a Qwen2.5-VL release").arg(dir));
  } else if (endpoint_->text().trimmed().isEmpty() || model_->text().trimmed().isEmpty()) {
    return fail(tr("Name the server's endpoint and the model"));
  }
  // The engine's model shares the device with training: behind a run this studio trains, the job
  // waits its turn.
  if (chosenBackend() == Backend::Engine && jobs_ && !jobs_->liveJobs().isEmpty()) {
    if (queued_) return fail(tr("Already queued"));
    queued_ = true;
    queuedRows_ = rows;
    status_->setText(tr("Queued: starts when the training running now ends (both would use the same device)"));
    updateButtons();
    return true;
  }
  return launch(rows, error);
}

bool CaptionPanel::launch(const QVector<int>& rows, QString* error) {
  // The job picks rows by their place in the file and reads the file's captions: unsaved rows
  // added or removed would shift them, so the page's edits are written first.
  if (page_->model()->isModified() && !page_->save()) {
    if (error) *error = tr("Save the dataset first");
    return false;
  }
  auto* job = new WorkerJob(this);
  if (!program_.isEmpty()) job->setProgram(program_);
  job->setArguments(arguments(rows));
  job_ = job;
  savedDuringJob_ = false;
  progress_->setRange(0, 0);
  progress_->setVisible(true);
  status_->setText(tr("Captioning…"));
  connect(job, &WorkerJob::eventReceived, this, &CaptionPanel::applyEvent);
  connect(job, &WorkerJob::ended, this, [this, job](const JobResult& r) {
    ended(r);
    job->deleteLater();
  });
  job->start();
  updateButtons();
  return true;
}

void CaptionPanel::setJobManager(JobManager* jobs) {
  jobs_ = jobs;
  if (jobs_) connect(jobs_, &JobManager::changed, this, &CaptionPanel::startQueued);
}

void CaptionPanel::startQueued() {
  if (!queued_ || !jobs_ || !jobs_->liveJobs().isEmpty()) return;
  queued_ = false;
  QString error;
  if (!launch(queuedRows_, &error)) {
    status_->setText(tr("Failed: %1").arg(error));
    updateButtons();
  }
}

void CaptionPanel::cancel() {
  if (queued_) {  // never started: nothing to stop
    queued_ = false;
    status_->setText(tr("Cancelled before it started"));
    updateButtons();
    return;
  }
  if (job_ && job_->isRunning()) job_->cancel();
}

void CaptionPanel::applyEvent(const RunEvent& ev) {
  if (ev.type == QLatin1String(contract::event_type::kProgress)) {
    const auto p = contract::ProgressEvent::from_json(ev.raw);
    progress_->setRange(0, int(std::max<int64_t>(p.total, 1)));
    progress_->setValue(int(p.done));
    status_->setText(tr("%1 of %2 rows").arg(p.done).arg(p.total));
    return;
  }
  if (ev.type != QLatin1String("caption")) return;
  // The row by its place and its file: rows may have been added or removed on the page since the
  // job read the file, so a place whose file differs is looked up by file_path.
  DatasetModel* m = page_->model();
  const QString file = ev.string(QLatin1StringView("file_path"));
  const QString text = ev.string(QLatin1StringView("text_suggested"));
  int row = int(ev.number(QLatin1StringView("row"), -1));
  if (row < 0 || row >= m->rowCount() || m->index(row).data(DatasetModel::FileRole).toString() != file) {
    row = -1;
    for (int r = 0; r < m->rowCount() && row < 0; ++r)
      if (m->index(r).data(DatasetModel::FileRole).toString() == file) row = r;
  }
  // Only the suggestion is set, beside whatever the page holds: a caption typed meanwhile stays.
  if (row >= 0) m->setSuggestion(row, text);
}

void CaptionPanel::ended(const JobResult& r) {
  progress_->setVisible(false);
  status_->setText(r.state == RunState::Completed   ? tr("Captioned: review the suggestions in the Row tab")
                   : r.state == RunState::Cancelled ? tr("Cancelled; captioning again continues with the rest")
                                                    : tr("Failed: %1").arg(r.reason));
  // The job and the page write the same file. The job reads it again before each write and sets
  // only `text_suggested`, and the page holds every suggestion the job sent (applyEvent), so a
  // save of the page keeps them. What a page save during the job can still lose is a write that
  // crossed it (the job read the file just before the page wrote it, or wrote a suggestion whose
  // event had not arrived yet): the page, with nothing else unsaved, then writes once more, and
  // what it holds is both its edits and every suggestion.
  if (savedDuringJob_ && !page_->model()->isModified()) page_->save();
  savedDuringJob_ = false;
  updateButtons();
  Q_EMIT captioningFinished(r);
}

}  // namespace ws
