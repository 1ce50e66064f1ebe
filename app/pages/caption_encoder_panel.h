// SPDX-License-Identifier: Apache-2.0
// The dataset page's text-encoder row: the UMT5 checkpoint, its tokenizer and the embeddings
// folder the dataset's captions are checked against, and "Encode captions", which runs
// `wanstudio-engine encode-text` as a job with progress and cancel (docs/design/umt5.md §7).
#pragma once

#include <QPointer>
#include <QWidget>

#include "jobs/job_result.h"
#include "jobs/worker_job.h"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace ws {

class CaptionEncoderPanel : public QWidget {
  Q_OBJECT
 public:
  explicit CaptionEncoderPanel(QWidget* parent = nullptr);

  // The dataset the captions come from; an empty embeddings folder becomes <its folder>/text_embeddings.
  void setMetadata(const QString& metadataPath);
  QString encoderPath() const;
  QString tokenizerPath() const;
  QString embeddingsDir() const;
  void setPaths(const QString& encoder, const QString& tokenizer, const QString& embeddingsDir);

  // Starts encode-text on the dataset (saved first by the page); false with `error` when a field is empty.
  bool startEncoding(QString* error = nullptr);
  void cancel();
  WorkerJob* job() const { return job_; }
  QPushButton* encodeButton() const { return encode_; }
  QProgressBar* progress() const { return progress_; }
  QLabel* status() const { return status_; }

 Q_SIGNALS:
  // Any path changed: the page re-checks the rows.
  void pathsChanged();
  void encodingFinished(const ws::JobResult& result);

 private:
  QLineEdit* pathField(const QString& placeholder, const QString& tip, bool folder);

  QString metadata_;
  QLineEdit *encoder_, *tokenizer_, *dir_;
  QPushButton *encode_, *cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QPointer<WorkerJob> job_;
};

}  // namespace ws
