// SPDX-License-Identifier: Apache-2.0
// Curating on the dataset page by numbers and frames, on real encoded clips: scores made on a
// worker thread and written into rows, the table sorted by them, filter expressions, the
// histogram and "exclude the lowest 10 %" (two clicks) with Undo; in and out points set with the
// player and saved as the row's trim; the frame extraction choice and the bucket chart.
#include <cmath>

#include <QDoubleSpinBox>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMimeData>
#include <QListView>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "bar_chart.h"
#include "dataset/clip_scores.h"
#include "dataset/metadata.h"
#include "frame_source.h"
#include "item_models/dataset_model.h"
#include "item_models/row_filter.h"
#include "pages/dataset_edit_bar.h"
#include "pages/dataset_page.h"
#include "pages/scene_split_dialog.h"
#include "pages/scene_timeline.h"
#include "pages/scores_panel.h"
#include "pages/trim_bar.h"
#include "test_paths.h"
#include "thumbnail_loader.h"
#include "video/video_encode.h"

using namespace ws;

namespace {

// A smooth grey pattern panned `speed` pixels a frame (0: a still clip).
void writePan(const QString& path, int speed, int frames) {
  std::vector<video::RgbFrame> v;
  for (int i = 0; i < frames; ++i) {
    video::RgbFrame f(160, 96);
    for (int y = 0; y < 96; ++y)
      for (int x = 0; x < 160; ++x) {
        const double u = x + i * speed, tau = 2 * M_PI;
        const double s = 128 + 30 * std::sin(tau * u / 57) * std::cos(tau * y / 43) + 20 * std::sin(tau * (u + y) / 71);
        uint8_t* p = f.pixel(x, y);
        p[0] = p[1] = p[2] = uint8_t(std::clamp(s, 0.0, 255.0));
      }
    v.push_back(std::move(f));
  }
  video::EncodeOptions o;
  o.fps = 16;
  o.crf = 10;
  video::write_video(path.toStdString(), v, o);
}

// Shots of distinct colour (a slow gradient moving inside each), joined into one recording.
void writeShots(const QString& path, const std::vector<int>& lengths) {
  const uint8_t colours[][3] = {{200, 40, 40}, {40, 180, 60}, {50, 60, 210}, {220, 200, 60}};
  std::vector<video::RgbFrame> v;
  for (size_t s = 0; s < lengths.size(); ++s)
    for (int i = 0; i < lengths[s]; ++i) {
      video::RgbFrame f(128, 72);
      for (int y = 0; y < 72; ++y)
        for (int x = 0; x < 128; ++x) {
          uint8_t* p = f.pixel(x, y);
          const int d = ((x + y + i) % 32) - 16;
          for (int c = 0; c < 3; ++c) p[c] = uint8_t(std::clamp(colours[s % 4][c] + d, 0, 255));
        }
      v.push_back(std::move(f));
    }
  video::EncodeOptions o;
  o.fps = 16;
  video::write_video(path.toStdString(), v, o);
}

// WS_SCREENSHOT_DIR set: the widget as the README shows it (docs/screenshots/).
void screenshot(QWidget* w, const char* name) {
  const QString dir = qEnvironmentVariable("WS_SCREENSHOT_DIR");
  if (!dir.isEmpty()) QVERIFY(w->grab().save(dir + QLatin1Char('/') + QLatin1String(name), "PNG"));
}

int visibleRows(DatasetPage& page) { return page.grid()->model()->rowCount(); }

}  // namespace

