// SPDX-License-Identifier: Apache-2.0
// The validation player: small MP4s whose frames carry their index as grey level, played on
// one clock (seek, step, ticks, loop), latest-wins decoding, shared zoom and pan, the split
// wipe, and the run page's Validation tab built from `validation` events.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QLineEdit>
#include <QVBoxLayout>
#include <QApplication>
#include <QtTest>

#include "frame_source.h"
#include "video/video_encode.h"
#include "runfolder/run_events.h"
#include "pages/validation_view.h"
#include "playback_clock.h"
#include "video_compare_view.h"
#include "video_pane.h"
#include "view_transform.h"

using namespace ws;

namespace {

constexpr int kFrames = 17;
int grey(int frame) { return 10 + frame * 14; }

void writeClip(const QString& path, int w, int h, int frames) {
  std::vector<video::RgbFrame> clip;
  for (int i = 0; i < frames; ++i) {
    video::RgbFrame f(w, h);
    std::fill(f.data.begin(), f.data.end(), uint8_t(grey(i)));
    clip.push_back(std::move(f));
  }
  video::write_video(path.toStdString(), clip);
}

// The frame index an image shows, from its grey level (H.264 keeps flat frames within a few levels).
int frameOf(const QImage& image) {
  if (image.isNull()) return -1;
  const int g = qGray(image.pixel(image.width() / 2, image.height() / 2));
  return int(std::lround((g - 10) / 14.0));
}

}  // namespace

