// SPDX-License-Identifier: Apache-2.0
// Making and curating a dataset on the dataset page: New from folder (the import on a worker
// thread, its problems listed, the metadata.json written and opened; cancelled, nothing
// written), files added by the button and by a drop on the grid, rows removed and put back,
// the removal saved with a backup, captions exported beside the clips.
#include <cmath>

#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "core/fs.h"
#include "dataset/metadata.h"
#include "item_models/dataset_model.h"
#include "pages/caption_tools_bar.h"
#include "pages/dataset_edit_bar.h"
#include "pages/dataset_page.h"
#include "pages/duplicates_dialog.h"
#include "video/video_encode.h"

using namespace ws;

namespace {

// A clip of `frames` frames whose pattern (and so its perceptual hash) depends on `seed`.
void writeClip(const QString& path, int seed, int frames = 9) {
  std::vector<video::RgbFrame> v;
  for (int i = 0; i < frames; ++i) {
    video::RgbFrame f(64, 48);
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 64; ++x) {
        const double s = 128 + 100 * std::sin((x + i) * (seed + 1) / 9.0) * std::cos(y * (5 - seed % 5) / 7.0);
        uint8_t* px = f.pixel(x, y);
        px[0] = uint8_t(s);
        px[1] = uint8_t(255 - s);
        px[2] = uint8_t(40 * seed);
      }
    v.push_back(std::move(f));
  }
  video::write_video(path.toStdString(), v);
}

void writeText(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(text);
}

QStringList captions(const DatasetModel* m) {
  QStringList out;
  for (int r = 0; r < m->rowCount(); ++r) out << m->index(r).data(DatasetModel::CaptionRole).toString();
  return out;
}

}  // namespace

