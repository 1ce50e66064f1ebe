#include "pages/dataset_page.h"

#include <QLabel>
#include <QVBoxLayout>

namespace ws {

DatasetPage::DatasetPage(QWidget* parent) : QWidget(parent) {
  auto* title = new QLabel(tr("Dataset"), this);
  title->setObjectName(QStringLiteral("placeholderTitle"));
  auto* text = new QLabel(
      tr("Not built yet. This page will open a VideoX-Fun metadata.json and show its clips as a "
         "thumbnail grid with their captions, sizes and frame counts; edit captions (saved "
         "atomically with a backup); run `probe` to fill or verify width, height, frames and fps; "
         "and show the `buckets` report: which bucket each clip trains in, or why it is dropped."),
      this);
  text->setWordWrap(true);
  text->setObjectName(QStringLiteral("hint"));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title);
  layout->addWidget(text);
  layout->addStretch(1);
}

}  // namespace ws
