// SPDX-License-Identifier: Apache-2.0
#include "pages/caption_encoder_panel.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QToolButton>

#include "contract/events.h"
#include "jobs/worker_job.h"

namespace ws {

CaptionEncoderPanel::CaptionEncoderPanel(QWidget* parent) : QWidget(parent) {
  QSettings settings;
  encoder_ =
      pathField(tr("text encoder (models_t5_umt5-xxl-enc-bf16.pth)"), QStringLiteral("text_encoder_path"), false);
  tokenizer_ = pathField(tr("tokenizer (spiece.model or google/umt5-xxl/)"), QStringLiteral("tokenizer_path"), false);
  dir_ = pathField(tr("embeddings folder"), QStringLiteral("text_embeddings_dir"), true);
  encoder_->setText(settings.value(QStringLiteral("textEncoder/encoder")).toString());
  tokenizer_->setText(settings.value(QStringLiteral("textEncoder/tokenizer")).toString());
  // Remembered for the next dataset and the next start (connected once both are filled).
  for (QLineEdit* e : {encoder_, tokenizer_})
    connect(e, &QLineEdit::textChanged, this, [this] {
      QSettings s;
      s.setValue(QStringLiteral("textEncoder/encoder"), encoder_->text());
      s.setValue(QStringLiteral("textEncoder/tokenizer"), tokenizer_->text());
    });
  encode_ = new QPushButton(tr("Encode captions"), this);
  encode_->setToolTip(tr("Encode every caption without an embedding from this encoder (encode-text)"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setVisible(false);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("encodeStatus"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("Text encoder"), this));
  for (QLineEdit* e : {encoder_, tokenizer_, dir_}) row->addWidget(e, 1);
  row->addWidget(encode_);
  row->addWidget(cancel_);
  row->addWidget(progress_);
  row->addWidget(status_);
  connect(encode_, &QPushButton::clicked, this, [this] {
    QString error;
    if (!startEncoding(&error)) status_->setText(error);
  });
  connect(cancel_, &QPushButton::clicked, this, &CaptionEncoderPanel::cancel);
}

QLineEdit* CaptionEncoderPanel::pathField(const QString& placeholder, const QString& tip, bool folder) {
  auto* e = new QLineEdit(this);
  e->setPlaceholderText(placeholder);
  e->setAccessibleName(placeholder);
  e->setToolTip(tip);
  auto* browse = e->addAction(style()->standardIcon(QStyle::SP_DirOpenIcon), QLineEdit::TrailingPosition);
  connect(browse, &QAction::triggered, this, [this, e, folder, placeholder] {
    const QString p = folder ? QFileDialog::getExistingDirectory(this, placeholder, e->text())
                             : QFileDialog::getOpenFileName(this, placeholder, e->text());
    if (!p.isEmpty()) e->setText(p);
  });
  connect(e, &QLineEdit::editingFinished, this, &CaptionEncoderPanel::pathsChanged);
  return e;
}

void CaptionEncoderPanel::setMetadata(const QString& metadataPath) {
  metadata_ = metadataPath;
  dir_->setText(QFileInfo(metadataPath).absoluteDir().filePath(QStringLiteral("text_embeddings")));
  Q_EMIT pathsChanged();
}

QString CaptionEncoderPanel::encoderPath() const { return encoder_->text().trimmed(); }
QString CaptionEncoderPanel::tokenizerPath() const { return tokenizer_->text().trimmed(); }
QString CaptionEncoderPanel::embeddingsDir() const { return dir_->text().trimmed(); }

void CaptionEncoderPanel::setPaths(const QString& encoder, const QString& tokenizer, const QString& embeddingsDir) {
  encoder_->setText(encoder);
  tokenizer_->setText(tokenizer);
  dir_->setText(embeddingsDir);
  Q_EMIT pathsChanged();
}

bool CaptionEncoderPanel::startEncoding(QString* error) {
  auto fail = [&](const QString& m) {
    if (error) *error = m;
    return false;
  };
  if (job_ && job_->isRunning()) return fail(tr("Already encoding"));
  if (metadata_.isEmpty()) return fail(tr("Open a dataset first"));
  if (encoderPath().isEmpty() || tokenizerPath().isEmpty() || embeddingsDir().isEmpty())
    return fail(tr("Choose the text encoder, its tokenizer and the embeddings folder"));
  auto* job = new WorkerJob(this);
  job->setArguments({QStringLiteral("encode-text"), QStringLiteral("--metadata"), metadata_,
                     QStringLiteral("--text_embeddings_dir"), embeddingsDir(), QStringLiteral("--text_encoder_path"),
                     encoderPath(), QStringLiteral("--tokenizer_path"), tokenizerPath()});
  job_ = job;
  progress_->setRange(0, 0);
  progress_->setVisible(true);
  encode_->setEnabled(false);
  cancel_->setEnabled(true);
  status_->setText(tr("Loading the text encoder…"));
  connect(job, &WorkerJob::eventReceived, this, [this](const RunEvent& ev) {
    if (ev.type != QLatin1String(contract::event_type::kProgress)) return;
    const auto p = contract::ProgressEvent::from_json(ev.raw);
    progress_->setRange(0, int(p.total));
    progress_->setValue(int(p.done));
    status_->setText(p.per_s > 0 ? tr("%1 of %2 captions, %3/s").arg(p.done).arg(p.total).arg(p.per_s, 0, 'g', 3)
                                 : tr("%1 of %2 captions").arg(p.done).arg(p.total));
  });
  connect(job, &WorkerJob::ended, this, [this, job](const JobResult& r) {
    progress_->setVisible(false);
    encode_->setEnabled(true);
    cancel_->setEnabled(false);
    status_->setText(r.state == RunState::Completed   ? tr("Captions encoded")
                     : r.state == RunState::Cancelled ? tr("Cancelled; encoding again continues")
                                                      : tr("Failed: %1").arg(r.reason));
    Q_EMIT encodingFinished(r);
    job->deleteLater();
  });
  job->start();
  return true;
}

void CaptionEncoderPanel::cancel() {
  if (job_ && job_->isRunning()) job_->cancel();
}

}  // namespace ws
