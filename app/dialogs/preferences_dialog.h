// SPDX-License-Identifier: Apache-2.0
// Edit ▸ Preferences: what was only a flag or a variable, kept for every launch (jobs/preferences.h):
// the worker executable, the presets folder, the heartbeat timeout. Each field says what is in
// effect now and where it comes from; an empty field means "find it" / the default.
#pragma once

#include <QDialog>

class QLabel;
class QLineEdit;
class QSpinBox;

namespace ws {

class PreferencesDialog : public QDialog {
  Q_OBJECT
 public:
  explicit PreferencesDialog(QWidget* parent = nullptr);

  QLineEdit* enginePath() const { return engine_; }
  QLineEdit* presetsDir() const { return presets_; }
  QSpinBox* heartbeatTimeout() const { return heartbeat_; }  // seconds; the minimum means the default

 public Q_SLOTS:
  void accept() override;  // checks the paths, then keeps them

 Q_SIGNALS:
  void heartbeatTimeoutChanged(int ms);

 private:
  QLineEdit *engine_, *presets_;
  QSpinBox* heartbeat_;
  QLabel* problem_;
};

}  // namespace ws
