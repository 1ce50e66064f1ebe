// SPDX-License-Identifier: Apache-2.0
#include "pages/config_view.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "config/run_config.h"
#include "runfolder/run_paths.h"

namespace ws {
namespace {

QString valueText(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::String: return v.toString();
    case QJsonValue::Bool: return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double: return QString::number(v.toDouble(), 'g', 10);
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Array: {
      QStringList parts;
      for (const QJsonValue& x : v.toArray()) parts << valueText(x);
      return QStringLiteral("[%1]").arg(parts.join(QStringLiteral(", ")));
    }
    default: return QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
  }
}

}  // namespace

ConfigView::ConfigView(QWidget* parent) : QWidget(parent) {
  source_ = new QLabel(this);
  source_->setObjectName(QStringLiteral("hint"));
  tree_ = new QTreeWidget(this);
  tree_->setAccessibleName(tr("Run configuration"));
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({tr("Option"), tr("Value")});
  tree_->setRootIsDecorated(false);
  tree_->setAlternatingRowColors(true);
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(source_);
  layout->addWidget(tree_, 1);
}

int ConfigView::optionCount() const { return tree_->topLevelItemCount(); }

void ConfigView::showConfig(const QString& runDir, const QJsonObject& config) {
  if (runDir == shownDir_ && config == shown_ && tree_->topLevelItemCount() > 0) return;
  shownDir_ = runDir;
  shown_ = config;
  tree_->clear();
  if (!config.isEmpty()) {
    source_->setText(tr("Resolved config of the latest start (the `started` event)"));
    for (auto it = config.begin(); it != config.end(); ++it)
      tree_->addTopLevelItem(new QTreeWidgetItem({it.key(), valueText(it.value())}));
    return;
  }
  const QString yaml = runFile(runDir, contract::kRunYaml);
  QString error;
  if (QFileInfo::exists(yaml)) {
    if (const auto cfg = RunConfig::load(yaml, &error)) {
      source_->setText(tr("From %1").arg(yaml));
      for (const auto& kv : cfg->options) tree_->addTopLevelItem(new QTreeWidgetItem({kv.first, kv.second}));
      return;
    }
    source_->setText(error);
    return;
  }
  source_->setText(tr("No config yet: the run has no `started` event and no run.yaml."));
}

}  // namespace ws
