// SPDX-License-Identifier: Apache-2.0
#include "jobs/demo_run.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

namespace ws {

QString writeDemoRun(const QString& presetYaml, const QString& folder, QString* error) {
  const auto fail = [error](const QString& why) {
    if (error) *error = why;
    return QString();
  };
  YAML::Node cfg;
  try {
    cfg = YAML::LoadFile(presetYaml.toStdString());
  } catch (const std::exception& e) {
    return fail(QStringLiteral("%1: %2").arg(presetYaml, QString::fromUtf8(e.what())));
  }
  if (!cfg.IsMap()) return fail(QStringLiteral("%1: not a run file").arg(presetYaml));
  if (!QDir().mkpath(folder)) return fail(QStringLiteral("%1: cannot make the folder").arg(folder));
  const QDir presetDir = QFileInfo(presetYaml).absoluteDir();
  const QDir base(QFileInfo(folder).absoluteFilePath());
  QString runDir = base.filePath(QStringLiteral("demo-upsampler"));
  for (int n = 2; QFileInfo::exists(runDir); ++n) runDir = base.filePath(QStringLiteral("demo-upsampler-%1").arg(n));
  const QString data = base.filePath(QStringLiteral("data"));
  // The preset's own files stay where the program keeps them, named absolutely.
  for (const char* key : {"config_path", "vae_path", "pretrained_model_name_or_path", "transformer_config"})
    if (cfg[key] && cfg[key].IsScalar())
      cfg[key] = presetDir.absoluteFilePath(QString::fromStdString(cfg[key].Scalar())).toStdString();
  // Everything the run writes goes to the chosen folder.
  cfg["demo_data"] = "auto";
  cfg["train_data_dir"] = data.toStdString();
  cfg["train_data_meta"] = QDir(data).filePath(QStringLiteral("metadata.json")).toStdString();
  cfg["output_dir"] = runDir.toStdString();
  if (cfg["validation_paths"] && cfg["validation_paths"].IsSequence()) {
    YAML::Node clips(YAML::NodeType::Sequence);
    for (const auto& p : cfg["validation_paths"])
      clips.push_back(
          QDir(data)
              .filePath(QStringLiteral("videos/") + QFileInfo(QString::fromStdString(p.as<std::string>())).fileName())
              .toStdString());
    cfg["validation_paths"] = clips;
  }
  if (!QDir().mkpath(runDir)) return fail(QStringLiteral("%1: cannot make the run folder").arg(runDir));
  const QString yaml = QDir(runDir).filePath(QStringLiteral("run.yaml"));
  YAML::Emitter out;
  out << cfg;
  QSaveFile f(yaml);
  if (!f.open(QIODevice::WriteOnly) ||
      f.write(QByteArray("# The built-in demo run, set up by Try the demo\n") + out.c_str() + "\n") < 0 || !f.commit())
    return fail(QStringLiteral("%1: cannot write").arg(yaml));
  return yaml;
}

}  // namespace ws
