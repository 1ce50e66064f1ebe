// SPDX-License-Identifier: Apache-2.0
#include "dialogs/preferences_dialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "jobs/engine_locator.h"
#include "jobs/preferences.h"
#include "jobs/preset_locator.h"
#include "jobs/worker_job.h"
#include "theme.h"

namespace ws {

PreferencesDialog::PreferencesDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Preferences"));
  engine_ = new QLineEdit(prefs::enginePath(), this);
  engine_->setAccessibleName(tr("Worker executable"));
  engine_->setPlaceholderText(tr("found beside the studio: %1").arg(engineExecutable()));
  presets_ = new QLineEdit(prefs::presetsDir(), this);
  presets_->setAccessibleName(tr("Presets folder"));
  presets_->setPlaceholderText(tr("found beside the studio: %1").arg(presetsDirectory()));
  heartbeat_ = new QSpinBox(this);
  heartbeat_->setAccessibleName(tr("Heartbeat timeout in seconds"));
  heartbeat_->setRange(9, 3600);  // 9 = the default (a worker beats every 5 s)
  heartbeat_->setSpecialValueText(tr("default (%1 s)").arg(WorkerJob::kDefaultHeartbeatTimeoutMs / 1000));
  heartbeat_->setSuffix(tr(" s"));
  heartbeat_->setValue(prefs::heartbeatTimeoutS() < 0 ? heartbeat_->minimum() : prefs::heartbeatTimeoutS());
  heartbeat_->setToolTip(tr("A worker silent for this long is stopped and its run marked failed"));
  const auto browse = [this](QLineEdit* edit, bool folder) {
    auto* b = new QPushButton(tr("Browse…"), this);
    b->setAccessibleName(tr("Browse for %1").arg(edit->accessibleName().toLower()));
    connect(b, &QPushButton::clicked, this, [this, edit, folder] {
      const QString p = folder ? QFileDialog::getExistingDirectory(this, edit->accessibleName(), edit->text())
                               : QFileDialog::getOpenFileName(this, edit->accessibleName(), edit->text());
      if (!p.isEmpty()) edit->setText(p);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(b);
    return row;
  };
  auto* form = new QFormLayout;
  form->addRow(tr("Worker (wanstudio-engine)"), browse(engine_, false));
  form->addRow(tr("Presets folder"), browse(presets_, true));
  form->addRow(tr("Heartbeat timeout"), heartbeat_);
  problem_ = new QLabel(this);
  setTone(problem_, Tone::Error);
  problem_->setWordWrap(true);
  auto* note = new QLabel(tr("The command line and the environment ($WANSTUDIO_ENGINE, --configs, "
                             "--heartbeat-timeout) still win for one launch."),
                          this);
  note->setWordWrap(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &PreferencesDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(note);
  layout->addWidget(problem_);
  layout->addWidget(buttons);
}

void PreferencesDialog::accept() {
  const QString engine = engine_->text().trimmed(), presets = presets_->text().trimmed();
  if (!engine.isEmpty() && !(QFileInfo(engine).isFile() && QFileInfo(engine).isExecutable())) {
    problem_->setText(tr("%1 is not an executable file").arg(engine));
    return;
  }
  if (!presets.isEmpty() && !QFileInfo(presets).isDir()) {
    problem_->setText(tr("%1 is not a folder").arg(presets));
    return;
  }
  prefs::setEnginePath(engine);
  prefs::setPresetsDir(presets);
  const int s = heartbeat_->value() == heartbeat_->minimum() ? -1 : heartbeat_->value();
  prefs::setHeartbeatTimeoutS(s);
  Q_EMIT heartbeatTimeoutChanged(s < 0 ? WorkerJob::kDefaultHeartbeatTimeoutMs : s * 1000);
  QDialog::accept();
}

}  // namespace ws
