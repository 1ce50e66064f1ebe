// SPDX-License-Identifier: Apache-2.0
// The first hour without a mouse, against the real worker: F1 to the start page, a caption edited
// and saved with Ctrl+S, New Run with Ctrl+N (the job, preset and run name through their
// mnemonics, options found with Ctrl+F and typed after Tab, Alt+S to start), Save Now with
// Ctrl+Shift+S, Cancel and Resume from the Run menu opened with Alt+R, and the validation player
// played with Space.
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <functional>

#include "config_form.h"
#include "dialogs/new_run_dialog.h"
#include "item_models/dataset_model.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "main_window.h"
#include "option_editor.h"
#include "pages/dataset_page.h"
#include "pages/start_page.h"
#include "pages/run_page.h"
#include "pages/validation_view.h"
#include "playback_clock.h"
#include "runfolder/run_events.h"
#include "real_worker.h"
#include "test_paths.h"
#include "video_compare_view.h"

using namespace ws;

namespace {

// A key as the user presses it: to whatever has the keyboard focus.
void press(int key, Qt::KeyboardModifiers mods = Qt::NoModifier) {
  QWidget* target = QApplication::focusWidget();
  if (!target) target = QApplication::activeWindow();
  QVERIFY2(target, "no window has the keyboard");
  QTest::keyClick(target, Qt::Key(key), mods);
}

void type(const QString& text) {
  QWidget* target = QApplication::focusWidget();
  QVERIFY2(target, "nothing has the keyboard focus");
  QTest::keyClicks(target, text);
}

QString focusName() {
  QWidget* f = QApplication::focusWidget();
  return f ? QStringLiteral("%1 '%2'").arg(QLatin1String(f->metaObject()->className()), f->accessibleName())
           : QStringLiteral("nothing");
}

// Alt+R opens the Run menu; the item is chosen by its underlined letter.
void runMenu(QWidget* window, int letter) {
  // The offscreen platform does not hand the keyboard back to the window when a menu closes, as a
  // window manager would.
  QApplication::setActiveWindow(window);
  press(Qt::Key_R, Qt::AltModifier);
  QTRY_VERIFY_WITH_TIMEOUT(qobject_cast<QMenu*>(QApplication::activePopupWidget()), 5000);
  QTest::keyClick(QApplication::activePopupWidget(), Qt::Key(letter));
  QTRY_VERIFY_WITH_TIMEOUT(!QApplication::activePopupWidget(), 5000);
}

}  // namespace

