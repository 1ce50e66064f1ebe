// SPDX-License-Identifier: Apache-2.0
#include "config/run_yaml_codec.h"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QLocale>

#include "core/yaml_limits.h"
#include "contract/run_layout.h"

namespace ws {
namespace {

void emitScalar(YAML::Emitter& out, const OptionSpec& s, const QVariant& v) {
  if (v.isNull()) {
    out << YAML::Null;
  } else if (s.type == QLatin1String("bool")) {
    out << v.toBool();
  } else if (s.type == QLatin1String("int")) {
    out << static_cast<long long>(v.toLongLong());
  } else if (s.type == QLatin1String("float")) {
    QString t = QString::number(v.toDouble(), 'g', QLocale::FloatingPointShortest);
    // "1.0", not "1": the value reads back as a float.
    if (!t.contains(QLatin1Char('.')) && !t.contains(QLatin1Char('e')) && !t.contains(QLatin1Char('n')))
      t += QStringLiteral(".0");
    out << t.toStdString();
  } else {
    out << v.toString().toStdString();
  }
}

QString where(const YAML::Node& n) { return QStringLiteral("line %1").arg(n.Mark().line + 1); }

QString typeName(const OptionSpec& s) {
  const QString one = s.type == QLatin1String("int")     ? QStringLiteral("an integer")
                      : s.type == QLatin1String("float") ? QStringLiteral("a number")
                      : s.type == QLatin1String("bool")  ? QStringLiteral("true or false")
                                                         : QStringLiteral("a %1").arg(s.type);
  return s.list ? QStringLiteral("a list of %1 values").arg(s.type) : one;
}

}  // namespace

QString RunYamlCodec::write(const OptionSchema& schema, const QString& job, const QVariantMap& values,
                            const QString& comment) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "job" << YAML::Value << job.toStdString();
  for (const OptionSpec& s : schema.options()) {
    if (!values.contains(s.name)) continue;
    const QVariant v = values.value(s.name);
    out << YAML::Key << s.name.toStdString() << YAML::Value;
    if (s.list && !v.isNull()) {
      OptionSpec one = s;
      one.list = false;
      out << YAML::Flow << YAML::BeginSeq;
      for (const QVariant& x : v.toList()) emitScalar(out, one, x);
      out << YAML::EndSeq;
    } else {
      emitScalar(out, s, v);
    }
  }
  out << YAML::EndMap;
  QString text;
  for (const QString& line : comment.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
    text += QStringLiteral("# ") + line + QLatin1Char('\n');
  return text + QString::fromStdString(out.c_str()) + QLatin1Char('\n');
}

ParsedRunYaml RunYamlCodec::parse(const OptionSchema& schema, const QString& text) {
  ParsedRunYaml r;
  YAML::Node root;
  try {
    root = YAML::Load(text.toStdString());
  } catch (const YAML::ParserException& e) {
    r.parseError = QStringLiteral("line %1: %2").arg(e.mark.line + 1).arg(QString::fromStdString(e.msg));
    return r;
  } catch (const YAML::Exception& e) {
    r.parseError = QString::fromStdString(e.what());
    return r;
  }
  try {
    check_yaml_size(root, std::string(contract::kRunYaml));
  } catch (const std::exception& e) {
    r.parseError = QString::fromStdString(e.what());
    return r;
  }
  if (root.IsNull()) return r;  // an empty text: every option at its default
  if (!root.IsMap()) {
    r.parseError = QStringLiteral("expected a mapping of options (key: value lines)");
    return r;
  }
  for (const auto& kv : root) {
    const QString key = QString::fromStdString(kv.first.Scalar());
    const YAML::Node& node = kv.second;
    if (key == QLatin1String("job")) {
      r.job = node.IsScalar() ? QString::fromStdString(node.Scalar()).trimmed() : QString();
      continue;
    }
    const OptionSpec* spec = schema.find(key);
    if (!spec) {
      r.unknownKeys << QStringLiteral("%1: unknown option %2").arg(where(kv.first), key);
      continue;
    }
    const auto bad = [&] {
      r.typeErrors.insert(key, QStringLiteral("%1: expected %2").arg(where(node), typeName(*spec)));
    };
    // "None", "null", "~" for a number mean no value, as the worker reads them.
    if (node.IsNull() || (node.IsScalar() && contract::is_null_word(spec->rule().type, node.Scalar()))) {
      r.values.insert(key, QVariant());
      continue;
    }
    OptionSpec one = *spec;
    one.list = false;
    if (spec->list) {
      if (!node.IsSequence()) {
        bad();
        continue;
      }
      QVariantList items;
      bool fits = true;
      for (const auto& item : node) {
        const auto v =
            item.IsScalar() ? OptionSchema::scalarFromText(one, QString::fromStdString(item.Scalar())) : std::nullopt;
        if (!v) {
          fits = false;
          break;
        }
        items << *v;
      }
      if (fits) r.values.insert(key, items);
      else bad();
      continue;
    }
    const auto v =
        node.IsScalar() ? OptionSchema::scalarFromText(one, QString::fromStdString(node.Scalar())) : std::nullopt;
    if (v) r.values.insert(key, *v);
    else bad();
  }
  return r;
}

QVariantMap RunYamlCodec::absolutePaths(const OptionSchema& schema, const QVariantMap& values, const QString& dir) {
  QVariantMap out = values;
  const QDir base(dir);
  auto resolve = [&base](const QVariant& v) {
    const QString p = v.toString();
    return p.isEmpty() ? v : QVariant(QDir::cleanPath(base.absoluteFilePath(p)));
  };
  for (auto it = out.begin(); it != out.end(); ++it) {
    const OptionSpec* s = schema.find(it.key());
    if (!s || s->type != QLatin1String("path") || it->isNull()) continue;
    if (s->list) {
      QVariantList items = it->toList();
      for (QVariant& x : items) x = resolve(x);
      *it = items;
    } else {
      *it = resolve(*it);
    }
  }
  return out;
}

}  // namespace ws
