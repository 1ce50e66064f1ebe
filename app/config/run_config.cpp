// SPDX-License-Identifier: Apache-2.0
#include "config/run_config.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFileInfo>

#include "contract/jobs.h"
#include "core/yaml_limits.h"

namespace ws {
namespace {

QString scalarText(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar: return QString::fromStdString(n.Scalar());
    case YAML::NodeType::Null: return QString();
    case YAML::NodeType::Sequence: {
      QStringList parts;
      for (const auto& item : n) parts << scalarText(item);
      return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
    }
    default: {
      YAML::Emitter out;
      out << YAML::Flow << n;
      return QString::fromStdString(out.c_str());
    }
  }
}

}  // namespace

std::optional<RunConfig> RunConfig::load(const QString& path, QString* error) {
  const QFileInfo fi(path);
  auto fail = [&](const QString& msg) {
    if (error) *error = QStringLiteral("%1: %2").arg(path, msg);
    return std::nullopt;
  };
  if (!fi.exists()) return fail(QStringLiteral("no such file"));
  if (!fi.isFile()) return fail(QStringLiteral("not a file"));
  YAML::Node root;
  try {
    root = YAML::LoadFile(fi.absoluteFilePath().toStdString());
  } catch (const YAML::ParserException& e) {
    if (error) *error = QStringLiteral("%1:%2: %3").arg(path).arg(e.mark.line + 1).arg(QString::fromStdString(e.msg));
    return std::nullopt;
  } catch (const YAML::Exception& e) {
    return fail(QString::fromStdString(e.what()));
  }
  try {
    check_yaml_size(root, path.toStdString());  // aliases expand in scalarText below
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return std::nullopt;
  }
  if (!root.IsMap()) return fail(QStringLiteral("expected a mapping of options (key: value lines)"));

  RunConfig cfg;
  cfg.path = fi.absoluteFilePath();
  for (const auto& kv : root) {
    const QString key = QString::fromStdString(kv.first.as<std::string>(""));
    const QString value = scalarText(kv.second);
    cfg.options.append({key, value});
    if (key == QLatin1String("job")) cfg.job = value.trimmed();
    if (key == QLatin1String("output_dir") && !value.isEmpty())
      cfg.outputDir = QDir::cleanPath(fi.absoluteDir().absoluteFilePath(value));
  }
  return cfg;
}

QString RunConfig::verbForJob(const QString& job) {
  return QString::fromStdString(contract::verb_for_job(job.toStdString()));
}

QString RunConfig::knownJobs() {
  QStringList names;
  for (const contract::Job& j : contract::jobs()) names << QString::fromLatin1(j.job);
  const QString last = names.takeLast();
  return names.join(QStringLiteral(", ")) + QStringLiteral(" or ") + last;
}

}  // namespace ws
