// SPDX-License-Identifier: Apache-2.0
// Reviewing suggested captions on the dataset page (`text_suggested`, written by
// `wanstudio-engine caption`): the suggestion shown under the caption, Accept (it becomes `text`,
// the key goes) and Reject (only the key goes) saved by the page's own atomic write with a .bak,
// the key kept by an unrelated save, Edit putting the focus in the editor, the `?` filter, the
// grid's mark, Ctrl+Return and Ctrl+Backspace, and the accessible names. The Captioner tab: its
// arguments, the job's events putting suggestions into the model beside unsaved edits, and a
// stand-in worker run to its end and one cancelled.
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>
#include <nlohmann/json.hpp>

#include "item_models/dataset_model.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "item_models/row_filter.h"
#include "pages/caption_panel.h"
#include "runfolder/run_event.h"
#include "test_paths.h"
#include "pages/dataset_page.h"
#include "pages/suggestion_box.h"

using namespace ws;
using ojson = nlohmann::ordered_json;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

ojson readJson(const QString& path) { return ojson::parse(readAll(path).toStdString()); }

// Four rows: 0 and 2 with a suggestion (0 without a caption), 1 and 3 without.
QString writeDataset(const QTemporaryDir& dir) {
  const QString meta = dir.filePath("metadata.json");
  ojson doc = ojson::array();
  doc.push_back({{"file_path", "a.mp4"}, {"text", ""}, {"type", "video"}, {"text_suggested", "a red ball rolls"}});
  doc.push_back({{"file_path", "b.mp4"}, {"text", "a blue cube"}, {"type", "video"}});
  doc.push_back({{"file_path", "c.mp4"},
                 {"text", "old caption"},
                 {"type", "video"},
                 {"zz_source", "camera A"},
                 {"text_suggested", "a green cone spins slowly"}});
  doc.push_back({{"file_path", "d.mp4"}, {"text", "a yellow disc"}, {"type", "video"}});
  QFile f(meta);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
  f.write(QByteArray::fromStdString(doc.dump(2)));
  return meta;
}

// The engine's demo dataset in `dir`/data, its metadata changed by `edit`; its path, or "" on failure.
QString writeDemoData(const QTemporaryDir& dir, const std::function<void(ojson&)>& edit) {
  QProcess p;
  p.start(WS_ENGINE_EXE, {"demo-data", dir.path() + "/data"});
  if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
  const QString meta = dir.path() + "/data/metadata.json";
  ojson doc = readJson(meta);
  edit(doc);
  QFile f(meta);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
  f.write(QByteArray::fromStdString(doc.dump(2)));
  return meta;
}

// A fresh folder holding writeDataset's rows, and a dataset page to open them on.
struct OpenDataset {
  QTemporaryDir dir;
  QString meta = writeDataset(dir);
  DatasetPage page;
  OpenDataset() { page.setAskBeforeDiscard(false); }
};

// A stand-in for `wanstudio-engine caption`: the events it prints, then (with `waitForCancel`) a
// wait for the `cancel` line on stdin, as the verb stops.
QString writeFakeEngine(const QTemporaryDir& dir, bool waitForCancel) {
  const QString path = dir.filePath(waitForCancel ? "fake-engine-cancel.sh" : "fake-engine.sh");
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
  QByteArray script =
      "#!/bin/sh\n"
      "echo '{\"type\":\"caption_started\",\"time\":1,\"rows\":2,\"of\":4}'\n"
      "echo '{\"type\":\"caption\",\"time\":1,\"row\":3,\"file_path\":\"d.mp4\","
      "\"text_suggested\":\"a yellow disc from the job\",\"frames\":4}'\n"
      "echo '{\"type\":\"progress\",\"time\":1,\"task\":\"caption\",\"done\":1,\"total\":2}'\n";
  script += waitForCancel ? "read line\n"
                            "echo '{\"type\":\"finished\",\"time\":2,\"status\":\"cancelled\"}'\nexit 130\n"
                          : "echo '{\"type\":\"finished\",\"time\":2,\"status\":\"completed\"}'\n";
  f.write(script);
  f.close();
  f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
  return path;
}

RunEvent eventLine(const char* line) {
  const auto ev = parseEventLine(QByteArrayView(line));
  return ev ? *ev : RunEvent{};
}

}  // namespace

