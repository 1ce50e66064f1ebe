// SPDX-License-Identifier: Apache-2.0
#include "pages/validation_page.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "runfolder/run_events.h"
#include "video_compare_view.h"

namespace ws {

ValidationPage::ValidationPage(RunEvents* events, QWidget* parent) : QWidget(parent), events_(events) {}

void ValidationPage::setUp(QWidget* list, const QString& hint) {
  hint_ = new QLabel(hint, this);
  hint_->setObjectName(QStringLiteral("hint"));
  hint_->setWordWrap(true);
  auto* left = new QWidget(this);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(list, 1);
  leftLayout->addWidget(hint_);
  player_ = new VideoCompareView(this);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(player_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 4);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
  connect(events_, &RunEvents::rowsAppended, this, &ValidationPage::refresh);
  connect(events_, &RunEvents::cleared, this, &ValidationPage::refresh);
  connect(events_, &RunEvents::pointsReset, this, &ValidationPage::refresh);
}

void ValidationPage::setRunDir(const QString& runDir) {
  if (runDir == runDir_) return;
  runDir_ = runDir;
  shown_.clear();
  player_->clear();
  player_->setInfo({});
  refresh();
}

}  // namespace ws
