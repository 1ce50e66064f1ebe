// SPDX-License-Identifier: Apache-2.0
// The whole journey of a session in the studio, again and again in one window, against the real
// worker: open a dataset, scrub clips, open and cancel file dialogs, New Run (prefilled from the
// dataset) and Start, Save Now, Cancel, Resume, Cancel, the run's validation player, Compare of
// two kept validation renders and of two checkpoints, the loss overlay. Lifetime and threading
// defects (a frame thread delivering to a deleted widget, a dialog's dangling pointer) show up
// here, and under packaging/sanitize.sh (ASan + UBSan) as a report. WS_SOAK_ROUNDS sets the
// number of rounds (default 20).
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <functional>

#include "dialogs/new_run_dialog.h"
#include "item_models/runs_model.h"
#include "jobs/job_manager.h"
#include "jobs/worker_job.h"
#include "main_window.h"
#include "pages/compare_page.h"
#include "pages/dataset_page.h"
#include "pages/loss_overlay.h"
#include "pages/run_page.h"
#include "pages/trim_bar.h"
#include "pages/validation_view.h"
#include "runfolder/run_events.h"
#include "real_worker.h"
#include "test_paths.h"
#include "video_compare_view.h"

using namespace ws;

namespace {

// Acts on the next modal widget of type T once it is up: exec() blocks whoever opened it.
template <class T>
void onNextModal(std::function<void(T*)> act) {
  auto* timer = new QTimer;
  timer->setInterval(20);
  QObject::connect(timer, &QTimer::timeout, [timer, act] {
    auto* w = qobject_cast<T*>(QApplication::activeModalWidget());
    if (!w || !w->isVisible()) return;
    timer->stop();
    timer->deleteLater();
    act(w);
  });
  timer->start();
}

// The end of a run's events and log, for a failure message.
QString lastLines(const QString& runDir) {
  QString out;
  for (const char* name : {"events.jsonl", "logs/engine.log", "run.yaml"}) {
    QFile f(QDir(runDir).filePath(QLatin1String(name)));
    if (f.open(QIODevice::ReadOnly))
      out += QStringLiteral("\n== %1\n").arg(QLatin1String(name)) + QString::fromUtf8(f.readAll().right(1500));
  }
  return out;
}

QAction* menuAction(QWidget* w, const QString& text) {
  for (QAction* a : w->findChildren<QAction*>())
    if (a->text() == text) return a;
  return nullptr;
}

// One value of a run YAML, replaced in place.
void setYamlValue(QString& yaml, const char* key, const QString& value) {
  const QRegularExpression re(QStringLiteral("^%1:.*$").arg(QLatin1String(key)), QRegularExpression::MultilineOption);
  if (yaml.contains(re)) yaml.replace(re, QStringLiteral("%1: %2").arg(QLatin1String(key), value));
  else yaml += QStringLiteral("\n%1: %2\n").arg(QLatin1String(key), value);
}

}  // namespace