class TestCaptionSuggestions : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // the captioner's QSettings go to a test location
    QCoreApplication::setApplicationName(QStringLiteral("wanstudio-test"));
  }

  void shows_the_suggestion_only_for_rows_with_one() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    page.show();
    QVERIFY(page.openDataset(meta));
    SuggestionBox* box = page.suggestion();
    QCOMPARE(page.currentRow(), 0);
    QVERIFY(box->isVisible());
    QCOMPARE(box->text()->toPlainText(), QStringLiteral("a red ball rolls"));
    QVERIFY(box->text()->isReadOnly());
    page.selectRow(1);
    QVERIFY(!box->isVisible());
    QVERIFY(!box->accept() && !box->reject());  // nothing to review: no edit
    QVERIFY(!page.model()->isModified());
    page.selectRow(2);
    QVERIFY(box->isVisible());
    QCOMPARE(box->text()->toPlainText(), QStringLiteral("a green cone spins slowly"));
    // The grid marks the rows to review, in its text and for a screen reader.
    DatasetModel* m = page.model();
    QCOMPARE(m->suggestionCount(), 2);
    QVERIFY(m->index(0).data(Qt::DisplayRole).toString().contains(QStringLiteral("✎")));
    QVERIFY(!m->index(1).data(Qt::DisplayRole).toString().contains(QStringLiteral("✎")));
    QVERIFY(m->index(2).data(Qt::AccessibleTextRole).toString().contains(QStringLiteral("suggested caption")));
    // Accessible names of every control of the box.
    QCOMPARE(box->text()->accessibleName(), QStringLiteral("Suggested caption"));
    QCOMPARE(box->acceptButton()->accessibleName(), QStringLiteral("Accept"));
    QCOMPARE(box->editButton()->accessibleName(), QStringLiteral("Edit"));
    QCOMPARE(box->rejectButton()->accessibleName(), QStringLiteral("Reject"));
    QVERIFY(box->acceptButton()->toolTip().contains(
        QKeySequence(Qt::CTRL | Qt::Key_Return).toString(QKeySequence::NativeText)));
  }

  void accept_and_reject_are_saved_with_a_backup() {
    QTemporaryDir dir;
    const QString meta = writeDataset(dir);
    const QByteArray before = readAll(meta);
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    page.show();
    QVERIFY(page.openDataset(meta));
    DatasetModel* m = page.model();
    // Accept on row 0: the caption editor shows it, the row is an unsaved edit.
    QVERIFY(page.suggestion()->accept());
    QCOMPARE(page.captionEditor()->toPlainText(), QStringLiteral("a red ball rolls"));
    QVERIFY(m->isModified());
    QVERIFY(m->suggestion(0).isEmpty());
    QVERIFY(!page.suggestion()->isVisible());
    QCOMPARE(readAll(meta), before);  // written by Save, like every caption edit
    // Reject on row 2: the caption stays.
    page.selectRow(2);
    QVERIFY(page.suggestion()->reject());
    QCOMPARE(page.captionEditor()->toPlainText(), QStringLiteral("old caption"));
    QVERIFY(page.save());
    QCOMPARE(readAll(meta + ".bak"), before);
    const ojson now = readJson(meta);
    QCOMPARE(now[0]["text"].get<std::string>(), std::string("a red ball rolls"));
    QVERIFY(!now[0].contains("text_suggested"));
    QCOMPARE(now[2]["text"].get<std::string>(), std::string("old caption"));
    QVERIFY(!now[2].contains("text_suggested"));
    QCOMPARE(now[2]["zz_source"].get<std::string>(), std::string("camera A"));
    QCOMPARE(QString::fromStdString(now[1].dump()), QString::fromStdString(readJson(meta + ".bak")[1].dump()));
  }

  void an_unrelated_save_keeps_the_suggestions() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    QVERIFY(page.openDataset(meta));
    page.selectRow(1);
    page.captionEditor()->setPlainText(QStringLiteral("a blue cube, edited"));
    QVERIFY(page.save());
    const ojson now = readJson(meta);
    QCOMPARE(now[0]["text_suggested"].get<std::string>(), std::string("a red ball rolls"));
    QCOMPARE(now[2]["text_suggested"].get<std::string>(), std::string("a green cone spins slowly"));
    // Revert brings a rejected suggestion back until saved.
    page.selectRow(2);
    QVERIFY(page.suggestion()->reject());
    page.revert();
    QCOMPARE(page.model()->suggestion(2), QStringLiteral("a green cone spins slowly"));
  }

  void edit_accepts_and_focuses_the_caption_editor() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    page.show();
    QVERIFY(QTest::qWaitForWindowActive(&page));
    QVERIFY(page.openDataset(meta));
    page.selectRow(2);
    QVERIFY(page.suggestion()->acceptAndEdit());
    QCOMPARE(page.captionEditor()->toPlainText(), QStringLiteral("a green cone spins slowly"));
    QTRY_VERIFY(page.captionEditor()->hasFocus());
    QTest::keyClicks(page.captionEditor(), QStringLiteral(", at dusk"));
    QCOMPARE(page.model()->index(2).data(DatasetModel::CaptionRole).toString(),
             QStringLiteral("a green cone spins slowly, at dusk"));
  }

  void filter_keeps_rows_with_a_suggestion() {
    QVERIFY(!RowFilter(QStringLiteral("?")).empty());
    QVERIFY(RowFilter(QStringLiteral("?")).matches([](const QString&) { return 0.0; }, {}, false, true));
    QVERIFY(!RowFilter(QStringLiteral("?")).matches([](const QString&) { return 0.0; }, {}, false, false));
    OpenDataset o;
    auto& [dir, meta, page] = o;
    QVERIFY(page.openDataset(meta));
    page.filter()->setText(QStringLiteral("?"));
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(page.grid()->model());
    QVERIFY(proxy);
    QCOMPARE(proxy->rowCount(), 2);
    QCOMPARE(proxy->mapToSource(proxy->index(0, 0)).row(), 0);
    QCOMPARE(proxy->mapToSource(proxy->index(1, 0)).row(), 2);
    page.filter()->setText(QStringLiteral("? and old"));
    QCOMPARE(proxy->rowCount(), 1);
    // A suggestion arriving while the filter is on (the caption job) shows its row.
    page.filter()->setText(QStringLiteral("?"));
    QVERIFY(page.model()->setSuggestion(3, QStringLiteral("a yellow disc on sand")));
    QVERIFY(!page.model()->isModified());  // the job writes it: not an edit of the page
    QCOMPARE(proxy->rowCount(), 3);
  }

  void shortcuts_accept_and_reject_from_the_grid() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    page.show();
    QVERIFY(QTest::qWaitForWindowActive(&page));
    QVERIFY(page.openDataset(meta));
    page.grid()->setFocus();
    QTRY_VERIFY(page.grid()->hasFocus());
    QTest::keyClick(page.grid(), Qt::Key_Return, Qt::ControlModifier);
    // A button's shortcut clicks it as a short animation: the edit follows a moment later.
    QTRY_COMPARE(page.model()->index(0).data(DatasetModel::CaptionRole).toString(), QStringLiteral("a red ball rolls"));
    QVERIFY(page.model()->suggestion(0).isEmpty());
    // Down to the next rows as the grid always does; Ctrl+Backspace rejects row 2's.
    page.selectRow(2);
    page.grid()->setFocus();
    QTest::keyClick(page.grid(), Qt::Key_Backspace, Qt::ControlModifier);
    QTRY_VERIFY(page.model()->suggestion(2).isEmpty());
    QCOMPARE(page.model()->index(2).data(DatasetModel::CaptionRole).toString(), QStringLiteral("old caption"));
    // Without a suggestion the keys do nothing (the box and its shortcuts are hidden).
    page.selectRow(1);
    page.grid()->setFocus();
    QTest::keyClick(page.grid(), Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(!page.suggestion()->acceptButton()->isVisible());  // a hidden button's shortcut is off
    QCOMPARE(page.model()->index(1).data(DatasetModel::CaptionRole).toString(), QStringLiteral("a blue cube"));
    QVERIFY(page.save());
    const ojson now = readJson(meta);
    QVERIFY(!now[0].contains("text_suggested") && !now[2].contains("text_suggested"));
  }

  void captioner_events_set_suggestions_beside_edits() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    QVERIFY(page.openDataset(meta));
    CaptionPanel* panel = page.captioner();
    for (QWidget* w : std::initializer_list<QWidget*>{panel->endpoint(), panel->modelName(), panel->prompt(),
                                                      panel->selectedButton(), panel->uncaptionedButton(),
                                                      panel->cancelButton(), panel->progress()})
      QVERIFY2(!w->accessibleName().isEmpty(), w->metaObject()->className());
    panel->backend()->setCurrentIndex(int(CaptionPanel::Backend::Server));
    panel->endpoint()->setText(QStringLiteral("http://127.0.0.1:9/v1"));
    panel->modelName()->setText(QStringLiteral("tiny-vl"));
    panel->prompt()->setPlainText(QStringLiteral("Describe {file_name}"));
    const QStringList a = panel->arguments({1, 3});
    QCOMPARE(a.mid(0, 3), (QStringList{"caption", "--metadata", meta}));
    QVERIFY(a.join(' ').contains(QStringLiteral("--endpoint http://127.0.0.1:9/v1 --model tiny-vl --rows 1,3")));
    QVERIFY(a.endsWith(QStringLiteral("Describe {file_name}")));
    QVERIFY(!panel->arguments({}).contains(QStringLiteral("--rows")));
    // A caption typed on the page meanwhile stays; the suggestion lands beside it.
    page.selectRow(1);
    page.captionEditor()->setPlainText(QStringLiteral("typed while the job runs"));
    panel->applyEvent(
        eventLine(R"({"type":"caption","time":1,"row":1,"file_path":"b.mp4","text_suggested":"a cube"})"));
    QCOMPARE(page.model()->suggestion(1), QStringLiteral("a cube"));
    QCOMPARE(page.model()->index(1).data(DatasetModel::CaptionRole).toString(),
             QStringLiteral("typed while the job runs"));
    QVERIFY(page.suggestion()->isVisible() || !page.isVisible());
    // A row whose place moved is found by its file.
    panel->applyEvent(
        eventLine(R"({"type":"caption","time":1,"row":0,"file_path":"d.mp4","text_suggested":"a disc"})"));
    QCOMPARE(page.model()->suggestion(3), QStringLiteral("a disc"));
    QCOMPARE(page.model()->suggestion(0), QStringLiteral("a red ball rolls"));
    panel->applyEvent(eventLine(R"({"type":"progress","time":1,"task":"caption","done":3,"total":4})"));
    QCOMPARE(panel->progress()->maximum(), 4);
    QCOMPARE(panel->progress()->value(), 3);
    // Saved, the typed caption and the suggestions are in the file.
    QVERIFY(page.save());
    const ojson now = readJson(meta);
    QCOMPARE(now[1]["text"].get<std::string>(), std::string("typed while the job runs"));
    QCOMPARE(now[1]["text_suggested"].get<std::string>(), std::string("a cube"));
    QCOMPARE(now[3]["text_suggested"].get<std::string>(), std::string("a disc"));
  }

  void captioner_runs_a_worker_and_cancels_it() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    QVERIFY(page.openDataset(meta));
    CaptionPanel* panel = page.captioner();
    panel->backend()->setCurrentIndex(int(CaptionPanel::Backend::Server));
    panel->endpoint()->setText(QStringLiteral("http://127.0.0.1:9/v1"));
    panel->modelName()->setText(QStringLiteral("tiny-vl"));
    QString error;
    panel->modelName()->clear();
    QVERIFY(!panel->start({}, &error) && !error.isEmpty());  // no model named
    panel->modelName()->setText(QStringLiteral("tiny-vl"));
    // Unsaved edits are written first: the job picks rows by their place in the file.
    page.selectRow(1);
    page.captionEditor()->setPlainText(QStringLiteral("saved before the job"));
    panel->setProgram(writeFakeEngine(dir, false));
    QSignalSpy done(panel, &CaptionPanel::captioningFinished);
    QVERIFY2(panel->start({}, &error), qPrintable(error));
    QVERIFY(!page.model()->isModified());
    QVERIFY(readJson(meta)[1]["text"] == "saved before the job");
    QVERIFY(!panel->uncaptionedButton()->isEnabled() && panel->cancelButton()->isEnabled());
    QVERIFY(done.wait(20000));
    QCOMPARE(done.first().first().value<JobResult>().state, RunState::Completed);
    QCOMPARE(page.model()->suggestion(3), QStringLiteral("a yellow disc from the job"));
    QVERIFY(panel->uncaptionedButton()->isEnabled() && !panel->cancelButton()->isEnabled());
    // Cancel: the `cancel` line the worker waits for.
    panel->setProgram(writeFakeEngine(dir, true));
    done.clear();
    QVERIFY(panel->start({2}, &error));
    QTRY_COMPARE_WITH_TIMEOUT(panel->progress()->value(), 1, 20000);
    panel->cancelButton()->click();
    QVERIFY(done.wait(20000));
    QCOMPARE(done.first().first().value<JobResult>().state, RunState::Cancelled);
  }

  // The engine's own Qwen2.5-VL (the parity test's tiny random model) captions the demo dataset's
  // rows without a caption through the panel; a suggestion is then accepted and one rejected.
  void captioner_runs_qwen_in_the_engine() {
    QTemporaryDir dir;
    const QString meta = writeDemoData(dir, [](ojson& doc) { doc[1]["text"] = doc[3]["text"] = ""; });
    QVERIFY(!meta.isEmpty());
    const ojson doc = readJson(meta);
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    QVERIFY(page.openDataset(meta));
    CaptionPanel* panel = page.captioner();
    for (QWidget* w : std::initializer_list<QWidget*>{panel->backend(), panel->modelPath(), panel->device()})
      QVERIFY2(!w->accessibleName().isEmpty(), w->metaObject()->className());
    panel->backend()->setCurrentIndex(int(CaptionPanel::Backend::Engine));
    QString error;
    panel->modelPath()->setText(dir.path());  // no config.json there
    QVERIFY(!panel->start({}, &error) && error.contains(QStringLiteral("config.json")));
    panel->modelPath()->setText(QStringLiteral(WS_TEST_DATA "/qwen_vl"));
    panel->device()->setCurrentText(QStringLiteral("cpu"));
    panel->prompt()->setPlainText(QStringLiteral("Describe {file_name}."));
    const QString args = panel->arguments({}).join(' ');
    QVERIFY2(args.contains(QStringLiteral("--model_path " WS_TEST_DATA "/qwen_vl --device cpu")), qPrintable(args));
    QVERIFY(!args.contains(QStringLiteral("--endpoint")));
    panel->setProgram(QStringLiteral(WS_ENGINE_EXE));
    QSignalSpy done(panel, &CaptionPanel::captioningFinished);
    QVERIFY2(panel->start({}, &error), qPrintable(error));
    QVERIFY(done.wait(120000));
    QCOMPARE(done.first().first().value<JobResult>().state, RunState::Completed);
    QVERIFY(!page.model()->suggestion(1).isEmpty() && !page.model()->suggestion(3).isEmpty());
    QVERIFY(page.model()->suggestion(0).isEmpty() && page.model()->suggestion(2).isEmpty());
    // The job wrote them into the file, captions untouched.
    ojson now = readJson(meta);
    QCOMPARE(QString::fromStdString(now[1]["text_suggested"].get<std::string>()), page.model()->suggestion(1));
    QCOMPARE(now[0]["text"], doc[0]["text"]);
    // Accept row 1's, reject row 3's: saved with a backup.
    const QString accepted = page.model()->suggestion(1);
    page.selectRow(1);
    QVERIFY(page.suggestion()->accept());
    page.selectRow(3);
    QVERIFY(page.suggestion()->reject());
    QVERIFY(page.save());
    now = readJson(meta);
    QCOMPARE(QString::fromStdString(now[1]["text"].get<std::string>()), accepted);
    QVERIFY(!now[1].contains("text_suggested") && !now[3].contains("text_suggested"));
    QCOMPARE(now[3]["text"].get<std::string>(), std::string());
    QVERIFY(QFileInfo::exists(meta + QStringLiteral(".bak")));
  }

  // With the engine's model, a caption job waits behind a worker the studio runs (they would share
  // the device) and starts when it ends; Cancel takes a waiting job out. A server job never waits.
  void engine_caption_waits_for_training() {
    OpenDataset o;
    auto& [dir, meta, page] = o;
    QVERIFY(page.openDataset(meta));
    CaptionPanel* panel = page.captioner();
    JobManager jobs;
    panel->setJobManager(&jobs);
    panel->backend()->setCurrentIndex(int(CaptionPanel::Backend::Engine));
    panel->modelPath()->setText(QStringLiteral(WS_TEST_DATA "/qwen_vl"));
    panel->setProgram(writeFakeEngine(dir, false));
    // A stand-in training worker that runs until told to stop.
    auto* training = new WorkerJob;
    training->setProgram(QStringLiteral("/bin/sh"));
    training->setArguments({QStringLiteral("-c"), QStringLiteral("read line")});
    QSignalSpy trainingStarted(training, &WorkerJob::started);
    jobs.addJob(training);
    QVERIFY(trainingStarted.wait(10000));  // its process runs: the cancel below reaches it
    QString error;
    QVERIFY2(panel->start({}, &error), qPrintable(error));
    QVERIFY(panel->queued() && !panel->job());
    QVERIFY(panel->status()->text().startsWith(QStringLiteral("Queued")));
    QVERIFY(!panel->uncaptionedButton()->isEnabled() && panel->cancelButton()->isEnabled());
    QVERIFY(!panel->start({}, &error) && error.contains(QStringLiteral("queued")));
    // Cancel while waiting: nothing started.
    panel->cancelButton()->click();
    QVERIFY(!panel->queued() && !panel->job() && panel->uncaptionedButton()->isEnabled());
    // Queued again; the training ends; the caption job runs to its end.
    QVERIFY(panel->start({}, &error));
    QSignalSpy done(panel, &CaptionPanel::captioningFinished);
    training->cancel();
    QVERIFY2(done.wait(20000), qPrintable(panel->status()->text()));
    QCOMPARE(done.first().first().value<JobResult>().state, RunState::Completed);
    QVERIFY(!panel->queued());
    QCOMPARE(page.model()->suggestion(3), QStringLiteral("a yellow disc from the job"));
    // The server backend does not wait.
    auto* again = new WorkerJob;
    again->setProgram(QStringLiteral("/bin/sh"));
    again->setArguments({QStringLiteral("-c"), QStringLiteral("read line")});
    QSignalSpy againStarted(again, &WorkerJob::started);
    jobs.addJob(again);
    QVERIFY(againStarted.wait(10000));
    panel->backend()->setCurrentIndex(int(CaptionPanel::Backend::Server));
    panel->endpoint()->setText(QStringLiteral("http://127.0.0.1:9/v1"));
    panel->modelName()->setText(QStringLiteral("tiny-vl"));
    done.clear();
    QVERIFY(panel->start({}, &error));
    QVERIFY(!panel->queued() && panel->job());
    QVERIFY(done.wait(20000));
    again->cancel();
    QTRY_VERIFY(jobs.liveJobs().isEmpty());
  }

  // WS_SCREENSHOT_DIR set: the page as the README shows it (docs/screenshots/caption-suggestions.png),
  // on the demo data with suggestions on three rows.
  void screenshot_for_the_readme() {
    const QString shots = qEnvironmentVariable("WS_SCREENSHOT_DIR");
    if (shots.isEmpty()) return;
    QTemporaryDir dir;
    const QString meta = writeDemoData(dir, [](ojson& doc) {
      // What a model might answer: the row's own caption said another way.
      for (size_t i = 1; i < 4 && i < doc.size(); ++i) {
        QString t = QString::fromStdString(doc[i]["text"].get<std::string>());
        if (!t.isEmpty()) t[0] = t[0].toLower();
        doc[i]["text_suggested"] = ("A short, evenly lit clip: " + t + " Flat colours, no people.").toStdString();
      }
    });
    QVERIFY(!meta.isEmpty());
    DatasetPage page;
    page.setAskBeforeDiscard(false);
    page.resize(1400, 860);
    page.show();
    QVERIFY(page.openDataset(meta));
    page.selectRow(1);
    QTRY_VERIFY_WITH_TIMEOUT(!page.model()->thumbnail(1).isNull() && !page.model()->thumbnail(4).isNull(), 30000);
    page.refreshCurrent();
    QVERIFY(page.suggestion()->isVisible());
    QVERIFY(page.grab().save(shots + QStringLiteral("/caption-suggestions.png"), "PNG"));
    // The Captioner tab with the engine's own model chosen.
    auto* tabs = page.findChild<QTabWidget*>();
    QVERIFY(tabs);
    tabs->setCurrentWidget(page.captioner());
    page.captioner()->backend()->setCurrentIndex(int(CaptionPanel::Backend::Engine));
    page.captioner()->modelPath()->setText(QStringLiteral("/models/Qwen2.5-VL-7B-Instruct"));
    page.captioner()->device()->setCurrentText(QStringLiteral("auto"));
    page.captioner()->prompt()->clear();
    QApplication::processEvents();
    QVERIFY(page.grab().save(shots + QStringLiteral("/captioner-engine.png"), "PNG"));
  }
};

QTEST_MAIN(TestCaptionSuggestions)
#include "test_caption_suggestions.moc"