class TestDatasetCuration : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString meta_;

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // the thumbnail cache goes to a test folder
    QVERIFY(tmp_.isValid());
    std::vector<dataset::MetaRow> rows;
    const int speeds[] = {2, 0, 3, 1};  // the still clip is not the first row
    const int frames[] = {33, 41, 25, 49};
    for (int i = 0; i < 4; ++i) {
      const QString name = QStringLiteral("pan%1.mp4").arg(i);
      writePan(tmp_.filePath(name), speeds[i], frames[i]);
      dataset::MetaRow r;
      r.file_path = name.toStdString();
      r.text = "clip " + std::to_string(i);
      r.width = 160;
      r.height = 96;
      r.raw = {{"file_path", r.file_path}, {"text", r.text}, {"type", "video"}, {"width", 160}, {"height", 96},
               {"frames", frames[i]},      {"fps", 16}};
      rows.push_back(r);
    }
    meta_ = tmp_.filePath("metadata.json");
    dataset::write_metadata(meta_.toStdString(), rows);
  }

  // Thumbnails are kept on disk by content: a copy under another name is not decoded again, an
  // edited file is.
  void thumbnailsCachedByContent() {
    const QString cache = tmp_.filePath("thumbcache");
    const QString a = tmp_.filePath("pan0.mp4"), copy = tmp_.filePath("copy-of-pan0.mp4");
    QVERIFY(QFile::copy(a, copy));
    ThumbnailLoader first;
    first.setCacheDir(cache);
    QSignalSpy ready(&first, &ThumbnailLoader::thumbnailReady);
    first.request(1, a);
    QVERIFY(ready.wait(10000));
    QCOMPARE(first.decodedCount(), 1);
    const QImage made = ready.at(0).at(1).value<QImage>();
    ThumbnailLoader second;
    second.setCacheDir(cache);
    QSignalSpy again(&second, &ThumbnailLoader::thumbnailReady);
    second.request(7, copy);
    QVERIFY(again.wait(10000));
    QCOMPARE(second.decodedCount(), 0);
    QCOMPARE(again.at(0).at(1).value<QImage>().size(), made.size());
    writePan(copy, 5, 9);  // edited: another content key
    second.request(8, copy);
    QVERIFY(again.wait(10000));
    QCOMPARE(second.decodedCount(), 1);
    QVERIFY(ThumbnailLoader::contentKey(a) != ThumbnailLoader::contentKey(copy));
  }

  // A folder is a dataset wherever one is asked for: opened (its metadata.json, or one made from its
  // clips and .txt captions), dropped on an empty page, or dropped into an open dataset (its clips
  // become rows).
  void foldersOpenAsDatasets() {
    const QString folder = tmp_.filePath("plain");
    QDir().mkpath(folder + "/sub");
    writePan(folder + "/one.mp4", 1, 17);
    writePan(folder + "/sub/two.mp4", 2, 17);
    QFile caption(folder + "/one.txt");
    QVERIFY(caption.open(QIODevice::WriteOnly));
    caption.write("a plain caption file\n");
    caption.close();
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QSignalSpy imported(page.edits(), &DatasetEditBar::importFinished);
    QVERIFY(page.openDataset(folder));
    QVERIFY(imported.wait(30000));
    QCOMPARE(imported.at(0).at(1).toString(), QString());
    QCOMPARE(page.model()->path(), folder + "/metadata.json");
    QCOMPARE(page.model()->rowCount(), 2);
    QCOMPARE(page.model()->index(0).data(DatasetModel::CaptionRole).toString(), QStringLiteral("a plain caption file"));
    // Opened again: the folder's metadata.json, no second import.
    DatasetPage again;
    QVERIFY(again.openDataset(folder));
    QCOMPARE(again.model()->path(), folder + "/metadata.json");
    // The engine reads the folder as its metadata.json too.
    QCOMPARE(dataset::read_metadata(folder.toStdString()).rows.size(), size_t{2});
    // A folder dropped into an open dataset: its clips become rows.
    const QString more = tmp_.filePath("more");
    QDir().mkpath(more);
    writePan(more + "/three.mp4", 3, 9);
    writePan(more + "/.hidden.mp4", 3, 9);
    auto* mime = new QMimeData;
    mime->setUrls({QUrl::fromLocalFile(more)});
    QDragEnterEvent enter(QPoint(5, 5), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(again.grid()->viewport(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(5, 5), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(again.grid()->viewport(), &drop);
    delete mime;
    QVERIFY2(again.model()->rowCount() == 3, qPrintable(again.edits()->lastProblems().join("; ")));
  }

  void filterExpressions() {
    const auto numbers = [](const QString& f) {
      return f == "motion_score" ? 0.4 : f == "frames" ? 49.0 : std::nan("");
    };
    QVERIFY(RowFilter("motion_score < 0.5").matches(numbers, "x", false));
    QVERIFY(!RowFilter("motion_score >= 0.5").matches(numbers, "x", false));
    QVERIFY(RowFilter("motion < 0.5 and frames >= 49").matches(numbers, "x", false));
    QVERIFY(!RowFilter("motion < 0.5 and frames > 49").matches(numbers, "x", false));
    QVERIFY(!RowFilter("sharpness > 1").matches(numbers, "x", false));  // not scored: fails
    QVERIFY(RowFilter("red car and frames=49").matches(numbers, "a Red Car drives", false));
    QVERIFY(!RowFilter("!").matches(numbers, "x", false));
    QVERIFY(RowFilter("!").matches(numbers, "x", true));
    RowFilter bad("speed > 3");
    QVERIFY(!bad.ok());
    QVERIFY(bad.error().contains("speed"));
    QVERIFY(bad.matches(numbers, "x", false));  // a half-typed expression hides nothing
    QVERIFY(!RowFilter("frames > ").ok());
  }

  void scoresSortFilterAndExclude() {
    if (!dataset::clip_scores_built()) QSKIP("built without OpenCV's optical flow");
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    page.resize(1400, 900);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QVERIFY(page.openDataset(meta_));
    ScoresPanel* s = page.scores();
    QVERIFY(s->histogram()->bars().isEmpty());
    QSignalSpy done(s, &ScoresPanel::scoringFinished);
    QTest::mouseClick(s->scoreButton(), Qt::LeftButton);
    QVERIFY(s->scoring());
    QVERIFY(done.wait(60000));
    QCOMPARE(done.at(0).at(0).toInt(), 4);
    DatasetModel* m = page.model();
    for (int r = 0; r < 4; ++r) QVERIFY(!std::isnan(m->number(r, "motion_score")));
    QVERIFY(m->number(1, "motion_score") < m->number(3, "motion_score"));  // still < 1 px a frame
    QVERIFY(m->isModified());
    // The histogram counts every scored row.
    double total = 0;
    for (const auto& b : s->histogram()->bars()) total += b.value;
    QCOMPARE(total, 4.0);

    // The table, sorted by motion: the still clip first.
    QTest::mouseClick(page.tableToggle(), Qt::LeftButton);
    QVERIFY(page.table()->isVisible() || page.table()->parentWidget());
    page.table()->sortByColumn(DatasetModel::MotionColumn, Qt::AscendingOrder);
    const QModelIndex first = page.table()->model()->index(0, DatasetModel::NameColumn);
    QCOMPARE(first.data(DatasetModel::FileRole).toString(), QStringLiteral("pan1.mp4"));
    QVERIFY(!page.table()->model()->index(0, DatasetModel::MotionColumn).data().toString().isEmpty());

    // A filter expression on the scores.
    const double cut = (m->number(1, "motion_score") + m->number(3, "motion_score")) / 2;
    page.filter()->setText(QStringLiteral("motion_score > %1").arg(cut));
    QCOMPARE(visibleRows(page), 3);
    page.filter()->setText(QStringLiteral("motion_score > %1 and frames >= 41").arg(cut));
    QCOMPARE(visibleRows(page), 1);  // pan3: 49 frames, moving
    page.filter()->setText(QStringLiteral("wobble > 1"));
    QCOMPARE(visibleRows(page), 4);
    QVERIFY(page.status()->text().contains("unknown field"));
    page.filter()->clear();

    // Two clicks: the Scores tab, then "Exclude the lowest 10 %" by motion — with four rows, 10 %
    // is none, so ask for 25 %: the still clip goes.
    page.tabs()->setCurrentWidget(s);
    QCOMPARE(s->field()->currentData().toString(), QStringLiteral("motion_score"));
    QCOMPARE(s->percent()->value(), 10.0);
    QCOMPARE(s->excludeLowest(), 0);
    page.filter()->setText(QStringLiteral("motion_score > 0"));
    screenshot(&page, "dataset-scores.png");
    page.filter()->clear();
    s->percent()->setValue(25);
    QVERIFY2(s->excludeButton()->isEnabled(), qPrintable(s->status()->text()));
    QTest::mouseClick(s->excludeButton(), Qt::LeftButton);
    QVERIFY2(m->rowCount() == 3, qPrintable(s->status()->text() + " / " + s->excludeButton()->text()));
    for (int r = 0; r < 3; ++r) QVERIFY(m->index(r).data(DatasetModel::FileRole).toString() != "pan1.mp4");
    QVERIFY(m->canUndoRemove());
    QVERIFY(m->undoRemove());
    QCOMPARE(m->rowCount(), 4);

    // Saved: the scores are in the file, as `dataset score` writes them.
    QVERIFY(page.save());
    const auto saved = dataset::read_metadata(meta_.toStdString());
    QVERIFY(saved.rows[0].raw.contains("motion_score") && saved.rows[0].raw.contains("sharpness") &&
            saved.rows[0].raw.contains("brightness"));
  }

  void trimWithThePlayer() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    page.resize(1400, 900);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QVERIFY(page.openDataset(meta_));
    page.selectRow(3);  // 49 frames
    TrimBar* t = page.trim();
    QCOMPARE(t->row(), 3);
    // The clip may open before a spy could be connected: wait for its effect instead.
    QTRY_COMPARE_WITH_TIMEOUT(t->slider()->maximum(), 48, 10000);
    QCOMPARE(t->outPoint()->value(), 49);  // untrimmed: the file's end
    QSignalSpy shown(t, &TrimBar::frameShown);
    t->slider()->setValue(8);
    QVERIFY(shown.wait(10000));
    QCOMPARE(shown.last().at(0).toInt(), 8);
    QTest::mouseClick(t->setInButton(), Qt::LeftButton);
    t->slider()->setValue(36);
    QTest::mouseClick(t->setOutButton(), Qt::LeftButton);
    QCOMPARE(t->inPoint()->value(), 8);
    QCOMPARE(t->outPoint()->value(), 37);
    QTest::mouseClick(t->applyButton(), Qt::LeftButton);
    QVERIFY(page.training()->text().contains("trimmed to 8–37"));
    // An out point before the in point is refused and changes nothing.
    t->inPoint()->setValue(30);
    t->outPoint()->setValue(20);
    QVERIFY(!t->apply());
    QVERIFY(t->status()->text().contains("after the in point"));
    QVERIFY(page.save());
    auto saved = dataset::read_metadata(meta_.toStdString());
    QVERIFY(saved.rows[3].trim);
    QCOMPARE(saved.rows[3].trim->first, int64_t{8});
    QCOMPARE(saved.rows[3].trim->second, int64_t{37});
    QTest::mouseClick(t->clearButton(), Qt::LeftButton);
    QVERIFY(page.save());
    QVERIFY(!dataset::read_metadata(meta_.toStdString()).rows[3].trim);
  }

  // A recording of four shots: the scan's cuts fall on the joins (within two frames); a person
  // drops one, adds one and moves one on the timeline, and the clips written follow the edits.
  void splitScenesOnTheTimeline() {
    const QString video = tmp_.filePath("recording.mp4");
    writeShots(video, {40, 23, 57, 31});
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    SceneSplitDialog* d = page.edits()->splitScenes(video);
    QSignalSpy scanned(d, &SceneSplitDialog::scanFinished);
    QVERIFY(scanned.wait(60000));
    QCOMPARE(scanned.at(0).at(0).toString(), QString());
    SceneTimeline* t = d->timeline();
    QCOMPARE(t->frames(), qint64{151});
    QCOMPARE(t->cuts().size(), 3);
    const qint64 joins[] = {40, 63, 120};
    for (int i = 0; i < 3; ++i)
      QVERIFY2(std::abs(t->cuts()[i] - joins[i]) <= 2, qPrintable(QString::number(t->cuts()[i])));
    // A higher threshold than any score finds none; back to 27 finds them again, without a second decode.
    d->threshold()->setValue(250);
    QCOMPARE(t->cuts().size(), 0);
    d->threshold()->setValue(27);
    QCOMPARE(t->cuts().size(), 3);
    // The edits: drop the second cut (Delete on the selected one), add one at 90, move the first to 42.
    t->selectCut(1);
    QTest::keyClick(t, Qt::Key_Delete);
    QCOMPARE(t->cuts().size(), 2);
    t->setCursor(90);
    t->addCut(t->cursor());
    QVERIFY(!t->addCut(0) && !t->addCut(151));  // not a cut
    t->moveCut(0, 42);
    QCOMPARE(t->cuts(), (QVector<qint64>{42, 90, 120}));
    t->selectCut(1);
    QTest::qWait(300);  // the scene thumbnails, for the picture only
    screenshot(d, "dataset-split.png");
    QVERIFY(t->accessibleDescription().contains("42, 90, 120"));
    d->outputDir()->setText(tmp_.filePath("scenes"));
    QSignalSpy written(d, &SceneSplitDialog::clipsWritten);
    QVERIFY(d->writeClips());
    QVERIFY(written.wait(60000));
    QCOMPARE(written.at(0).at(1).toString(), QString());
    // The clips' metadata.json is open on the page now.
    QCOMPARE(page.model()->path(), written.at(0).at(0).toString());
    const auto m = dataset::read_metadata(written.at(0).at(0).toString().toStdString());
    QCOMPARE(m.rows.size(), size_t{4});
    const int64_t ranges[][2] = {{0, 42}, {42, 90}, {90, 120}, {120, 151}};
    for (size_t i = 0; i < 4; ++i) {
      const auto& fr = m.rows[i].raw.at("frame_range");
      QCOMPARE(fr.at(0).get<int64_t>(), ranges[i][0]);
      QCOMPARE(fr.at(1).get<int64_t>(), ranges[i][1]);
    }
    d->close();
  }

  // Caption lengths in the chosen encoder's tokens: a column, the row's facts, a filter field; an
  // edited caption is counted again.
  void captionTokens() {
    const QString spiece = QStringLiteral(WS_TEST_DATA "/../../configs/demo/umt5_demo_spiece.model");
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    DatasetModel* m = page.model();
    QCOMPARE(m->captionTokens(0), -1);
    QVERIFY(std::isnan(m->number(0, "tokens")));
    QString error;
    QVERIFY(!m->setTokenizer(tmp_.filePath("missing.model"), &error));
    QVERIFY(!error.isEmpty());
    if (!m->setTokenizer(spiece, &error) && error.contains(QStringLiteral("sanitizer build")))
      QSKIP("no SentencePiece in a sanitizer build");
    QVERIFY2(m->hasTokenizer(), qPrintable(error));
    const int n0 = m->captionTokens(0);
    QVERIFY(n0 > 0);
    QCOMPARE(m->index(0, DatasetModel::TokensColumn).data().toString(), QString::number(n0));
    QVERIFY(m->setCaption(0, m->index(0).data(DatasetModel::CaptionRole).toString() +
                                 " with many more words to count than before, and then some more"));
    QVERIFY(m->captionTokens(0) > n0 + 5);
    page.filter()->setText(QStringLiteral("tokens > %1").arg(n0 + 5));
    QCOMPARE(visibleRows(page), 1);
    page.filter()->clear();
    page.refreshCurrent();  // the page shows row 0 already
    QVERIFY(page.facts()->text().contains(QStringLiteral("%1 tokens").arg(m->captionTokens(0))));
    QVERIFY(m->setTokenizer(QString()));
    QCOMPARE(m->captionTokens(0), -1);
  }

  // The captions at a glance in the status line: rows without one, repeated ones, and (with a
  // tokenizer) those the text encoder cuts at 511 tokens; an edit counts again.
  void captionCounts() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    DatasetModel* m = page.model();
    auto counts = m->captionCounts();
    QCOMPARE(counts.empty, 0);
    QCOMPARE(counts.duplicated, 0);
    QCOMPARE(counts.overLong, -1);  // no tokenizer chosen
    QVERIFY(m->setCaption(1, QStringLiteral("  ")));
    QVERIFY(m->setCaption(2, QStringLiteral("clip 3 ")));  // row 3's, but for the space
    counts = m->captionCounts();
    QCOMPARE(counts.empty, 1);
    QCOMPARE(counts.duplicated, 2);
    QTRY_VERIFY2(page.status()->text().contains(QStringLiteral("2 with a caption another row has too")),
                 qPrintable(page.status()->text()));
    QVERIFY(page.status()->text().contains(QStringLiteral("1 without a caption")));
    QString error;
    if (!m->setTokenizer(QStringLiteral(WS_TEST_DATA "/../../configs/demo/umt5_demo_spiece.model"), &error) &&
        error.contains(QStringLiteral("sanitizer build")))
      QSKIP("no SentencePiece in a sanitizer build");
    QCOMPARE(m->captionCounts().overLong, 0);
    QVERIFY(m->setCaption(0, QStringLiteral("a red ball rolls across the floor ").repeated(120)));
    QVERIFY(m->captionTokens(0) > 511);
    QCOMPARE(m->captionCounts().overLong, 1);
    QTRY_VERIFY2(page.status()->text().contains(QStringLiteral("1 cut at 511 tokens")),
                 qPrintable(page.status()->text()));
    QVERIFY(m->setCaption(1, QStringLiteral("now a caption of its own")));
    QCOMPARE(m->captionCounts().empty, 0);
    page.revert();
  }

  // Samples per clip by the extraction mode (N = 5 frames at stride 2: a window spans 9 frames),
  // counted here by hand, and the chart's total.
  void extractionAndBuckets() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    page.resize(1400, 900);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QVERIFY(page.openDataset(meta_));
    page.frames()->setValue(5);
    page.stride()->setValue(2);
    page.tabs()->setCurrentIndex(2);
    const auto chartTotal = [&] {
      double total = 0;
      for (const auto& b : page.bucketChart()->bars()) total += b.value;
      return total;
    };
    QCOMPARE(chartTotal(), 4.0);  // random: a sample per row
    page.extraction()->setCurrentText("chunk");
    // 33, 41, 25, 49 frames: 3, 4, 2, 5 whole windows of 9.
    QCOMPARE(chartTotal(), 14.0);
    page.selectRow(3);
    QVERIFY2(page.training()->text().contains("5 sample(s) (chunk)"), qPrintable(page.training()->text()));
    page.extraction()->setCurrentText("slide");
    QVERIFY(page.extractionParameter()->isVisibleTo(&page));
    page.extractionParameter()->setValue(20);  // starts 0, 20, (40 > 40? 49-9 = 40: yes) per clip
    // last starts 24, 32, 16, 40: 2, 2, 1, 3 windows.
    QCOMPARE(chartTotal(), 8.0);
    page.extraction()->setCurrentText("head");
    QVERIFY(!page.extractionParameter()->isVisibleTo(&page));
    QCOMPARE(chartTotal(), 4.0);
    QVERIFY(!page.bucketChart()->accessibleDescription().isEmpty());
  }
};

QTEST_MAIN(TestDatasetCuration)
#include "test_dataset_curation.moc"
