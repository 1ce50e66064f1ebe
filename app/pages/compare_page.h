// SPDX-License-Identifier: Apache-2.0
// Compare, tab Videos: any two checkpoints, of one run or two, rendered on the same input and
// played side by side, or any two validation renders the runs kept (every validation step,
// whether or not its checkpoint survived rotation; those are shown as they are, an i2v run's
// with their start images beside the player). Expert
// checkpoints render a prompt with `sample`; upsampler checkpoints upsample a video with
// `upsample` (their high-res decode is the reference). Renders run as background jobs through a
// cache keyed by checkpoint + input + settings, so a second look is instant. Below the player:
// per-frame PSNR and SSIM (each side against the reference, or A against B when there is none),
// and an export of the side-by-side view as one MP4. Tab Loss Curves: LossOverlay.
#pragma once

#include <QDateTime>
#include <QFutureWatcher>
#include <QHash>
#include <QPointer>
#include <QWidget>

#include <array>
#include <atomic>
#include <memory>

#include "jobs/render_request.h"
#include "runfolder/kept_renders.h"
#include "video_metrics.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QTabWidget;

namespace ws {

class LossOverlay;
class RenderJob;
class RunsModel;
class StartImageStrip;
class VideoCompareView;

class ComparePage : public QWidget {
  Q_OBJECT
 public:
  struct Side {
    QComboBox* run = nullptr;
    QComboBox* checkpoint = nullptr;
    QProgressBar* progress = nullptr;
    QLabel* state = nullptr;
    QPointer<RenderJob> job;
    std::optional<RenderResult> result;
    RenderRequest request;
    std::optional<KeptRender> kept;  // set when the side shows a kept validation render
  };
  // One line of the chart: a name ("A vs high-res") and its scores.
  struct Series {
    QString name;
    FrameScores scores;
  };

  explicit ComparePage(RunsModel* runs, QWidget* parent = nullptr);
  ~ComparePage() override;

  void setCacheDir(const QString& dir);  // default: the user's cache folder, compare/
  QString cacheDir() const { return cacheDir_; }
  void setEngineProgram(const QString& program) { program_ = program; }

  // Chooses a run (by folder) and a checkpoint step for side 0 (A) or 1 (B).
  bool choose(int side, const QString& runDir, qint64 step);
  // Chooses the validation render `index` a run kept at `step` (the checkpoint list's lower part).
  bool chooseKept(int side, const QString& runDir, qint64 step, int index);
  QString job() const;  // the kind of run on side A ("experts" | "upsampler" | "")

  void render();
  void cancel();
  bool isRendering() const;
  bool exportSideBySide(const QString& path);  // starts it; exportFinished follows

  Side& side(int i) { return sides_[size_t(i)]; }
  QLineEdit* promptEdit() const { return prompt_; }
  QLineEdit* videoEdit() const { return video_; }
  QCheckBox* emaCheck() const { return ema_; }
  QSpinBox* widthSpin() const { return width_; }
  QSpinBox* heightSpin() const { return height_; }
  QSpinBox* framesSpin() const { return frames_; }
  QSpinBox* stepsSpin() const { return steps_; }
  QSpinBox* seedSpin() const { return seed_; }
  QPushButton* renderButton() const { return render_; }
  QPushButton* cancelButton() const { return cancel_; }
  QPushButton* exportButton() const { return export_; }
  QLabel* statusLabel() const { return status_; }
  VideoCompareView* player() const { return player_; }
  // Beside the player: the start images of kept i2v validation renders (hidden for others).
  StartImageStrip* startImages() const { return startImages_; }
  QCustomPlot* chart() const { return chart_; }
  QTabWidget* tabs() const { return tabs_; }
  LossOverlay* lossOverlay() const { return overlay_; }  // the Loss Curves tab
  const QList<Series>& series() const { return series_; }

 Q_SIGNALS:
  void renderFinished(bool ok);  // both sides ended (from the cache or the engine)
  void metricsReady();
  void exportFinished(bool ok, const QString& pathOrError);

 private:
  void fillRuns();
  void fillCheckpoints(int side);
  void updateInputs();
  RenderRequest requestFor(int side) const;
  const QList<KeptRender>& keptFor(const QString& runDir);
  std::optional<KeptRender> keptChoice(int side);
  QString sideLabel(int side) const;
  bool showKept();
  void showStartImages();
  void onSideFinished(int side, bool ok, const RenderResult& result, const QString& error);
  void showResults();
  void startMetrics();
  void drawChart();
  // The status line says what the last action found, for the choice it was made on; `remember`
  // false shows a passing note without forgetting that.
  void setStatus(const QString& text, bool error = false, bool remember = true);
  QString choiceKey() const;  // the runs, checkpoints and input chosen now
  void watchChoice();
  void choiceChanged();

  RunsModel* runs_;
  QString cacheDir_, program_;
  std::array<Side, 2> sides_;
  QStackedWidget* inputs_;
  QLineEdit* prompt_;
  QLineEdit* video_;
  QCheckBox* ema_;
  QSpinBox *width_, *height_, *frames_, *steps_, *seed_;
  QLabel *stepsLabel_, *seedLabel_, *widthLabel_;
  QPushButton *render_, *cancel_, *export_;
  QLabel* status_;
  VideoCompareView* player_;
  StartImageStrip* startImages_;
  QCustomPlot* chart_;
  QTabWidget* tabs_;
  LossOverlay* overlay_;
  QList<Series> series_;
  QString shown_;  // "A: … vs B: …" while the player holds a comparison
  struct Remembered {
    QString key, text;
    bool error = false;
  } statusFor_;
  // Kept renders per run folder, re-read when events.jsonl changes.
  struct KeptList {
    qint64 size = -1;
    QDateTime modified;
    QList<KeptRender> renders;
  };
  QHash<QString, KeptList> kept_;
  // Metrics in the background: a newer request supersedes the running one.
  QFutureWatcher<QList<Series>> metricsWatcher_;
  std::shared_ptr<std::atomic_bool> metricsAbort_;
  quint64 metricsGeneration_ = 0;
  QFutureWatcher<QString> exportWatcher_;
  std::shared_ptr<std::atomic_bool> exportAbort_;
};

}  // namespace ws