class TestDatasetEdits : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    const QString clips = tmp_.filePath("clips");
    QDir().mkpath(clips + "/more");
    writeClip(clips + "/a.mp4", 1);
    writeText(clips + "/a.txt", "a red clip\n");
    writeClip(clips + "/more/b.mp4", 2);
    writeText(clips + "/more/b.txt", "a green clip");
    writeText(clips + "/broken.mp4", "not a video");
    writeClip(tmp_.filePath("extra.mp4"), 3);
    writeText(tmp_.filePath("extra.txt"), "an extra clip");
    writeClip(tmp_.filePath("dropped.mp4"), 4);
  }

  void everyControlIsNamed() {
    DatasetPage page;
    for (QPushButton* b : page.edits()->findChildren<QPushButton*>())
      QVERIFY2(!b->accessibleName().isEmpty(), qPrintable(b->text()));
    QVERIFY(!page.edits()->addButton()->isEnabled());  // nothing open yet
    QVERIFY(page.edits()->newButton()->isEnabled());
  }

  void newFromFolderAddRemoveUndo() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    DatasetEditBar* bar = page.edits();
    const QString meta = tmp_.filePath("clips/metadata.json");
    QSignalSpy done(bar, &DatasetEditBar::importFinished);
    QVERIFY(bar->importFolder(tmp_.filePath("clips"), meta));
    QVERIFY(done.wait(60000));
    QCOMPARE(done.at(0).at(1).toString(), QString());
    QCOMPARE(done.at(0).at(0).toInt(), 2);
    QVERIFY(QFileInfo::exists(meta));
    QCOMPARE(page.model()->path(), meta);
    QVERIFY(!page.model()->isModified());
    QCOMPARE(captions(page.model()), (QStringList{"a red clip", "a green clip"}));
    QCOMPARE(page.model()->index(1).data(DatasetModel::FileRole).toString(), QString("more/b.mp4"));
    QVERIFY(bar->lastProblems().join("\n").contains("broken.mp4: unreadable"));

    // Add files: a clip with its caption joins, a file that is no video is named.
    writeText(tmp_.filePath("notes.md"), "notes");
    QCOMPARE(bar->addFiles({tmp_.filePath("extra.mp4"), tmp_.filePath("notes.md")}), 1);
    QCOMPARE(page.model()->rowCount(), 3);
    QCOMPARE(captions(page.model()).last(), QString("an extra clip"));
    QVERIFY(bar->lastProblems().join("\n").contains("notes.md"));
    QVERIFY(page.model()->isModified());

    // A file dropped on the grid is added too.
    auto* mime = new QMimeData;
    mime->setUrls({QUrl::fromLocalFile(tmp_.filePath("dropped.mp4"))});
    QWidget* vp = page.grid()->viewport();
    QDragEnterEvent enter(QPoint(5, 5), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(5, 5), Qt::CopyAction, mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(vp, &drop);
    QCOMPARE(page.model()->rowCount(), 4);
    delete mime;

    // Remove two rows, put them back in their places, remove one and save: the file loses it, .bak keeps it.
    const QStringList before = captions(page.model());
    auto* sel = page.grid()->selectionModel();
    sel->clearSelection();
    sel->select(page.grid()->model()->index(0, 0), QItemSelectionModel::Select);
    sel->select(page.grid()->model()->index(2, 0), QItemSelectionModel::Select);
    QVERIFY(bar->removeButton()->isEnabled());
    QCOMPARE(bar->removeSelected(), 2);
    QCOMPARE(captions(page.model()), (QStringList{before[1], before[3]}));
    QVERIFY(bar->undoButton()->isEnabled());
    bar->undoRemove();
    QCOMPARE(captions(page.model()), before);
    QVERIFY(!bar->undoButton()->isEnabled());
    sel->clearSelection();
    sel->select(page.grid()->model()->index(0, 0), QItemSelectionModel::Select);
    QCOMPARE(bar->removeSelected(), 1);
    QVERIFY(page.save());
    QVERIFY(!bar->undoButton()->isEnabled());  // saved: the removal is the new start
    const auto saved = dataset::read_metadata(meta.toStdString());
    QCOMPARE(int(saved.rows.size()), 3);
    QCOMPARE(QString::fromStdString(saved.rows[0].text), QString("a green clip"));
    QCOMPARE(int(dataset::read_metadata((meta + ".bak").toStdString()).rows.size()), 2);
    QVERIFY(QFileInfo::exists(tmp_.filePath("clips/a.mp4")));  // the file itself stays

    // Export: each caption beside its clip.
    page.model()->setCaption(0, "a green clip, edited");
    QCOMPARE(bar->exportCaptions(), 3);
    QFile side(tmp_.filePath("clips/more/b.txt"));
    QVERIFY(side.open(QIODevice::ReadOnly));
    QCOMPARE(side.readAll(), QByteArray("a green clip, edited\n"));
  }

  // A trigger word on every caption and off again, find and replace on all or on the selection,
  // and Revert taking it all back.
  void captionsAtScale() {
    const QString meta = tmp_.filePath("scale/metadata.json");
    QDir().mkpath(tmp_.filePath("scale"));
    std::vector<dataset::MetaRow> rows;
    for (const char* c : {"a red clip", "A Clip of a dog", "", "ohwx, already tagged"})
      rows.push_back(dataset::make_row("x.mp4", c, "video", 64, 48));
    dataset::write_metadata(meta.toStdString(), rows);
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta));
    CaptionToolsBar* tools = page.captionTools();
    tools->triggerWord()->setText(" ohwx ");
    QCOMPARE(tools->addTrigger(), 3);
    QCOMPARE(captions(page.model()),
             (QStringList{"ohwx, a red clip", "ohwx, A Clip of a dog", "ohwx", "ohwx, already tagged"}));
    QCOMPARE(tools->addTrigger(), 0);
    QVERIFY(tools->result()->text().contains("changed 0 of 4"));
    QCOMPARE(page.captionEditor()->toPlainText(), QString("ohwx, a red clip"));  // the editor follows
    QCOMPARE(tools->removeTrigger(), 4);
    QCOMPARE(captions(page.model()), (QStringList{"a red clip", "A Clip of a dog", "", "already tagged"}));

    tools->findText()->setText("clip");
    tools->replaceText()->setText("video");
    QCOMPARE(tools->replaceAll(), 1);  // case matters: "Clip" stays
    tools->matchCase()->setChecked(false);
    QCOMPARE(tools->replaceAll(), 1);
    QCOMPARE(captions(page.model()).mid(0, 2), (QStringList{"a red video", "A video of a dog"}));
    // Several rows selected: only they change.
    auto* sel = page.grid()->selectionModel();
    sel->clearSelection();
    sel->select(page.grid()->model()->index(1, 0), QItemSelectionModel::Select);
    sel->select(page.grid()->model()->index(3, 0), QItemSelectionModel::Select);
    tools->triggerWord()->setText("sks");
    QCOMPARE(tools->addTrigger(), 2);
    QCOMPARE(captions(page.model()), (QStringList{"a red video", "sks, A video of a dog", "", "sks, already tagged"}));
    QVERIFY(page.model()->isModified());
    page.revert();
    QCOMPARE(captions(page.model()), (QStringList{"a red clip", "A Clip of a dog", "", "ohwx, already tagged"}));
  }

  // A byte copy of a clip is found, a different clip is not; removing one side is an undoable removal.
  void duplicates() {
    const QString dir = tmp_.filePath("dupes");
    QDir().mkpath(dir);
    writeClip(dir + "/x.mp4", 1);
    QVERIFY(QFile::copy(dir + "/x.mp4", dir + "/x_copy.mp4"));
    writeClip(dir + "/y.mp4", 3);
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QSignalSpy imported(page.edits(), &DatasetEditBar::importFinished);
    QVERIFY(page.edits()->importFolder(dir, dir + "/metadata.json"));
    QVERIFY(imported.wait(60000));
    QCOMPARE(page.model()->rowCount(), 3);
    QVERIFY(page.edits()->duplicatesButton()->isEnabled());
    DuplicatesDialog* d = page.edits()->findDuplicates();
    QSignalSpy found(d, &DuplicatesDialog::searchFinished);
    QVERIFY(found.wait(60000));
    QCOMPARE(d->pairCount(), 1);
    QCOMPARE(d->table()->item(0, 1)->text(), QString("x.mp4"));
    QCOMPARE(d->table()->item(0, 2)->text(), QString("x_copy.mp4"));
    QVERIFY(d->removeSide(0, 1));
    QCOMPARE(captions(page.model()).size(), 2);
    QCOMPARE(page.model()->index(1).data(DatasetModel::FileRole).toString(), QString("y.mp4"));
    QVERIFY(d->table()->item(0, 2)->text().contains("removed"));
    QVERIFY(!d->removeSide(0, 1));  // gone already
    QVERIFY(page.model()->canUndoRemove());
  }

  void cancelledImportWritesNothing() {
    const QString many = tmp_.filePath("many");
    QDir().mkpath(many);
    for (int i = 0; i < 40; ++i) writeClip(many + QStringLiteral("/c%1.mp4").arg(i, 2, 10, QChar('0')), i % 5, 5);
    DatasetPage page;
    QSignalSpy done(page.edits(), &DatasetEditBar::importFinished);
    QVERIFY(page.edits()->importFolder(many, many + "/metadata.json"));
    QVERIFY(page.edits()->cancelButton()->isVisibleTo(page.edits()));
    page.edits()->cancelImport();
    QVERIFY(done.wait(60000));
    QVERIFY2(done.at(0).at(1).toString().contains("cancelled"), qPrintable(done.at(0).at(1).toString()));
    QVERIFY(!QFileInfo::exists(many + "/metadata.json"));
    QVERIFY(page.model()->path().isEmpty());
  }
};

QTEST_MAIN(TestDatasetEdits)
#include "test_dataset_edits.moc"
