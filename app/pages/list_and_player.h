// The layout both Validation views share: a list (or grid) with a hint under it on the left,
// the video player on the right, in a splitter that fills `page`.
#pragma once

#include <QString>

class QLabel;
class QWidget;

namespace ws {

class VideoCompareView;

// Lays out `list` and a new hint label and player in `page`; returns the player, *hint the label.
VideoCompareView* layoutListAndPlayer(QWidget* page, QWidget* list, const QString& hintText, QLabel** hint);

}  // namespace ws