class TestKeyboardJourney : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString ws_, meta_;

  // In New Run: Ctrl+F, the option's key, Tab to its field, the value typed over the old one.
  void typeOption(NewRunDialog* dlg, const QString& key, const QString& value) {
    press(Qt::Key_F, Qt::ControlModifier);
    QVERIFY2(QApplication::focusWidget() && QApplication::focusWidget()->accessibleName() == "Filter options",
             qPrintable(focusName()));
    type(key);
    // Tab through the fields the filter kept (an option whose help names the key is kept too).
    QWidget* input = dlg->form()->editor(key)->input();
    for (int i = 0; i < 4 && QApplication::focusWidget() != input && !input->isAncestorOf(QApplication::focusWidget());
         ++i)
      press(Qt::Key_Tab);
    QVERIFY2(QApplication::focusWidget() == input || input->isAncestorOf(QApplication::focusWidget()),
             qPrintable(key + QStringLiteral(": the focus is on ") + focusName()));
    press(Qt::Key_A, Qt::ControlModifier);
    type(value);
    QCOMPARE(dlg->form()->value(key).toString(), value);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    QStandardPaths::setTestModeEnabled(true);
    ws_ = tmp_.filePath(QStringLiteral("workspace"));
    QVERIFY(QDir().mkpath(ws_));
    const QString data = tmp_.filePath(QStringLiteral("data"));
    meta_ = test::setUpRealWorker(data);
    if (meta_.isEmpty()) QFAIL("wanstudio-engine is not built, or its demo-data failed");
  }

  // Alt+letter reaches every menu, and a letter inside a menu one item: a letter two items share
  // only moves between them.
  void menuLettersAreUnique() {
    MainWindow w(ws_, 120'000);
    QStringList clashes;
    QHash<QKeySequence, QString> menus;
    for (QAction* m : w.menuBar()->actions()) {
      const QKeySequence key = QKeySequence::mnemonic(m->text());
      if (menus.contains(key)) clashes << m->text() + QStringLiteral(" / ") + menus[key];
      menus.insert(key, m->text());
      if (!m->menu()) continue;
      QHash<QKeySequence, QString> items;
      for (QAction* a : m->menu()->actions()) {
        const QKeySequence k = QKeySequence::mnemonic(a->text());
        if (k.isEmpty()) continue;
        if (items.contains(k)) clashes << a->text() + QStringLiteral(" / ") + items[k];
        items.insert(k, a->text());
      }
    }
    QVERIFY2(clashes.isEmpty(), qPrintable(clashes.join('\n')));
  }

  void theFirstHourByKeyboard() {
    MainWindow w(ws_, 120'000);
    w.resize(1280, 720);
    w.show();
    QApplication::setActiveWindow(&w);
    QVERIFY(QTest::qWaitForWindowActive(&w));
    test::KillLeftWorkers killLeft{w};

    // F1: Getting Started, the start page.
    w.showPage(w.runPage());
    QVERIFY(!w.startPage()->isVisible());
    press(Qt::Key_F1);
    QVERIFY(w.startPage()->isVisible());

    // A caption typed and saved with Ctrl+S.
    QVERIFY(w.openDataset(meta_, false));
    w.showPage(w.datasetPage());
    DatasetPage* d = w.datasetPage();
    d->selectRow(0);
    d->captionEditor()->setFocus(Qt::TabFocusReason);
    press(Qt::Key_End, Qt::ControlModifier);
    type(QStringLiteral(" typed"));
    QVERIFY(d->model()->isModified());
    press(Qt::Key_S, Qt::ControlModifier);
    // A button's shortcut clicks it as a short animation: the save follows a moment later.
    QTRY_VERIFY2_WITH_TIMEOUT(!d->model()->isModified(), qPrintable(d->status()->text()), 5000);
    QFile saved(meta_);
    QVERIFY(saved.open(QIODevice::ReadOnly) && saved.readAll().contains(" typed"));

    // New Run from the keyboard alone.
    QString problem;
    const QString name = QStringLiteral("keys");
    auto* timer = new QTimer(&w);
    timer->setInterval(20);
    connect(timer, &QTimer::timeout, this, [&, timer] {
      auto* dlg = qobject_cast<NewRunDialog*>(QApplication::activeModalWidget());
      if (!dlg || !dlg->isVisible()) return;
      timer->stop();
      [&] {
        QApplication::setActiveWindow(dlg);
        QVERIFY(QTest::qWaitForWindowActive(dlg));
        press(Qt::Key_J, Qt::AltModifier);
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(dlg->jobCombo()));
        QCOMPARE(dlg->job(), QStringLiteral("upsampler"));
        press(Qt::Key_P, Qt::AltModifier);
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(dlg->presetCombo()));
        type(QStringLiteral("demo-up"));  // a combo box finds the item as you type
        QCOMPARE(dlg->presetCombo()->currentText(), QStringLiteral("demo-upsampler.yaml"));
        press(Qt::Key_N, Qt::AltModifier);
        QCOMPARE(QApplication::focusWidget(), static_cast<QWidget*>(dlg->runNameEdit()));
        press(Qt::Key_A, Qt::ControlModifier);
        type(name);
        typeOption(dlg, QStringLiteral("video_sample_size"), QStringLiteral("64"));
        typeOption(dlg, QStringLiteral("video_sample_n_frames"), QStringLiteral("5"));
        typeOption(dlg, QStringLiteral("max_train_steps"), QStringLiteral("100000"));
        typeOption(dlg, QStringLiteral("checkpointing_steps"), QStringLiteral("100000"));
        typeOption(dlg, QStringLiteral("validation_steps"), QStringLiteral("3"));
        typeOption(dlg, QStringLiteral("dataloader_num_workers"), QStringLiteral("0"));
        QVERIFY2(dlg->problems().isEmpty(), qPrintable(dlg->problems().join('\n')));
        press(Qt::Key_S, Qt::AltModifier);  // &Start Run, clicked a moment later (the button's animation)
        QTRY_VERIFY_WITH_TIMEOUT(!dlg->isVisible(), 5000);
      }();
      if (dlg->isVisible()) {
        problem = QStringLiteral("New Run is still open; the focus is on ") + focusName();
        dlg->reject();
      }
    });
    timer->start();
    press(Qt::Key_N, Qt::ControlModifier);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const QString run = JobManager::normalizedPath(QDir(ws_).filePath(name));
    QTRY_VERIFY_WITH_TIMEOUT(w.jobs()->liveJobForRun(run), 10'000);
    QApplication::setActiveWindow(&w);
    QVERIFY(QTest::qWaitForWindowActive(&w));

    // Save Now (Ctrl+Shift+S) once a validation render is out; Cancel and Resume from the Run menu.
    QTRY_VERIFY_WITH_TIMEOUT(test::eventCount(run, "validation") >= 1, 60'000);
    press(Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
    QTRY_VERIFY_WITH_TIMEOUT(test::eventCount(run, "checkpoint") >= 1, 60'000);
    runMenu(&w, Qt::Key_C);  // &Cancel Run
    QTRY_VERIFY_WITH_TIMEOUT(!w.jobs()->liveJobForRun(run), 120'000);
    runMenu(&w, Qt::Key_R);  // &Resume Run
    QTRY_VERIFY_WITH_TIMEOUT(test::eventCount(run, "started") == 2, 60'000);
    runMenu(&w, Qt::Key_C);
    QTRY_VERIFY_WITH_TIMEOUT(!w.jobs()->liveJobForRun(run), 120'000);

    // The validation player plays and pauses with Space.
    QVERIFY(w.runPage()->showTab(QStringLiteral("validation")));
    VideoCompareView* player = w.runPage()->validationView()->player();
    QTRY_VERIFY_WITH_TIMEOUT(!player->videos().isEmpty() && player->clock()->frameCount() > 1, 20'000);
    QApplication::setActiveWindow(&w);
    QVERIFY(QTest::qWaitForWindowActive(&w));
    const bool was = player->clock()->isPlaying();
    press(Qt::Key_Space);
    QTRY_COMPARE_WITH_TIMEOUT(player->clock()->isPlaying(), !was, 5000);
    press(Qt::Key_Space);
    QTRY_COMPARE_WITH_TIMEOUT(player->clock()->isPlaying(), was, 5000);
  }
};

QTEST_MAIN(TestKeyboardJourney)
#include "test_keyboard_journey.moc"
