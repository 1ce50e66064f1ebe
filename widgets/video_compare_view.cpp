// SPDX-License-Identifier: Apache-2.0
#include "video_compare_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QShortcut>
#include <QAbstractButton>
#include <QAbstractSlider>
#include <QTabBar>
#include <QLineEdit>
#include <QKeyEvent>
#include <QApplication>
#include <QAbstractSpinBox>
#include <QAbstractItemView>
#include <QSlider>
#include <QStackedWidget>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>
#include <QPlainTextEdit>
#include <QTextEdit>

#include "frame_source.h"
#include "playback_clock.h"
#include "video_pane.h"
#include "view_transform.h"
#include "theme.h"

namespace ws {

VideoCompareView::VideoCompareView(QWidget* parent) : QWidget(parent) {
  clock_ = new PlaybackClock(this);
  transform_ = new ViewTransform(this);
  clock_->setGate([this] { return isPresentingCurrentFrame(); });

  info_ = new QLabel(this);
  info_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  info_->setWordWrap(true);
  error_ = new QLabel(this);
  setTone(error_, Tone::Error);
  error_->setWordWrap(true);
  error_->hide();

  row_ = new QWidget(this);
  auto* rowLayout = new QHBoxLayout(row_);
  rowLayout->setContentsMargins(0, 0, 0, 0);
  rowLayout->setSpacing(4);
  wipe_ = new VideoPane(transform_, this);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(row_);
  stack_->addWidget(wipe_);

  auto button = [this](QStyle::StandardPixmap icon, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setIcon(style()->standardIcon(icon));
    b->setToolTip(tip);
    b->setAccessibleName(tip);
    b->setAutoRaise(true);
    return b;
  };
  QToolButton* back = button(QStyle::SP_MediaSkipBackward, tr("Previous frame (Left)"));
  play_ = button(QStyle::SP_MediaPlay, tr("Play / pause (Space)"));
  QToolButton* forward = button(QStyle::SP_MediaSkipForward, tr("Next frame (Right)"));
  QToolButton* fit = button(QStyle::SP_TitleBarNormalButton, tr("Fit: reset zoom and pan (or double-click a pane)"));
  connect(back, &QToolButton::clicked, clock_, [this] { clock_->step(-1); });
  connect(forward, &QToolButton::clicked, clock_, [this] { clock_->step(1); });
  connect(play_, &QToolButton::clicked, clock_, &PlaybackClock::togglePlay);
  connect(fit, &QToolButton::clicked, transform_, &ViewTransform::reset);
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setAccessibleName(tr("Frame"));
  slider_->setRange(0, 0);
  connect(slider_, &QSlider::valueChanged, clock_, &PlaybackClock::seek);
  connect(slider_, &QSlider::sliderPressed, clock_, &PlaybackClock::pause);
  frameLabel_ = new QLabel(this);
  frameLabel_->setMinimumWidth(70);
  loop_ = new QCheckBox(tr("Loop"), this);
  loop_->setChecked(clock_->loop());
  connect(loop_, &QCheckBox::toggled, clock_, &PlaybackClock::setLoop);
  modeCombo_ = new QComboBox(this);
  modeCombo_->setAccessibleName(tr("Compare mode"));
  modeCombo_->addItem(tr("Side by side"));
  modeCombo_->addItem(tr("Split wipe"));
  connect(modeCombo_, &QComboBox::activated, this, [this](int i) { setMode(i == 0 ? Mode::SideBySide : Mode::Wipe); });
  wipeLeft_ = new QComboBox(this);
  wipeRight_ = new QComboBox(this);
  wipeLeft_->setAccessibleName(tr("Left side"));
  wipeRight_->setAccessibleName(tr("Right side"));
  wipeLeft_->setToolTip(tr("Left of the divider"));
  wipeRight_->setToolTip(tr("Right of the divider"));
  auto pairChanged = [this] { setWipePair(wipeLeft_->currentIndex(), wipeRight_->currentIndex()); };
  connect(wipeLeft_, &QComboBox::activated, this, pairChanged);
  connect(wipeRight_, &QComboBox::activated, this, pairChanged);

  auto* controls = new QHBoxLayout;
  controls->addWidget(back);
  controls->addWidget(play_);
  controls->addWidget(forward);
  controls->addWidget(slider_, 1);
  controls->addWidget(frameLabel_);
  controls->addWidget(loop_);
  controls->addWidget(modeCombo_);
  controls->addWidget(wipeLeft_);
  controls->addWidget(wipeRight_);
  controls->addWidget(fit);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(info_);
  layout->addWidget(error_);
  layout->addWidget(stack_, 1);
  layout->addLayout(controls);

  auto* popOut = new QToolButton(this);
  popOut->setText(tr("Pop Out"));
  popOut->setToolTip(tr("The player in a window of its own (F11 there: full screen)"));
  popOut->setAccessibleName(tr("Pop out the player"));
  connect(popOut, &QToolButton::clicked, this, [this] { this->popOut(); });
  controls->addWidget(popOut);

  connect(clock_, &PlaybackClock::frameChanged, this, &VideoCompareView::showClockFrame);
  connect(clock_, &PlaybackClock::frameChanged, this, &VideoCompareView::updateControls);
  connect(clock_, &PlaybackClock::playingChanged, this, &VideoCompareView::updateControls);
  connect(clock_, &PlaybackClock::frameCountChanged, this, &VideoCompareView::updateControls);
  setMode(Mode::SideBySide);
  updateControls();
}

void VideoCompareView::setVideos(const QList<Video>& videos) {
  clock_->pause();
  wipe_->setSource(nullptr, {});
  wipe_->setWipeSource(nullptr, {});
  qDeleteAll(panes_);
  panes_.clear();
  qDeleteAll(sources_);  // each stops and joins its thread
  sources_.clear();
  videos_ = videos;
  error_->hide();
  clock_->setFrameCount(0);
  clock_->seek(0);
  transform_->reset();
  for (const Video& v : videos) {
    auto* source = new FrameSource(this);
    connect(
        source, &FrameSource::opened, this,
        [this] {
          updateFrameCount();
          showClockFrame();
        },
        Qt::QueuedConnection);
    connect(
        source, &FrameSource::failed, this,
        [this](const QString& message) {
          error_->setText(message);
          error_->show();
          Q_EMIT failed(message);
        },
        Qt::QueuedConnection);
    sources_ << source;
    auto* pane = new VideoPane(transform_, row_);
    pane->setSource(source, v.title);
    pane->setCaption(v.caption);
    row_->layout()->addWidget(pane);
    panes_ << pane;
    source->open(v.path);
  }
  const QSignalBlocker a(wipeLeft_), b(wipeRight_);
  wipeLeft_->clear();
  wipeRight_->clear();
  for (const Video& v : videos) {
    wipeLeft_->addItem(v.title);
    wipeRight_->addItem(v.title);
  }
  // Wipe default: the last two (upsampled | high-res, or the two compared steps).
  const int n = int(videos.size());
  setWipePair(std::max(0, n - 2), std::max(0, n - 1));
  setMode(n < 2 ? Mode::SideBySide : mode_);
  updateControls();
}

void VideoCompareView::setInfo(const QString& text) { info_->setText(text); }

void VideoCompareView::setMode(Mode mode) {
  mode_ = mode;
  stack_->setCurrentIndex(mode == Mode::Wipe ? 1 : 0);
  modeCombo_->setCurrentIndex(mode == Mode::Wipe ? 1 : 0);
  wipeLeft_->setVisible(mode == Mode::Wipe);
  wipeRight_->setVisible(mode == Mode::Wipe);
  showClockFrame();
}

void VideoCompareView::setWipePair(int left, int right) {
  if (sources_.isEmpty()) return;
  left = std::clamp(left, 0, int(sources_.size()) - 1);
  right = std::clamp(right, 0, int(sources_.size()) - 1);
  wipeLeft_->setCurrentIndex(left);
  wipeRight_->setCurrentIndex(right);
  wipe_->setSource(sources_[left], videos_[left].title);
  wipe_->setWipeSource(sources_[right], videos_[right].title);
  wipe_->setCaption(videos_[left].caption.isEmpty() ? videos_[right].caption : videos_[left].caption);
  showClockFrame();
}

QList<VideoPane*> VideoCompareView::visiblePanes() const {
  if (sources_.isEmpty()) return {};
  return mode_ == Mode::Wipe ? QList<VideoPane*>{wipe_} : panes_;
}

void VideoCompareView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!filtering_) qApp->installEventFilter(this);
  filtering_ = true;
}

