// SPDX-License-Identifier: Apache-2.0
// The Compare page and the experts' Validation tab offscreen, on real runs the engine trains
// here: two expert runs (and two upsampler runs) are rendered side by side through background
// jobs, a second look comes from the cache, the per-frame metrics and the side-by-side export
// are real, a cancelled render leaves nothing behind, an expert run's validation videos
// fill the prompt × step grid, and an i2v run's start images show beside its videos.
#include <QComboBox>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QListWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QLineEdit>
#include <QPainter>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include <qcustomplot.h>

#include "item_models/runs_model.h"
#include "jobs/job_manager.h"
#include "jobs/render_job.h"
#include "loss_chart.h"
#include "main_window.h"
#include "pages/compare_page.h"
#include "pages/expert_validation_view.h"
#include "pages/loss_overlay.h"
#include "pages/run_page.h"
#include "pages/start_image_strip.h"
#include "test_paths.h"
#include "video/video_decode.h"
#include "video_compare_view.h"
#include "video_metrics.h"

using namespace ws;

namespace {

QString configs() { return QStringLiteral(WS_TEST_DATA "/../../configs"); }

bool runEngine(const QStringList& args, QString* log) {
  QProcess p;
  p.setProgram(QStringLiteral(WS_ENGINE_EXE));
  p.setArguments(args);
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start();
  if (!p.waitForFinished(600'000)) return false;
  *log = QString::fromUtf8(p.readAll().right(2000));
  return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

void writeText(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}

}  // namespace

class TestComparePage : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir tmp_;
  QString ws_, data_, vae_;
  std::unique_ptr<MainWindow> window_;

  QString run(const char* name) const { return QDir(ws_).filePath(QLatin1String(name)); }
  ComparePage* page() const { return window_->comparePage(); }
  static bool waitFor(QSignalSpy& spy, int timeoutMs = 600'000) { return spy.count() > 0 || spy.wait(timeoutMs); }

 private Q_SLOTS:
  void initTestCase() {
    if (!QFileInfo(QStringLiteral(WS_ENGINE_EXE)).isExecutable()) QSKIP("wanstudio-engine is not built");
    QVERIFY(tmp_.isValid());
    ws_ = tmp_.filePath(QStringLiteral("workspace"));
    data_ = tmp_.filePath(QStringLiteral("data"));
    vae_ = QStringLiteral(WS_TEST_DATA "/vae/vae_dev_weights.safetensors");
    QString log;
    QVERIFY2(runEngine({QStringLiteral("demo-data"), data_}, &log), qPrintable(log));
    writeText(
        tmp_.filePath(QStringLiteral("dit.yaml")),
        "in_dim: 48\nout_dim: 48\ndim: 32\nffn_dim: 64\nnum_heads: 2\nnum_layers: 1\ntext_dim: 32\ntext_len: 16\n");
    writeText(tmp_.filePath(QStringLiteral("up.yaml")),
              "latent_upsampler_kwargs:\n  mid_channels: 32\n  num_blocks_per_stage: 1\n");
    const QStringList experts{QStringLiteral("train-experts"),
                              QStringLiteral("--transformer_config"),
                              tmp_.filePath(QStringLiteral("dit.yaml")),
                              QStringLiteral("--vae_path"),
                              vae_,
                              QStringLiteral("--train_data_meta"),
                              data_ + QStringLiteral("/metadata.json"),
                              QStringLiteral("--text_embeddings_dir"),
                              tmp_.filePath(QStringLiteral("text")),
                              QStringLiteral("--text_encoder_path"),
                              configs() + QStringLiteral("/demo/umt5_demo.safetensors"),
                              QStringLiteral("--tokenizer_path"),
                              configs() + QStringLiteral("/demo/umt5_demo_spiece.model"),
                              QStringLiteral("--video_sample_size"),
                              QStringLiteral("64"),
                              QStringLiteral("--video_sample_n_frames"),
                              QStringLiteral("5"),
                              QStringLiteral("--max_train_steps"),
                              QStringLiteral("2"),
                              QStringLiteral("--checkpointing_steps"),
                              QStringLiteral("1"),
                              QStringLiteral("--dataloader_num_workers"),
                              QStringLiteral("0"),
                              QStringLiteral("--learning_rate"),
                              QStringLiteral("1e-2")};
    // Run A also renders validation videos: two prompts at steps 0, 1 and 2.
    QVERIFY2(runEngine(experts + QStringList{QStringLiteral("--seed"), QStringLiteral("1"),
                                             QStringLiteral("--validation_prompts"), QStringLiteral("a red circle"),
                                             QStringLiteral("a blue square"), QStringLiteral("--validation_steps"),
                                             QStringLiteral("1"), QStringLiteral("--validation_size"),
                                             QStringLiteral("64x64"), QStringLiteral("--validation_frames"),
                                             QStringLiteral("5"), QStringLiteral("--validation_sample_steps"),
                                             QStringLiteral("2"), QStringLiteral("--output_dir"), run("experts-a")},
                       &log),
             qPrintable(log));
    QVERIFY2(runEngine(experts + QStringList{QStringLiteral("--seed"), QStringLiteral("2"),
                                             QStringLiteral("--output_dir"), run("experts-b")},
                       &log),
             qPrintable(log));
    // The upsamplers against the demo's VAE, which reconstructs (the dev VAE's random weights
    // make noise that the MP4 encoder smooths, so the chart could not be checked against PSNR).
    const QStringList up{QStringLiteral("train-upsampler"),
                         QStringLiteral("--config_path"),
                         tmp_.filePath(QStringLiteral("up.yaml")),
                         QStringLiteral("--vae_path"),
                         configs() + QStringLiteral("/demo/demo_vae.safetensors"),
                         QStringLiteral("--train_data_meta"),
                         data_ + QStringLiteral("/metadata.json"),
                         QStringLiteral("--video_sample_size"),
                         QStringLiteral("64"),
                         QStringLiteral("--video_sample_n_frames"),
                         QStringLiteral("5"),
                         QStringLiteral("--max_train_steps"),
                         QStringLiteral("2"),
                         QStringLiteral("--checkpointing_steps"),
                         QStringLiteral("2"),
                         QStringLiteral("--dataloader_num_workers"),
                         QStringLiteral("0"),
                         QStringLiteral("--learning_rate"),
                         QStringLiteral("1e-3")};
    for (const char* name : {"upsampler-c", "upsampler-d"})
      QVERIFY2(runEngine(up + QStringList{QStringLiteral("--seed"),
                                          QLatin1String(name) == QLatin1String("upsampler-c") ? QStringLiteral("3")
                                                                                              : QStringLiteral("4"),
                                          QStringLiteral("--output_dir"), run(name)},
                         &log),
               qPrintable(log));

    window_ = std::make_unique<MainWindow>(ws_, 60'000);
    window_->runsModel()->refresh();
    page()->setCacheDir(tmp_.filePath(QStringLiteral("cache")));
    page()->setEngineProgram(QStringLiteral(WS_ENGINE_EXE));
    window_->resize(1400, 900);
    window_->show();
    window_->showPage(page());
  }

  void expertCheckpointsOfTwoRuns() {
    ComparePage* p = page();
    QVERIFY(p->choose(0, run("experts-a"), 2));
    QVERIFY(p->choose(1, run("experts-b"), 1));
    QCOMPARE(p->job(), QStringLiteral("experts"));
    QVERIFY(p->promptEdit()->isVisibleTo(p));
    p->promptEdit()->setText(QStringLiteral("a red circle moving left"));
    p->widthSpin()->setValue(64);
    p->heightSpin()->setValue(64);
    p->framesSpin()->setValue(5);
    p->stepsSpin()->setValue(3);
    QSignalSpy done(p, &ComparePage::renderFinished);
    QSignalSpy metrics(p, &ComparePage::metricsReady);
    QTest::mouseClick(p->renderButton(), Qt::LeftButton);
    QVERIFY(p->isRendering());
    QVERIFY(!p->renderButton()->isEnabled());
    QVERIFY(waitFor(done));
    QCOMPARE(done.takeFirst().at(0).toBool(), true);
    for (int i = 0; i < 2; ++i) {
      QVERIFY(p->side(i).result);
      QVERIFY(!p->side(i).result->cached);
      QVERIFY(QFileInfo(p->side(i).result->video).size() > 0);
      QVERIFY2(p->side(i).result->dir.startsWith(p->cacheDir()), qPrintable(p->side(i).result->dir));
    }
    QCOMPARE(p->player()->videos().size(), 2);
    QVERIFY(p->player()->videos()[0].title.contains(QStringLiteral("experts-a")));
    QVERIFY(p->player()->videos()[1].title.contains(QStringLiteral("experts-b")));
    // A against B per frame: two different checkpoints give two different videos.
    QVERIFY(waitFor(metrics));
    QCOMPARE(p->series().size(), 1);
    const FrameScores& s = p->series()[0].scores;
    QCOMPARE(s.psnr.size(), 5);
    QCOMPARE(s.ssim.size(), 5);
    for (int f = 0; f < 5; ++f) {
      QVERIFY2(s.psnr[f] > 0 && s.psnr[f] < 100, qPrintable(QString::number(s.psnr[f])));
      QVERIFY(s.ssim[f] > -1 && s.ssim[f] < 1);
    }
    QCOMPARE(p->chart()->graphCount(), 2);  // PSNR and SSIM
    QCOMPARE(p->chart()->graph(0)->dataCount(), 5);
    // The same video twice scores as identical: the metric itself can tell.
    FrameScores same;
    QString error;
    QVERIFY2(scoreVideos(p->side(0).result->video, p->side(0).result->video, &same, &error), qPrintable(error));
    QCOMPARE(same.psnr[0], 100.0);
    QVERIFY(std::abs(same.ssim[0] - 1.0) < 1e-6);

    // A second look is instant: both from the cache, no engine started.
    const QString firstA = p->side(0).result->video;
    QTest::mouseClick(p->renderButton(), Qt::LeftButton);
    QVERIFY(!p->side(0).job->worker());
    QVERIFY(waitFor(done, 5000));
    QCOMPARE(done.takeFirst().at(0).toBool(), true);
    QVERIFY(p->side(0).result->cached && p->side(1).result->cached);
    QCOMPARE(p->side(0).result->video, firstA);
    QCOMPARE(p->side(0).state->text(), QStringLiteral("from the cache"));
    // Another seed is another key.
    RenderRequest r = p->side(0).request;
    const QString key = r.cacheKey();
    r.settings.seed += 1;
    QVERIFY(r.cacheKey() != key);

    // Export: one MP4 with both videos side by side under a title strip.
    QSignalSpy exported(p, &ComparePage::exportFinished);
    const QString out = tmp_.filePath(QStringLiteral("side-by-side.mp4"));
    QVERIFY(p->exportSideBySide(out));
    QVERIFY(waitFor(exported, 60'000));
    QVERIFY2(exported.first().at(0).toBool(), qPrintable(exported.first().at(1).toString()));
    const video::VideoInfo info = video::probe_video(out.toStdString(), true);
    QCOMPARE(info.width, 128);
    QVERIFY(info.height > 64);
    QCOMPARE(info.frames, int64_t{5});

    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {
      QTest::qWait(500);
      window_->grab().save(
          QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("compare-experts.png")));
    }
  }

  void cancelledRenderLeavesNothing() {
    ComparePage* p = page();
    QVERIFY(p->choose(0, run("experts-a"), 1));
    QVERIFY(p->choose(1, run("experts-b"), 2));
    p->widthSpin()->setValue(512);
    p->heightSpin()->setValue(512);
    p->framesSpin()->setValue(33);
    p->stepsSpin()->setValue(200);
    QSignalSpy done(p, &ComparePage::renderFinished);
    p->render();
    QVERIFY(p->side(0).job);
    // The first denoising step's event, then cancel.
    QTRY_VERIFY_WITH_TIMEOUT(p->side(0).state->text().startsWith(QStringLiteral("step ")), 300'000);
    const QString key = p->side(0).request.cacheKey();
    QTest::mouseClick(p->cancelButton(), Qt::LeftButton);
    QVERIFY(waitFor(done, 120'000));
    QCOMPARE(done.takeFirst().at(0).toBool(), false);
    QVERIFY(!p->side(0).result);
    QVERIFY(p->statusLabel()->text().contains(QStringLiteral("Cancelled")));
    QVERIFY(!QFileInfo::exists(QDir(p->cacheDir()).filePath(key)));
    const QStringList left = QDir(p->cacheDir()).entryList({QStringLiteral("*.partial-*")}, QDir::Dirs);
    QVERIFY2(left.isEmpty(), qPrintable(left.join(',')));
    QVERIFY(p->renderButton()->isEnabled());
  }

  void upsamplerCheckpointsAgainstTheReference() {
    ComparePage* p = page();
    QVERIFY(p->choose(0, run("upsampler-c"), 2));
    QVERIFY(p->choose(1, run("upsampler-d"), 2));
    QCOMPARE(p->job(), QStringLiteral("upsampler"));
    QVERIFY(p->videoEdit()->isVisibleTo(p));
    QVERIFY(!p->stepsSpin()->isVisibleTo(p));
    p->videoEdit()->setText(data_ + QStringLiteral("/videos/clip_00.mp4"));
    p->heightSpin()->setValue(64);
    p->framesSpin()->setValue(5);
    QSignalSpy done(p, &ComparePage::renderFinished);
    QSignalSpy metrics(p, &ComparePage::metricsReady);
    p->render();
    QVERIFY(waitFor(done));
    QCOMPARE(done.takeFirst().at(0).toBool(), true);
    const RenderResult& a = *p->side(0).result;
    QVERIFY(std::isfinite(a.psnr) && std::isfinite(a.psnrCeiling) && std::isfinite(a.psnrSource));
    QVERIFY(a.psnrSource != a.psnrCeiling);     // two different decodes against the source
    QCOMPARE(p->player()->videos().size(), 3);  // A, B and the high-res decode
    QCOMPARE(p->player()->videos()[2].path, a.reference);
    QVERIFY(p->statusLabel()->text().contains(QStringLiteral("ceiling")));
    QVERIFY(waitFor(metrics));
    QCOMPARE(p->series().size(), 2);  // each side against the reference
    // The chart's frames pooled against the high-res decode give the engine's clip PSNR, up to
    // the MP4s' 8-bit quantisation and compression.
    QVERIFY2(std::abs(p->series()[0].scores.pooledPsnr() - a.psnr) < 1.0,
             qPrintable(QStringLiteral("%1 vs %2").arg(p->series()[0].scores.pooledPsnr()).arg(a.psnr)));
  }

  void differentKindsOfRunsAreRefused() {
    ComparePage* p = page();
    QVERIFY(p->choose(0, run("experts-a"), 2));
    QVERIFY(p->choose(1, run("upsampler-c"), 2));
    QVERIFY(p->statusLabel()->text().contains(QStringLiteral("same kind")));
    QSignalSpy done(p, &ComparePage::renderFinished);
    p->render();
    QVERIFY(waitFor(done, 5000));
    QCOMPARE(done.takeFirst().at(0).toBool(), false);
    QVERIFY(!p->isRendering());
  }

  void keptValidationRendersOfEveryStep() {
    ComparePage* p = page();
    // Run A kept renders of two prompts at steps 0, 1 and 2; step 0 never had a checkpoint.
    QVERIFY(p->chooseKept(0, run("experts-a"), 0, 1));
    QVERIFY(!p->choose(0, run("experts-a"), 0));
    QVERIFY(p->chooseKept(0, run("experts-a"), 0, 1));
    QVERIFY(p->chooseKept(1, run("experts-a"), 2, 1));
    QComboBox* list = p->side(0).checkpoint;
    int keptItems = 0;
    for (int k = 0; k < list->count(); ++k)
      keptItems += list->itemText(k).startsWith(QStringLiteral("validation render"));
    QCOMPARE(keptItems, 6);
    QSignalSpy done(p, &ComparePage::renderFinished);
    QSignalSpy metrics(p, &ComparePage::metricsReady);
    p->render();
    // Shown as they are: nothing renders, nothing goes to the cache.
    QCOMPARE(done.count(), 1);
    QCOMPARE(done.takeFirst().at(0).toBool(), true);
    QVERIFY(!p->isRendering());
    QCOMPARE(p->player()->videos().size(), 2);
    QVERIFY(p->player()->videos()[0].path.endsWith(QStringLiteral("experts-a/sample/step0_val1.mp4")));
    QVERIFY(p->player()->videos()[1].path.endsWith(QStringLiteral("experts-a/sample/step2_val1.mp4")));
    QVERIFY(p->player()->videos()[0].title.contains(QStringLiteral("validation 1")));
    QCOMPARE(p->side(0).request.settings.prompt, QStringLiteral("a blue square"));
    QVERIFY(p->statusLabel()->text().contains(QStringLiteral("Validation renders")));
    QVERIFY(waitFor(metrics));
    QCOMPARE(p->series().size(), 1);
    QCOMPARE(p->series()[0].scores.psnr.size(), 5);
    // Another choice: the status no longer describes it, it says what the videos below are.
    const QString said = p->statusLabel()->text();
    QVERIFY(p->chooseKept(1, run("experts-a"), 1, 1));
    QVERIFY2(p->statusLabel()->text().contains(QStringLiteral("changed since")) &&
                 p->statusLabel()->text().contains(QStringLiteral("step 2 · validation 1")),
             qPrintable(p->statusLabel()->text()));
    QVERIFY(p->chooseKept(1, run("experts-a"), 2, 1));
    QCOMPARE(p->statusLabel()->text(), said);
    // A kept render against a checkpoint would compare two different inputs: refused, said.
    QVERIFY(p->choose(1, run("experts-b"), 1));
    p->render();
    QCOMPARE(done.count(), 1);
    QCOMPARE(done.takeFirst().at(0).toBool(), false);
    QVERIFY2(p->statusLabel()->text().contains(QStringLiteral("kept validation render")),
             qPrintable(p->statusLabel()->text()));
    QVERIFY(!p->isRendering());
  }

  void lossCurvesOfSeveralRuns() {
    ComparePage* p = page();
    p->tabs()->setCurrentWidget(p->lossOverlay());
    LossOverlay* o = p->lossOverlay();
    QVERIFY(o->isVisible());
    QCOMPARE(o->runList()->count(), 4);
    QSignalSpy loaded(o, &LossOverlay::curvesLoaded);
    QVERIFY(o->setRunChecked(JobManager::normalizedPath(run("experts-a")), true));
    QVERIFY(o->setRunChecked(JobManager::normalizedPath(run("upsampler-c")), true));
    QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 10'000);
    // experts-a: one curve per expert it trained (its two steps may route to one expert);
    // upsampler-c: one. Each point is a step a run logged.
    QStringList names;
    int points = 0;
    for (const auto& c : o->curves()) {
      names << c.name;
      points += int(c.x.size());
      QVERIFY2(c.name == QStringLiteral("upsampler-c") || c.name == QStringLiteral("experts-a · high") ||
                   c.name == QStringLiteral("experts-a · low"),
               qPrintable(c.name));
    }
    QVERIFY2(names.contains(QStringLiteral("upsampler-c")) && names.size() >= 2, qPrintable(names.join(',')));
    QCOMPARE(o->chart()->seriesNames().size(), names.size());
    QCOMPARE(points, 4);  // two steps of each run
    // The expert-step axis counts each expert's own updates: none past the run's step.
    loaded.clear();
    o->setExpertSteps(true);
    QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 10'000);
    double expertMax = 0;
    for (const auto& c : o->curves())
      if (c.name.startsWith(QStringLiteral("experts-a")))
        expertMax = std::max(expertMax, *std::max_element(c.x.begin(), c.x.end()));
    QVERIFY(expertMax <= 2 && expertMax >= 1);
    loaded.clear();
    QVERIFY(o->setRunChecked(JobManager::normalizedPath(run("upsampler-c")), false));
    QTRY_VERIFY_WITH_TIMEOUT(!loaded.isEmpty(), 10'000);
    QCOMPARE(o->curves().size(), names.size() - 1);
    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {
      QVERIFY(o->setRunChecked(JobManager::normalizedPath(run("experts-b")), true));
      QTest::qWait(800);
      window_->grab().save(
          QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("loss-overlay.png")));
    }
    p->tabs()->setCurrentIndex(0);
  }

  void expertValidationGrid() {
    window_->openRun(run("experts-a"));
    RunPage* rp = window_->runPage();
    QVERIFY(rp->showTab(QStringLiteral("validation")));
    ExpertValidationView* v = rp->expertValidationView();
    QTRY_COMPARE_WITH_TIMEOUT(v->steps(), (QList<qint64>{0, 1, 2}), 10'000);
    QVERIFY(v->isVisible());
    QCOMPARE(v->promptCount(), 2);
    QCOMPARE(v->grid()->rowCount(), 3);
    QCOMPARE(v->grid()->columnCount(), 2);
    QCOMPARE(v->grid()->horizontalHeaderItem(1)->toolTip(), QStringLiteral("a blue square"));
    // Every cell gets its video's first frame as a picture.
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 2; ++c)
        QTRY_VERIFY_WITH_TIMEOUT(!v->grid()->item(r, c)->data(Qt::DecorationRole).value<QPixmap>().isNull(), 20'000);
    // Opening the tab plays the newest step's prompts; a text-to-video run has no start image.
    QTRY_COMPARE(v->player()->videos().size(), 2);
    QVERIFY(!v->startImages()->isVisible());
    QVERIFY(v->player()->videos()[0].path.endsWith(QStringLiteral("sample/step2_val0.mp4")));
    // One prompt down the steps.
    v->selectCells({{0, 1}, {1, 1}, {2, 1}});
    QCOMPARE(v->player()->videos().size(), 3);
    QVERIFY(v->player()->videos()[0].path.endsWith(QStringLiteral("sample/step0_val1.mp4")));
    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {
      QTest::qWait(500);
      window_->grab().save(
          QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("expert-validation.png")));
    }
  }

  // An image-to-video run (here: run A's events and videos, its validation events naming a start
  // image per prompt, as train-experts writes them with validation_images): Compare and the
  // Validation tab show each start image beside the videos; text-to-video runs show none.
  void i2vStartImagesBesideTheVideos() {
    const QString i2v = run("experts-i2v");
    QVERIFY(QDir().mkpath(i2v + QStringLiteral("/sample")) && QDir().mkpath(i2v + QStringLiteral("/inputs")));
    for (const QFileInfo& f : QDir(run("experts-a") + QStringLiteral("/sample")).entryInfoList(QDir::Files))
      QVERIFY(QFile::copy(f.filePath(), i2v + QStringLiteral("/sample/") + f.fileName()));
    // Prompt 0 starts from a picture (an absolute path), prompt 1 from a video's first frame
    // (a path relative to the run folder, as a run file may give it).
    const QString png = tmp_.filePath(QStringLiteral("start.png"));
    QImage picture(96, 64, QImage::Format_RGB32);  // "a red circle" on a dark ground
    picture.fill(QColor(30, 40, 70));
    {
      QPainter painter(&picture);
      painter.setRenderHint(QPainter::Antialiasing);
      painter.setPen(Qt::NoPen);
      painter.setBrush(QColor(220, 30, 30));
      painter.drawEllipse(QPointF(48, 32), 22, 22);
    }
    QVERIFY(picture.save(png));
    QVERIFY(QFile::copy(data_ + QStringLiteral("/videos/clip_00.mp4"), i2v + QStringLiteral("/inputs/start.mp4")));
    QFile in(run("experts-a") + QStringLiteral("/events.jsonl"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    QByteArray events;
    while (!in.atEnd()) {
      const QByteArray line = in.readLine();
      QJsonObject o = QJsonDocument::fromJson(line).object();
      if (o.value(QStringLiteral("type")).toString() == QLatin1String("validation"))
        o.insert(QStringLiteral("image"),
                 o.value(QStringLiteral("index")).toInt() == 0 ? png : QStringLiteral("inputs/start.mp4"));
      events += o.isEmpty() ? line : QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n';
    }
    writeText(i2v + QStringLiteral("/events.jsonl"), events);
    window_->runsModel()->refresh();

    // Compare: two kept renders of prompt 0 share one start image; of prompts 0 and 1, one each.
    ComparePage* p = page();
    window_->showPage(p);
    StartImageStrip* strip = p->startImages();
    QTRY_VERIFY_WITH_TIMEOUT(p->chooseKept(0, i2v, 0, 0), 10'000);
    QVERIFY(p->chooseKept(1, i2v, 2, 0));
    p->render();
    QCOMPARE(p->player()->videos().size(), 2);
    QVERIFY(strip->isVisible());
    QCOMPARE(strip->pictures().size(), 1);
    QLabel* first = strip->pictures().first();
    QTRY_VERIFY_WITH_TIMEOUT(!first->pixmap().isNull(), 10'000);  // read on the thread pool
    QCOMPARE(first->toolTip(), png);
    QCOMPARE(first->accessibleName(), QStringLiteral("Start image of A and B"));
    QCOMPARE(first->pixmap().toImage().pixelColor(first->pixmap().width() / 2, first->pixmap().height() / 2),
             QColor(220, 30, 30));
    QVERIFY(p->chooseKept(1, i2v, 2, 1));
    p->render();
    QCOMPARE(strip->pictures().size(), 2);
    QCOMPARE(strip->images()[1].path, QDir::cleanPath(i2v + QStringLiteral("/inputs/start.mp4")));
    QCOMPARE(strip->pictures()[1]->accessibleName(), QStringLiteral("Start image of B"));
    QTRY_VERIFY_WITH_TIMEOUT(!strip->pictures()[1]->pixmap().isNull(), 20'000);  // the video's first frame
    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {
      QTest::qWait(800);
      window_->grab().save(
          QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("i2v-validation.png")));
    }
    // Text-to-video renders: no start image.
    QVERIFY(p->chooseKept(0, run("experts-a"), 0, 0));
    QVERIFY(p->chooseKept(1, run("experts-a"), 2, 0));
    p->render();
    QCOMPARE(p->player()->videos().size(), 2);
    QVERIFY(!strip->isVisible());
    QVERIFY(strip->pictures().isEmpty());

    // The Validation tab: the start image of each prompt on the player.
    window_->openRun(i2v);
    RunPage* rp = window_->runPage();
    QVERIFY(rp->showTab(QStringLiteral("validation")));
    ExpertValidationView* v = rp->expertValidationView();
    QTRY_COMPARE_WITH_TIMEOUT(v->steps(), (QList<qint64>{0, 1, 2}), 10'000);
    QTRY_COMPARE(v->player()->videos().size(), 2);  // the newest step's two prompts
    StartImageStrip* vs = v->startImages();
    QVERIFY(vs->isVisible());
    QCOMPARE(vs->pictures().size(), 2);
    QCOMPARE(vs->pictures()[0]->accessibleName(), QStringLiteral("Start image of prompt 0"));
    QCOMPARE(vs->pictures()[0]->toolTip(), png);
    QTRY_VERIFY_WITH_TIMEOUT(!vs->pictures()[0]->pixmap().isNull(), 10'000);
    QTRY_VERIFY_WITH_TIMEOUT(!vs->pictures()[1]->pixmap().isNull(), 20'000);
    QVERIFY(v->grid()->horizontalHeaderItem(0)->toolTip().contains(png));
    v->selectCells({{0, 1}, {1, 1}});  // one prompt down the steps: its one image
    QCOMPARE(vs->pictures().size(), 1);
    QCOMPARE(vs->images()[0].caption, QStringLiteral("prompt 1"));
    window_->openRun(run("experts-a"));
    QTRY_COMPARE_WITH_TIMEOUT(v->player()->videos().size(), 2, 10'000);
    QVERIFY(!vs->isVisible());
  }

  void cleanupTestCase() { window_.reset(); }
};

QTEST_MAIN(TestComparePage)
#include "test_compare_page.moc"
