// SPDX-License-Identifier: Apache-2.0
// The dataset page on the real demo data: rows and captions from metadata.json, thumbnails
// decoded in the background, caption edits saved atomically with a backup and every unknown
// field and key order kept, the file check (missing files named), "Fill sizes", the filter,
// and bad files refused with a message while the open dataset stays.
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include "item_models/dataset_model.h"
#include "jobs/job_result.h"
#include "pages/caption_encoder_panel.h"
#include "pages/dataset_page.h"
#include "test_paths.h"

using namespace ws;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

}  // namespace

class TestDatasetPage : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    if (!QFileInfo::exists(WS_ENGINE_EXE)) QFAIL("needs wanstudio-engine for the demo data");
    QVERIFY(tmp_.isValid());
    QProcess p;
    p.start(WS_ENGINE_EXE, {"demo-data", tmp_.path() + "/data"});
    QVERIFY(p.waitForFinished(120000) && p.exitCode() == 0);
    meta_ = tmp_.path() + "/data/metadata.json";
    // A field the studio does not know, a row without size and a row whose file is gone.
    auto doc = nlohmann::ordered_json::parse(readAll(meta_).toStdString());
    doc[0]["zz_source"] = "camera A";
    doc[1].erase("width");
    doc[1].erase("height");
    nlohmann::ordered_json gone = doc[2];
    gone["file_path"] = "videos/missing.mp4";
    doc.push_back(gone);
    writeAll(meta_, QByteArray::fromStdString(doc.dump(2)));
    rows_ = int(doc.size());
  }

  void opens_rows_and_decodes_thumbnails() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QString error;
    QVERIFY2(page.openDataset(meta_, &error), qPrintable(error));
    DatasetModel* m = page.model();
    QCOMPARE(m->rowCount(), rows_);
    auto doc = nlohmann::ordered_json::parse(readAll(meta_).toStdString());
    QCOMPARE(m->index(3).data(DatasetModel::CaptionRole).toString(),
             QString::fromStdString(doc[3]["text"].get<std::string>()));
    QCOMPARE(page.currentRow(), 0);
    QCOMPARE(page.captionEditor()->toPlainText(), QString::fromStdString(doc[0]["text"].get<std::string>()));
    // Thumbnails arrive for every row that has a file (videos and pictures), within the edge.
    QTRY_VERIFY_WITH_TIMEOUT(!m->thumbnail(0).isNull() && !m->thumbnail(rows_ - 2).isNull(), 30000);
    QVERIFY(m->thumbnail(0).width() <= 160 && m->thumbnail(0).height() <= 160);
    QVERIFY(m->index(0).data(Qt::DecorationRole).isValid());
    QVERIFY(m->thumbnail(rows_ - 1).isNull());  // the missing file
  }

  void caption_edits_save_atomically_with_a_backup() {
    const QByteArray before = readAll(meta_);
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    page.selectRow(4);
    page.captionEditor()->setPlainText(QStringLiteral("a red ball rolls left, ünïcode"));
    DatasetModel* m = page.model();
    QVERIFY(m->isModified());
    QVERIFY(m->index(4).data(DatasetModel::ModifiedRole).toBool());
    QVERIFY(m->index(4).data(Qt::DisplayRole).toString().endsWith(" *"));
    QCOMPARE(readAll(meta_), before);  // nothing written before Save
    QVERIFY(page.save());
    QVERIFY(!m->isModified());
    QCOMPARE(readAll(meta_ + ".bak"), before);
    auto was = nlohmann::ordered_json::parse(before.toStdString());
    auto now = nlohmann::ordered_json::parse(readAll(meta_).toStdString());
    QCOMPARE(now.size(), was.size());
    QCOMPARE(QString::fromStdString(now[4]["text"].get<std::string>()),
             QStringLiteral("a red ball rolls left, ünïcode"));
    for (size_t i = 0; i < now.size(); ++i) {
      if (i == 4) continue;
      QCOMPARE(QString::fromStdString(now[i].dump()), QString::fromStdString(was[i].dump()));  // keys, order, values
    }
    QCOMPARE(QString::fromStdString(now[0]["zz_source"].get<std::string>()), QStringLiteral("camera A"));
    // Revert after another edit brings the saved text back.
    page.captionEditor()->setPlainText(QStringLiteral("scratch"));
    page.revert();
    QVERIFY(!m->isModified());
    QCOMPARE(m->index(4).data(DatasetModel::CaptionRole).toString(), QStringLiteral("a red ball rolls left, ünïcode"));
  }

  void huge_caption_is_shown_cut_and_read_only() {
    // A 4 MB caption without spaces: laid out whole it froze the page for minutes.
    QTemporaryDir dir;
    const QString meta = dir.filePath("meta.json");
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    rows.push_back({{"file_path", "a.mp4"}, {"text", std::string(4'000'000, 'x')}});
    rows.push_back({{"file_path", "b.mp4"}, {"text", "short"}});
    writeAll(meta, QByteArray::fromStdString(rows.dump()));
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QElapsedTimer t;
    t.start();
    QVERIFY(page.openDataset(meta));
    page.show();
    page.selectRow(0);
    QVERIFY(page.captionEditor()->isReadOnly());
    QVERIFY(page.captionEditor()->toPlainText().size() <= 2001);
    QVERIFY(page.model()->index(0).data(Qt::ToolTipRole).toString().size() <= 401);
    QVERIFY(!page.model()->isModified());  // showing a cut caption is not an edit
    page.selectRow(1);
    QVERIFY(!page.captionEditor()->isReadOnly());
    QCOMPARE(page.captionEditor()->toPlainText(), QStringLiteral("short"));
    // Saving another edit keeps the long caption whole.
    page.captionEditor()->setPlainText(QStringLiteral("edited"));
    QVERIFY(page.save());
    auto now = nlohmann::ordered_json::parse(readAll(meta).toStdString());
    QCOMPARE(now[0]["text"].get<std::string>().size(), size_t(4'000'000));
    qInfo("opened, shown and saved a 4 MB caption in %lld ms", static_cast<long long>(t.elapsed()));
  }

  void check_files_names_problems_and_fills_sizes() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    DatasetModel* m = page.model();
    QSignalSpy done(m, &DatasetModel::probeFinished);
    page.checkFiles();
    QVERIFY(done.wait(60000));
    const QStringList missing = m->index(rows_ - 1).data(DatasetModel::ProblemsRole).toStringList();
    QVERIFY2(missing.join(" ").contains("no such file", Qt::CaseInsensitive), qPrintable(missing.join(" | ")));
    QVERIFY(m->index(0).data(DatasetModel::FramesRole).toLongLong() > 0);
    QVERIFY(m->problemCount() >= 1);
    QVERIFY2(page.status()->text().contains("files checked: ") && page.status()->text().contains("with problems"),
             qPrintable(page.status()->text()));
    // Which size and frames each row trains at, following the run options on the page.
    const QString t0 = m->index(0).data(DatasetModel::TrainingRole).toString();
    QVERIFY2(t0.startsWith("trains at ") && t0.contains(" frames at stride 2"), qPrintable(t0));
    page.selectRow(0);
    QCOMPARE(page.training()->text(), t0);
    page.sampleSize()->setValue(256);
    QVERIFY(page.training()->text() != t0);
    QCOMPARE(m->trainingShape().sampleSize, qint64(256));
    page.trainer()->setCurrentIndex(1);  // the experts' 32 px alignment
    QCOMPARE(m->trainingShape().scale, 2.0);
    page.stride()->setValue(500);  // longer than every demo clip
    QVERIFY2(m->index(0).data(DatasetModel::TrainingRole).toString().startsWith("dropped: too short"),
             qPrintable(m->index(0).data(DatasetModel::TrainingRole).toString()));
    QVERIFY(
        m->index(rows_ - 1).data(DatasetModel::TrainingRole).toString().startsWith("dropped: "));  // the missing file
    page.stride()->setValue(2);
    // Row 1 lost its size: Fill sizes writes the file's.
    QVERIFY(m->index(1).data(DatasetModel::SizeRole).toString().contains("from the file"));
    QVERIFY(m->fillSizesFromProbe() >= 1);
    QVERIFY(!m->index(1).data(DatasetModel::SizeRole).toString().contains("from the file"));
    QVERIFY(m->isModified());
    QVERIFY(page.save());
    auto now = nlohmann::ordered_json::parse(readAll(meta_).toStdString());
    QVERIFY(now[1].contains("width") && now[1]["width"].get<int>() > 0);
    // The filter: by caption text, by file name, and "!" for rows with problems.
    page.filter()->setText(QStringLiteral("missing.mp4"));
    QCOMPARE(page.grid()->model()->rowCount(), 1);
    page.filter()->setText(QStringLiteral("!"));
    QVERIFY(page.grid()->model()->rowCount() >= 1);
    page.filter()->clear();
    QCOMPARE(page.grid()->model()->rowCount(), rows_);
  }

  void bad_files_are_refused_and_the_open_dataset_stays() {
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    QString error;
    QVERIFY(!page.openDataset(tmp_.path() + "/nope.json", &error));
    QVERIFY2(error.contains("nope.json"), qPrintable(error));
    writeAll(tmp_.path() + "/broken.json", "[{\"file_path\": ");
    QVERIFY(!page.openDataset(tmp_.path() + "/broken.json", &error));
    QVERIFY(!error.isEmpty());
    QCOMPARE(page.model()->rowCount(), rows_);
    QCOMPARE(page.model()->path(), meta_);
  }

  // The text-encoder row: rows without an embedding from the chosen encoder show "missing",
  // "Encode captions" runs encode-text as a job with progress, and afterwards every row is "ready";
  // a file another encoder made reads "other encoder".
  void captions_are_encoded_from_the_page() {
    const QString t5 = QStringLiteral(WS_TEST_DATA "/t5");
    qputenv("WANSTUDIO_ENGINE", WS_ENGINE_EXE);
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta_));
    CaptionEncoderPanel* enc = page.textEncoder();
    QCOMPARE(enc->embeddingsDir(), QFileInfo(meta_).absoluteDir().filePath("text_embeddings"));
    const QString dir = tmp_.path() + "/emb";
    enc->setPaths(t5 + "/t5_dev_weights.pth", t5 + "/t5_dev_tokenizer.model", dir);
    QCOMPARE(page.model()->index(0).data(DatasetModel::EmbeddingRole).toString(), QStringLiteral("missing"));
    QCOMPARE(page.model()->embeddingsReady(), 0);
    QSignalSpy done(enc, &CaptionEncoderPanel::encodingFinished);
    QString error;
    QVERIFY2(enc->startEncoding(&error), qPrintable(error));
    QVERIFY(!enc->encodeButton()->isEnabled());
    QVERIFY(done.wait(120000));
    const auto result = done.first().first().value<JobResult>();
    QVERIFY2(result.state == RunState::Completed, qPrintable(result.reason));
    QVERIFY(enc->encodeButton()->isEnabled());
    QCOMPARE(page.model()->embeddingsReady(), page.model()->rowCount());
    QCOMPARE(page.model()->index(1).data(DatasetModel::EmbeddingRole).toString(), QStringLiteral("ready"));
    QVERIFY2(page.facts()->text().contains("text embedding: ready"), qPrintable(page.facts()->text()));
    // The same files checked against another encoder checkpoint (other bytes) are not its.
    enc->setPaths(t5 + "/t5_dev_weights.safetensors", t5 + "/t5_dev_tokenizer.model", dir);
    QCOMPARE(page.model()->index(0).data(DatasetModel::EmbeddingRole).toString(), QStringLiteral("other encoder"));
    // A new caption is a new file: missing again.
    enc->setPaths(t5 + "/t5_dev_weights.pth", t5 + "/t5_dev_tokenizer.model", dir);
    QVERIFY(page.model()->setCaption(0, "a caption nobody encoded"));
    QCOMPARE(page.model()->index(0).data(DatasetModel::EmbeddingRole).toString(), QStringLiteral("missing"));
  }

 private:
  QTemporaryDir tmp_;
  QString meta_;
  int rows_ = 0;
};

QTEST_MAIN(TestDatasetPage)
#include "test_dataset_page.moc"