void VideoCompareView::hideEvent(QHideEvent* event) {
  QWidget::hideEvent(event);
  if (filtering_) qApp->removeEventFilter(this);
  filtering_ = false;
}

bool VideoCompareView::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::KeyPress || !isVisible() || !window()->isActiveWindow()) return false;
  // One key press reaches the filter once per object it is sent to: act on the focus widget's only.
  QWidget* focus = QApplication::focusWidget();
  if (watched != (focus ? static_cast<QObject*>(focus) : static_cast<QObject*>(window()))) return false;
  const int key = static_cast<QKeyEvent*>(event)->key();
  if (key != Qt::Key_Space && key != Qt::Key_Left && key != Qt::Key_Right && key != Qt::Key_Home && key != Qt::Key_End)
    return false;
  if (static_cast<QKeyEvent*>(event)->modifiers() & (Qt::ControlModifier | Qt::AltModifier | Qt::MetaModifier))
    return false;
  // Keys a control outside the player uses itself stay its own (a page's plain scroll area,
  // which a click on the page focuses, is not one: the keys go to the player).
  const bool inside = focus && (focus == this || isAncestorOf(focus));
  if (focus && !inside &&
      (qobject_cast<QAbstractButton*>(focus) || qobject_cast<QLineEdit*>(focus) ||
       qobject_cast<QAbstractSpinBox*>(focus) || qobject_cast<QComboBox*>(focus) ||
       qobject_cast<QAbstractItemView*>(focus) || qobject_cast<QPlainTextEdit*>(focus) ||
       qobject_cast<QTextEdit*>(focus) || qobject_cast<QAbstractSlider*>(focus) || qobject_cast<QTabBar*>(focus)))
    return false;
  switch (key) {
    case Qt::Key_Space: clock_->togglePlay(); break;
    case Qt::Key_Left: clock_->step(-1); break;
    case Qt::Key_Right: clock_->step(1); break;
    case Qt::Key_Home: clock_->seek(0); break;
    default: clock_->seek(clock_->frameCount() - 1); break;
  }
  return true;
}

