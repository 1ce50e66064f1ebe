#include "pages/list_and_player.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "video_compare_view.h"

namespace ws {

VideoCompareView* layoutListAndPlayer(QWidget* page, QWidget* list, const QString& hintText, QLabel** hint) {
  *hint = new QLabel(hintText, page);
  (*hint)->setObjectName(QStringLiteral("hint"));
  (*hint)->setWordWrap(true);
  auto* left = new QWidget(page);
  auto* leftLayout = new QVBoxLayout(left);
  leftLayout->setContentsMargins(0, 0, 0, 0);
  leftLayout->addWidget(list, 1);
  leftLayout->addWidget(*hint);
  auto* player = new VideoCompareView(page);
  auto* split = new QSplitter(Qt::Horizontal, page);
  split->addWidget(left);
  split->addWidget(player);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 4);
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
  return player;
}

}  // namespace ws