class TestVideoCompare : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString low_, up_, high_;

  QList<VideoCompareView::Video> threeVideos() const {
    return {{"low-res", low_, "PSNR 20 dB"}, {"upsampled", up_, "PSNR 30 dB"}, {"high-res", high_, "reference"}};
  }

  // Both the index each pane asked for and the picture it shows.
  static void verifyShowing(VideoCompareView& view, int frame) {
    QTRY_VERIFY(view.isPresentingCurrentFrame());
    QCOMPARE(view.clock()->frame(), frame);
    for (VideoPane* p : view.panes()) {
      QCOMPARE(p->shownFrame(), frame);
      QCOMPARE(frameOf(p->image()), frame);
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    low_ = dir_.filePath("sample/step10_val0_lowres.mp4");
    up_ = dir_.filePath("sample/step10_val0_upsampled.mp4");
    high_ = dir_.filePath("sample/step10_val0_highres.mp4");
    QDir().mkpath(dir_.filePath("sample"));
    writeClip(low_, 64, 48, kFrames);
    writeClip(up_, 96, 72, kFrames);
    writeClip(high_, 96, 72, kFrames);
    writeClip(dir_.filePath("sample/step20_val0_lowres.mp4"), 64, 48, kFrames);
    writeClip(dir_.filePath("sample/step20_val0_upsampled.mp4"), 96, 72, kFrames);
  }

  void sourceDecodesTheFrameAsked() {
    FrameSource source;
    QSignalSpy opened(&source, &FrameSource::opened);
    QSignalSpy ready(&source, &FrameSource::frameReady);
    source.open(up_);
    QTRY_COMPARE(opened.count(), 1);
    QCOMPARE(source.frameCount(), kFrames);
    QCOMPARE(source.frameSize(), QSize(96, 72));
    source.request(5);
    QTRY_COMPARE(ready.count(), 1);
    QCOMPARE(ready[0][0].toInt(), 5);
    QCOMPARE(frameOf(ready[0][1].value<QImage>()), 5);
    // Read-ahead fills the cache after the playhead; a cached frame is not decoded again.
    // Frames 6..11 cached means the read-ahead of 6 is complete: nothing is decoding now.
    QTRY_VERIFY(source.isCached(6) && source.isCached(11));
    source.setReadAhead(0);
    const int decoded = source.decodedCount();
    source.request(6);
    QTRY_COMPARE(ready.count(), 2);
    QCOMPARE(source.decodedCount(), decoded);
    // Out of range asks are clamped to the clip.
    source.request(999);
    QTRY_COMPARE(ready.count(), 3);
    QCOMPARE(ready[2][0].toInt(), kFrames - 1);
  }

  void badFileFails() {
    FrameSource source;
    QSignalSpy failed(&source, &FrameSource::failed);
    source.open(dir_.filePath("missing.mp4"));
    QTRY_COMPARE(failed.count(), 1);
    QVERIFY(failed[0][0].toString().contains("missing.mp4"));
  }

  void latestRequestWins() {
    FrameSource source;
    source.setReadAhead(0);
    QSignalSpy opened(&source, &FrameSource::opened);
    source.open(low_);
    QTRY_COMPARE(opened.count(), 1);
    source.setDecodeDelayForTesting(40);  // each decode takes a while
    QSignalSpy ready(&source, &FrameSource::frameReady);
    quint64 last = 0;
    for (int i = 0; i < 12; ++i) last = source.request(i);
    QTRY_COMPARE(ready.count(), 1);
    QTest::qWait(200);  // nothing else arrives
    QCOMPARE(ready.count(), 1);
    QCOMPARE(ready[0][0].toInt(), 11);
    QCOMPARE(ready[0][2].value<quint64>(), last);
    QCOMPARE(frameOf(ready[0][1].value<QImage>()), 11);
    // Superseded requests were never decoded: at most the one in flight and the newest.
    QVERIFY2(source.decodedCount() <= 2, qPrintable(QString::number(source.decodedCount())));
    // Delivery hops to the receiver's thread.
    QObject receiver;
    QThread* deliveredOn = nullptr;
    connect(
        &source, &FrameSource::frameReady, &receiver, [&] { deliveredOn = QThread::currentThread(); },
        Qt::QueuedConnection);
    source.request(3);
    QTRY_VERIFY(deliveredOn);
    QCOMPARE(deliveredOn, QThread::currentThread());
  }

  void panesFollowOneClock() {
    VideoCompareView view;
    view.resize(900, 400);
    view.show();
    view.setVideos(threeVideos());
    QCOMPARE(view.panes().size(), 3);
    QTRY_COMPARE(view.clock()->frameCount(), kFrames);
    verifyShowing(view, 0);
    view.clock()->seek(7);
    verifyShowing(view, 7);
    view.clock()->step(1);
    verifyShowing(view, 8);
    view.clock()->step(-2);
    verifyShowing(view, 6);
    for (int i = 0; i < 3; ++i) {
      bool ticked = false;  // the gate opens once every pane shows the frame
      QTRY_VERIFY((ticked = ticked || view.clock()->tick()));
      verifyShowing(view, 7 + i);
    }
    // Playing: the timer ticks, never ahead of a pane.
    view.clock()->play();
    QVERIFY(view.clock()->isPlaying());
    QTRY_VERIFY(view.clock()->frame() >= 13);
    view.clock()->pause();
    verifyShowing(view, view.clock()->frame());
  }

  // Space, arrows and Home/End work whenever the player is on screen, not only with the focus inside
  // it; a field elsewhere keeps its keys; a click on a picture takes them. Pop Out opens a window
  // of its own with the same videos.
  void keysWorkWheneverThePlayerIsVisible() {
    QWidget w;
    auto* edit = new QLineEdit(&w);
    auto* view = new VideoCompareView(&w);
    auto* layout = new QVBoxLayout(&w);
    layout->addWidget(edit);
    layout->addWidget(view, 1);
    w.resize(900, 500);
    w.show();
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    view->setVideos(threeVideos());
    QTRY_COMPARE(view->clock()->frameCount(), kFrames);
    edit->setFocus();
    QTest::keyClick(edit, Qt::Key_Space);
    QCOMPARE(edit->text(), QStringLiteral(" "));  // the field's own
    QVERIFY(!view->clock()->isPlaying());
    QTest::mouseClick(view->panes().at(1), Qt::LeftButton);
    QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(view->panes().at(1)));
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_End);
    QCOMPARE(view->clock()->frame(), kFrames - 1);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Home);
    QCOMPARE(view->clock()->frame(), 0);
    QTest::keyClick(QApplication::focusWidget(), Qt::Key_Right);
    QCOMPARE(view->clock()->frame(), 1);
    // Focus on the window itself (no control): the player still takes the keys.
    QApplication::focusWidget()->clearFocus();
    QTest::keyClick(&w, Qt::Key_Right);
    QCOMPARE(view->clock()->frame(), 2);
    QWidget* popped = view->popOut();
    auto* copy = popped->findChild<VideoCompareView*>();
    QVERIFY(copy);
    QCOMPARE(copy->videos().size(), 3);
    QTRY_COMPARE(copy->clock()->frame(), 2);
    popped->close();
  }

  void gateHoldsTheClockForASlowPane() {
    VideoCompareView view;
    view.resize(600, 300);
    view.show();
    view.setVideos({{"a", low_, {}}, {"b", up_, {}}});
    QTRY_COMPARE(view.clock()->frameCount(), kFrames);
    verifyShowing(view, 0);
    view.sources()[1]->setDecodeDelayForTesting(300);
    view.sources()[1]->setReadAhead(0);
    view.clock()->seek(10);
    QVERIFY(!view.isPresentingCurrentFrame());
    QVERIFY(!view.clock()->tick());  // held back
    QCOMPARE(view.clock()->frame(), 10);
    verifyShowing(view, 10);
  }

  void loopWrapsAndStops() {
    PlaybackClock clock;
    clock.setFrameCount(kFrames);
    clock.setLoop(true);
    clock.seek(kFrames - 1);
    QVERIFY(clock.tick());
    QCOMPARE(clock.frame(), 0);
    clock.step(-1);
    QCOMPARE(clock.frame(), kFrames - 1);
    clock.step(1);
    QCOMPARE(clock.frame(), 0);
    clock.setLoop(false);
    clock.seek(kFrames - 2);
    clock.play();
    QVERIFY(clock.tick());
    QCOMPARE(clock.frame(), kFrames - 1);
    QVERIFY(!clock.tick());
    QVERIFY(!clock.isPlaying());
    QCOMPARE(clock.frame(), kFrames - 1);
    clock.step(1);
    QCOMPARE(clock.frame(), kFrames - 1);  // no wrap without loop
    clock.play();                          // at the end: plays again from the start
    QCOMPARE(clock.frame(), 0);
    clock.seek(-5);
    QCOMPARE(clock.frame(), 0);
  }

  void loopWrapsInThePlayer() {
    VideoCompareView view;
    view.resize(600, 300);
    view.show();
    view.setVideos({{"a", low_, {}}, {"b", up_, {}}});
    QTRY_COMPARE(view.clock()->frameCount(), kFrames);
    view.clock()->seek(kFrames - 1);
    verifyShowing(view, kFrames - 1);
    bool ticked = false;
    QTRY_VERIFY((ticked = ticked || view.clock()->tick()));
    verifyShowing(view, 0);
  }

  void zoomAndPanAreShared() {
    VideoCompareView view;
    view.resize(900, 400);
    view.show();
    view.setVideos(threeVideos());
    QTRY_COMPARE(view.clock()->frameCount(), kFrames);
    verifyShowing(view, 0);
    VideoPane* a = view.panes()[0];  // 64x48
    VideoPane* b = view.panes()[1];  // 96x72
    // Wheel zoom on the low-res pane, around a point off centre.
    const QPointF at(a->width() * 0.3, a->height() * 0.4);
    const QPointF anchorBefore = view.transform()->toImage(at, a->image().size(), a->rect());
    QWheelEvent wheel(at, a->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase,
                      false);
    QApplication::sendEvent(a, &wheel);
    QVERIFY(view.transform()->zoom() > 1.2);
    auto normalised = [&](VideoPane* p) {
      const QRectF r = view.transform()->imageRect(p->image().size(), p->rect());
      return QRectF(r.x() / p->width(), r.y() / p->height(), r.width() / p->width(), r.height() / p->height());
    };
    auto near = [](const QRectF& x, const QRectF& y) {
      // Panes may differ by a pixel of layout rounding.
      return std::abs(x.x() - y.x()) < 0.01 && std::abs(x.y() - y.y()) < 0.01 && std::abs(x.width() - y.width()) < 0.01;
    };
    QVERIFY(near(normalised(a), normalised(b)));
    // The image point under the cursor stayed there.
    const QPointF anchor = view.transform()->toImage(at, a->image().size(), a->rect());
    QVERIFY(std::abs(anchor.x() - anchorBefore.x()) < 1e-6 && std::abs(anchor.y() - anchorBefore.y()) < 1e-6);
    // Drag-pan on the upsampled pane moves all of them.
    const QPointF before = view.transform()->center();
    QTest::mousePress(b, Qt::LeftButton, Qt::NoModifier, QPoint(200, 150));
    QTest::mouseMove(b, QPoint(150, 120));
    QTest::mouseRelease(b, Qt::LeftButton, Qt::NoModifier, QPoint(150, 120));
    QVERIFY(view.transform()->center() != before);
    QVERIFY(near(normalised(a), normalised(b)));
    QVERIFY(near(normalised(view.panes()[2]), normalised(b)));
    view.transform()->reset();
    QCOMPARE(view.transform()->zoom(), 1.0);
  }

  void splitWipeShowsTwoVideosInOnePane() {
    VideoCompareView view;
    view.resize(800, 400);
    view.show();
    view.setVideos(threeVideos());
    QTRY_COMPARE(view.clock()->frameCount(), kFrames);
    view.setMode(VideoCompareView::Mode::Wipe);
    VideoPane* w = view.wipePane();
    QVERIFY(w->isVisible());
    QVERIFY(w->isWipe());
    QCOMPARE(w->title(0), QStringLiteral("upsampled"));  // the last two by default
    QCOMPARE(w->title(1), QStringLiteral("high-res"));
    view.setWipePair(0, 1);
    QCOMPARE(w->title(0), QStringLiteral("low-res"));
    view.clock()->seek(4);
    QTRY_VERIFY(view.isPresentingCurrentFrame());
    QCOMPARE(w->shownFrame(0), 4);
    QCOMPARE(w->shownFrame(1), 4);
    QCOMPARE(frameOf(w->image(0)), 4);
    QCOMPARE(frameOf(w->image(1)), 4);
    // Drag the divider from the middle to a quarter.
    QCOMPARE(w->divider(), 0.5);
    const int y = w->height() / 2;
    QTest::mousePress(w, Qt::LeftButton, Qt::NoModifier, QPoint(w->width() / 2, y));
    QTest::mouseMove(w, QPoint(w->width() / 4, y));
    QTest::mouseRelease(w, Qt::LeftButton, Qt::NoModifier, QPoint(w->width() / 4, y));
    QVERIFY(std::abs(w->divider() - 0.25) < 0.01);
    QCOMPARE(view.transform()->center(), QPointF(0.5, 0.5));  // dragging the divider does not pan
    view.setMode(VideoCompareView::Mode::SideBySide);
    QTRY_VERIFY(view.isPresentingCurrentFrame());
  }

  void validationTabListsEventsAndPlaysThem() {
    RunEvents events;
    events.appendData(
        "{\"type\":\"started\",\"time\":1,\"job\":\"upsampler\",\"config\":{},\"world_size\":1,\"resume_step\":0,\"max_"
        "train_steps\":20}\n"
        "{\"type\":\"validation\",\"time\":2,\"step\":10,\"index\":0,\"lowres\":\"sample/step10_val0_lowres.mp4\","
        "\"upsampled\":\"sample/step10_val0_upsampled.mp4\",\"highres\":\"sample/step10_val0_highres.mp4\","
        "\"psnr\":31.25,\"psnr_lowres\":27.5,\"latent_mse\":0.0123,\"psnr_ceiling\":24.5,\"psnr_source\":23.75,"
        "\"psnr_lowres_source\":22.5}\n");
    ValidationView view(&events);
    view.resize(1000, 500);
    view.setRunDir(dir_.path());
    view.show();
    QCOMPARE(view.list()->topLevelItemCount(), 1);
    QCOMPARE(view.list()->topLevelItem(0)->text(2), QStringLiteral("31.25 dB"));
    QCOMPARE(view.list()->topLevelItem(0)->text(3), QStringLiteral("27.50 dB"));
    // The ceiling (the high-res decode against the source), with the other two against the source.
    QCOMPARE(view.list()->topLevelItem(0)->text(4), QStringLiteral("24.50 dB"));
    QVERIFY(view.list()->topLevelItem(0)->toolTip(2).contains(QStringLiteral("upsampled 23.75 dB, bilinear 22.50 dB")));
    // A new event appends (no paths: the run-directory names are used).
    events.appendData(
        "{\"type\":\"validation\",\"time\":3,\"step\":20,\"index\":0,\"psnr\":33.5,\"psnr_lowres\":27.5}\n");
    QCOMPARE(view.list()->topLevelItemCount(), 2);
    QCOMPARE(view.samples()[1].upsampled, QDir::cleanPath(dir_.filePath("sample/step20_val0_upsampled.mp4")));
    QVERIFY(view.samples()[1].highres.isEmpty());                          // no such file
    QCOMPARE(view.list()->topLevelItem(1)->text(4), QStringLiteral("–"));  // a run made before the ceiling

    view.selectSamples({0});
    QCOMPARE(view.player()->videos().size(), 3);
    QCOMPARE(view.player()->videos()[1].path, up_);
    QVERIFY(view.player()->videos()[1].caption.contains("31.25"));
    QTRY_COMPARE(view.player()->clock()->frameCount(), kFrames);
    QTRY_VERIFY(view.player()->isPresentingCurrentFrame());
    // Export from the validation player: the frame on screen, and the three videos as one MP4.
    QString error;
    const QString png = dir_.filePath(QStringLiteral("frame.png")), mp4 = dir_.filePath(QStringLiteral("side.mp4"));
    QVERIFY2(view.exportFrame(png, &error), qPrintable(error));
    const QImage frame(png);
    QVERIFY(!frame.isNull() && frame.width() > 300);
    QSignalSpy exported(&view, &ValidationPage::exportFinished);
    QVERIFY(view.exportVideo(mp4));
    QVERIFY(exported.wait(60'000));
    QVERIFY2(exported.first().at(0).toBool(), qPrintable(exported.first().at(1).toString()));
    QVERIFY(QFileInfo(mp4).size() > 1000);

    // Two steps: their upsampled videos, compared the same way.
    view.selectSamples({0, 1});
    QCOMPARE(view.player()->videos().size(), 2);
    QCOMPARE(view.player()->videos()[0].title, QStringLiteral("step 10 · val 0"));
    QCOMPARE(view.player()->videos()[1].path, QDir::cleanPath(dir_.filePath("sample/step20_val0_upsampled.mp4")));
    QTRY_COMPARE(view.player()->clock()->frameCount(), kFrames);
    view.player()->clock()->seek(9);
    QTRY_VERIFY(view.player()->isPresentingCurrentFrame());
    for (VideoPane* p : view.player()->panes()) QCOMPARE(frameOf(p->image()), 9);
  }
};

QTEST_MAIN(TestVideoCompare)
#include "test_video_compare.moc"
