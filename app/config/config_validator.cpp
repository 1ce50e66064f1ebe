// SPDX-License-Identifier: Apache-2.0
#include "config/config_validator.h"

#include <QDir>
#include <QFileInfo>

namespace ws {
namespace {

void add(QMap<QString, QString>& out, const QString& key, const QString& msg) {
  QString& m = out[key];
  m = m.isEmpty() ? msg : m + QStringLiteral("; ") + msg;
}

}  // namespace

bool ConfigValidator::isInputPath(const QString& option) {
  // Written by the run (outputs, caches) or accepted without effect.
  static const QStringList notInputs{QStringLiteral("output_dir"), QStringLiteral("latent_cache_dir"),
                                     QStringLiteral("logging_dir"), QStringLiteral("cache_dir")};
  return !notInputs.contains(option);
}

QMap<QString, QString> ConfigValidator::validate(const OptionSchema& schema, const QVariantMap& values,
                                                 const QString& baseDir) {
  QMap<QString, QString> out;
  auto effective = [&](const OptionSpec& s) { return values.contains(s.name) ? values.value(s.name) : s.defaultValue; };
  const OptionSpec* demoSpec = schema.find(QStringLiteral("demo_data"));
  const bool demoAuto =
      demoSpec && effective(*demoSpec).toString().trimmed().compare(QLatin1String("auto"), Qt::CaseInsensitive) == 0;
  const QDir base(baseDir);

  for (const OptionSpec& s : schema.options()) {
    const QVariant v = effective(s);
    const bool unset = v.isNull() || (s.list && v.toList().isEmpty()) ||
                       (!s.list && !s.isNumber() && s.type != QLatin1String("bool") && v.toString().isEmpty());
    if (unset) {
      if (s.required) add(out, s.name, QStringLiteral("required"));
      continue;
    }
    const QVariantList items = s.list ? v.toList() : QVariantList{v};
    for (const QVariant& x : items) {
      if (s.type == QLatin1String("enum") && !s.choices.contains(x.toString()))
        add(out, s.name,
            QStringLiteral("\"%1\" is not one of %2").arg(x.toString(), s.choices.join(QStringLiteral(", "))));
      // Bounds and shape rules (frames 4k+1, pixels a multiple of 16) as the worker's schema states them.
      std::string err;
      if (s.isNumber() && !contract::check_number(s.rule(), x.toDouble(), err))
        add(out, s.name, QString::fromStdString(err));
      if (s.type == QLatin1String("path") && isInputPath(s.name)) {
        // The demo dataset is written at train_data_dir when its metadata is missing.
        const bool demoMade =
            demoAuto && (s.name == QLatin1String("train_data_meta") || s.name == QLatin1String("train_data_dir"));
        const QString path = QDir::cleanPath(base.absoluteFilePath(x.toString()));
        if (!demoMade && !QFileInfo::exists(path))
          add(out, s.name,
              QStringLiteral("%1 does not exist%2")
                  .arg(path, s.name == QLatin1String("train_data_meta") ? QStringLiteral(" (or set demo_data: auto)")
                                                                        : QString()));
      }
    }
  }
  return out;
}

}  // namespace ws
