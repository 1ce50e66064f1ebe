// Placeholder for the dataset page (grid of clips, caption editor, probe/buckets report).
// It says what is coming so nobody mistakes it for the finished page.
#pragma once

#include <QWidget>

namespace ws {

class DatasetPage : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetPage(QWidget* parent = nullptr);
};

}  // namespace ws