QImage VideoCompareView::frameImage() const { return stack_->grab().toImage(); }

QList<ExportVideo> VideoCompareView::exportList() const {
  QList<ExportVideo> out;
  for (const Video& v : videos_) out << ExportVideo{v.title, v.path};
  return out;
}

QWidget* VideoCompareView::popOut() {
  auto* window = new QWidget(nullptr, Qt::Window);
  window->setAttribute(Qt::WA_DeleteOnClose);
  window->setWindowTitle(info_->text().isEmpty() ? tr("Player") : info_->text());
  auto* view = new VideoCompareView(window);
  auto* fullScreen = new QToolButton(window);
  fullScreen->setText(tr("Full Screen"));
  fullScreen->setAccessibleName(tr("Full screen"));
  fullScreen->setCheckable(true);
  auto* layout = new QVBoxLayout(window);
  layout->addWidget(view, 1);
  layout->addWidget(fullScreen, 0, Qt::AlignRight);
  const auto toggle = [window, fullScreen](bool on) {
    const QSignalBlocker b(fullScreen);
    fullScreen->setChecked(on);
    on ? window->showFullScreen() : window->showNormal();
  };
  connect(fullScreen, &QToolButton::toggled, window, toggle);
  auto* f11 = new QShortcut(QKeySequence(Qt::Key_F11), window);
  connect(f11, &QShortcut::activated, window, [window, toggle] { toggle(!window->isFullScreen()); });
  auto* esc = new QShortcut(QKeySequence(Qt::Key_Escape), window);
  connect(esc, &QShortcut::activated, window, [window, toggle] {
    if (window->isFullScreen()) toggle(false);
    else window->close();
  });
  view->setVideos(videos_);
  view->setInfo(info_->text());
  view->setMode(mode_);
  view->clock()->setLoop(clock_->loop());
  const int frame = clock_->frame();
  connect(view->clock(), &PlaybackClock::frameCountChanged, view, [view, frame](int) { view->clock()->seek(frame); });
  window->resize(1200, 700);
  window->show();
  return window;
}

bool VideoCompareView::isPresentingCurrentFrame() const {
  const auto panes = visiblePanes();
  return std::all_of(panes.begin(), panes.end(), [this](VideoPane* p) { return p->isPresenting(clock_->frame()); });
}

void VideoCompareView::showClockFrame() {
  // Only the panes on screen ask: hidden ones would compete for the same sources.
  for (VideoPane* p : visiblePanes()) p->showFrame(clock_->frame());
}

void VideoCompareView::updateFrameCount() {
  int frames = 0;
  double fps = 0;
  for (FrameSource* s : sources_) {
    frames = std::max(frames, s->frameCount());
    if (fps <= 0) fps = s->fps();
  }
  clock_->setFps(fps);
  clock_->setFrameCount(frames);
}

void VideoCompareView::updateControls() {
  const int frames = clock_->frameCount();
  {
    const QSignalBlocker block(slider_);
    slider_->setRange(0, std::max(0, frames - 1));
    slider_->setValue(clock_->frame());
  }
  frameLabel_->setText(frames > 0 ? tr("%1 / %2").arg(clock_->frame() + 1).arg(frames) : tr("– / –"));
  play_->setIcon(style()->standardIcon(clock_->isPlaying() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  for (QWidget* w : std::initializer_list<QWidget*>{play_, slider_, modeCombo_}) w->setEnabled(frames > 0);
  modeCombo_->setEnabled(sources_.size() >= 2);
}

}  // namespace ws