class TestJourneySoak : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString ws_, meta_, clip_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    QStandardPaths::setTestModeEnabled(true);
    ws_ = tmp_.filePath(QStringLiteral("workspace"));
    QVERIFY(QDir().mkpath(ws_));
    const QString data = tmp_.filePath(QStringLiteral("data"));
    meta_ = test::setUpRealWorker(data);
    if (meta_.isEmpty()) QFAIL("wanstudio-engine is not built, or its demo-data failed");
    clip_ = data + QStringLiteral("/videos/clip_00.mp4");
    QVERIFY(QFileInfo::exists(clip_));
  }

  void theWholeJourneyRepeated() {
    const int rounds =
        qEnvironmentVariableIsSet("WS_SOAK_ROUNDS") ? qEnvironmentVariableIntValue("WS_SOAK_ROUNDS") : 20;
    MainWindow w(ws_, 120'000);
    w.resize(1280, 720);
    w.show();
    w.runPage()->setConfirmKill(false);
    // Workers outlive the studio by design: a failed check must not leave one training.
    test::KillLeftWorkers killLeft{w};
    QElapsedTimer clock;
    clock.start();
    QString previousRun;
    for (int round = 0; round < rounds; ++round) {
      // A dataset, a clip scrubbed on the trim bar's frame thread.
      QVERIFY(w.openDataset(meta_, false));
      w.showPage(w.datasetPage());
      DatasetPage* d = w.datasetPage();
      d->selectRow(round % 4);
      QSignalSpy frames(d->trim(), &TrimBar::frameShown);
      QTRY_VERIFY_WITH_TIMEOUT(d->trim()->slider()->isEnabled() && d->trim()->slider()->maximum() > 2, 20'000);
      d->trim()->slider()->setValue(d->trim()->slider()->maximum() / 2);
      d->trim()->slider()->setValue(d->trim()->slider()->maximum());
      QTRY_VERIFY_WITH_TIMEOUT(!frames.isEmpty(), 20'000);
      d->selectRow((round + 1) % 4);  // away while frames may still be on their way
      // File dialogs opened and cancelled, twice.
      for (const char* text : {"Open &Dataset…", "Choose &Workspace…"}) {
        QAction* a = menuAction(&w, QString::fromUtf8(text));
        QVERIFY2(a, text);
        bool seen = false;
        onNextModal<QFileDialog>([&seen](QFileDialog* dlg) {
          seen = true;
          dlg->reject();
        });
        a->trigger();
        QVERIFY(seen);
      }
      // New Run, prefilled from the open dataset, made small, started.
      const QString name = QStringLiteral("soak-%1").arg(round);
      QString problem;
      onNextModal<NewRunDialog>([&](NewRunDialog* dlg) {
        if (!dlg->setJob(QStringLiteral("upsampler")) ||
            !dlg->selectPreset(test::configs() + QStringLiteral("/demo-upsampler.yaml"))) {
          problem =
              QStringLiteral("no upsampler schema or preset: %1").arg(dlg->schemaError(QStringLiteral("upsampler")));
          dlg->reject();
          return;
        }
        dlg->setRunName(name);
        QString yaml = dlg->yamlText();
        if (!yaml.contains(meta_)) problem = QStringLiteral("the form did not take the open dataset:\n") + yaml;
        setYamlValue(yaml, "video_sample_size", QStringLiteral("64"));
        setYamlValue(yaml, "video_sample_n_frames", QStringLiteral("5"));
        setYamlValue(yaml, "max_train_steps", QStringLiteral("100000"));
        setYamlValue(yaml, "checkpointing_steps", QStringLiteral("100000"));
        setYamlValue(yaml, "validation_steps", QStringLiteral("3"));
        setYamlValue(yaml, "dataloader_num_workers", QStringLiteral("0"));
        // The preset's validation clips (the demo's, not written here) became the dataset's.
        if (!yaml.contains(clip_)) problem += QStringLiteral("validation_paths not taken from the dataset:\n") + yaml;
        dlg->setYamlText(yaml);
        dlg->syncFormFromYaml();
        if (!dlg->problems().isEmpty()) {
          problem += dlg->problems().join('\n');
          dlg->reject();
          return;
        }
        dlg->accept();
      });
      menuAction(&w, QStringLiteral("&New Run…"))->trigger();
      QVERIFY2(problem.isEmpty(), qPrintable(problem));
      const QString run = JobManager::normalizedPath(QDir(ws_).filePath(name));
      QTRY_VERIFY_WITH_TIMEOUT(w.jobs()->liveJobForRun(run), 10'000);
      QCOMPARE(w.runPage()->runDir(), run);
      // Save Now once a validation render is written; Cancel; Resume; Cancel.
      QTRY_VERIFY2_WITH_TIMEOUT(test::eventCount(run, "validation") >= 1, qPrintable(lastLines(run)), 30'000);
      w.runPage()->saveNow();
      QTRY_VERIFY_WITH_TIMEOUT(test::eventCount(run, "checkpoint") >= 1, 60'000);
      w.runPage()->cancelRun();
      QTRY_VERIFY_WITH_TIMEOUT(!w.jobs()->liveJobForRun(run), 120'000);
      QCOMPARE(test::eventCount(run, "finished"), 1);
      QString why;
      QVERIFY2(w.runPage()->canResume(&why), qPrintable(why));
      const int stepsBefore = test::eventCount(run, "step");
      w.runPage()->resumeRun();
      QTRY_VERIFY_WITH_TIMEOUT(test::eventCount(run, "started") == 2, 60'000);
      QTRY_VERIFY_WITH_TIMEOUT(test::eventCount(run, "step") > stepsBefore, 60'000);
      w.runPage()->cancelRun();
      QTRY_VERIFY_WITH_TIMEOUT(!w.jobs()->liveJobForRun(run), 120'000);
      QCOMPARE(test::eventCount(run, "finished"), 2);
      // The run's validation player.
      QVERIFY(w.runPage()->showTab(QStringLiteral("validation")));
      QTRY_VERIFY_WITH_TIMEOUT(!w.runPage()->validationView()->player()->videos().isEmpty(), 20'000);
      // Compare: two kept validation renders (this run's and the previous one's), and on the
      // first and every tenth round two checkpoints rendered by the engine.
      ComparePage* c = w.comparePage();
      c->setCacheDir(tmp_.filePath(QStringLiteral("cache")));
      w.runsModel()->refresh();
      w.showPage(c);
      c->tabs()->setCurrentIndex(0);
      const QString other = previousRun.isEmpty() ? run : previousRun;
      QVERIFY(c->chooseKept(0, run, 3, 0));
      QVERIFY(c->chooseKept(1, other, 3, 0));
      QSignalSpy rendered(c, &ComparePage::renderFinished);
      QSignalSpy metrics(c, &ComparePage::metricsReady);
      c->render();
      QVERIFY(rendered.count() == 1 && rendered.first().at(0).toBool());
      QVERIFY(metrics.count() > 0 || metrics.wait(60'000));
      if (round % 10 == 0) {
        const qint64 saved = checkpointStep(run);
        QVERIFY(c->choose(0, run, saved));
        QVERIFY(c->choose(1, other, checkpointStep(other)));
        c->videoEdit()->setText(clip_);
        c->heightSpin()->setValue(64);
        c->framesSpin()->setValue(5);
        rendered.clear();
        c->render();
        QVERIFY(rendered.count() > 0 || rendered.wait(300'000));
        QVERIFY2(rendered.first().at(0).toBool(), qPrintable(c->statusLabel()->text()));
      }
      // The loss overlay of the two runs.
      c->tabs()->setCurrentWidget(c->lossOverlay());
      QSignalSpy loaded(c->lossOverlay(), &LossOverlay::curvesLoaded);
      for (const QString& r : c->lossOverlay()->checkedRuns()) c->lossOverlay()->setRunChecked(r, false);
      QVERIFY(c->lossOverlay()->setRunChecked(run, true));
      QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty() && !c->lossOverlay()->curves().isEmpty(), 20'000);
      previousRun = run;
      qInfo("round %d done at %.1f s", round + 1, double(clock.elapsed()) / 1000);
    }
    QVERIFY(w.jobs()->liveJobs().isEmpty());
  }

 private:
  // The newest checkpoint-N of a run.
  static qint64 checkpointStep(const QString& run) {
    qint64 best = -1;
    for (const QString& d : QDir(run).entryList({QStringLiteral("checkpoint-*")}, QDir::Dirs))
      best = std::max(best, d.mid(11).toLongLong());
    return best;
  }
};

QTEST_MAIN(TestJourneySoak)
#include "test_journey_soak.moc"
