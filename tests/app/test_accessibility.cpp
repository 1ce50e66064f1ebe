// SPDX-License-Identifier: Apache-2.0
// Every control of the studio has a name a screen reader can speak: the name Qt's accessibility
// layer gives AT-SPI (its own text for a button or check box, else the accessible name set on it,
// else its label buddy). Walks the main window with every page and dock, and the New Run dialog.
#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAccessible>
#include <QComboBox>
#include <QHeaderView>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTextEdit>
#include <QtTest>

#include "dialogs/new_run_dialog.h"
#include "dialogs/preferences_dialog.h"
#include "item_models/dataset_model.h"
#include "pages/duplicates_dialog.h"
#include "pages/scene_split_dialog.h"
#include "jobs/job_manager.h"
#include "main_window.h"
#include "test_paths.h"

using namespace ws;

namespace {

bool isControl(const QWidget* w) {
  return qobject_cast<const QAbstractButton*>(w) || qobject_cast<const QLineEdit*>(w) ||
         qobject_cast<const QAbstractSpinBox*>(w) || qobject_cast<const QComboBox*>(w) ||
         qobject_cast<const QPlainTextEdit*>(w) || qobject_cast<const QTextEdit*>(w) ||
         qobject_cast<const QAbstractItemView*>(w) || qobject_cast<const QAbstractSlider*>(w);
}

// "Class objectName (parent chain)" of every control without a spoken name.
QStringList unnamed(QWidget* root) {
  QStringList out;
  for (QWidget* w : root->findChildren<QWidget*>()) {
    if (!isControl(w)) continue;
    // The line edit inside a combo box or spin box is spoken through its owner.
    if (qobject_cast<QLineEdit*>(w) &&
        (qobject_cast<QComboBox*>(w->parent()) || qobject_cast<QAbstractSpinBox*>(w->parent())))
      continue;
    // Qt's own parts of a control are spoken through it: scroll bars, a combo box's popup list, a
    // line edit's clear button.
    if (qobject_cast<QScrollBar*>(w) || QByteArray(w->metaObject()->className()).startsWith("QLineEditIconButton"))
      continue;
    // Table headers are spoken by their sections; Qt's own buttons (the table corner, the menu
    // bar's overflow) carry no text of ours.
    if (qobject_cast<QHeaderView*>(w) || QByteArray(w->metaObject()->className()) == "QTableCornerButton" ||
        w->objectName().startsWith(QLatin1String("qt_")))
      continue;
    bool internal = false;
    for (QObject* p = w->parent(); p; p = p->parent())
      if (QByteArray(p->metaObject()->className()) == "QComboBoxPrivateContainer") internal = true;
    if (internal) continue;
    QAccessibleInterface* iface = QAccessible::queryAccessibleInterface(w);
    const QString name = iface ? iface->text(QAccessible::Name).trimmed() : QString();
    if (!name.isEmpty()) continue;
    QString where;
    for (QObject* p = w->parent(); p && p != root; p = p->parent())
      where += QLatin1Char('<') + QString::fromLatin1(p->metaObject()->className());
    out << QStringLiteral("%1 '%2' %3").arg(QString::fromLatin1(w->metaObject()->className()), w->objectName(), where);
  }
  return out;
}

}  // namespace

class TestAccessibility : public QObject {
  Q_OBJECT
  QTemporaryDir ws_;

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    qputenv("WANSTUDIO_ENGINE", WS_ENGINE_EXE);  // the real worker's schemas fill the New Run form
  }

  void mainWindowControlsAreNamed() {
    MainWindow w(ws_.path(), 60'000);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const QStringList missing = unnamed(&w);
    for (const QString& m : missing) qInfo("unnamed: %s", qPrintable(m));
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 unnamed:\n").arg(missing.size()) + missing.join('\n')));
  }

  void newRunDialogControlsAreNamed() {
    JobManager jobs;
    NewRunDialog d(&jobs, ws_.path(), QString());
    d.show();
    QVERIFY(d.schemaError(QStringLiteral("upsampler")).isEmpty());  // the form has its fields
    if (!qEnvironmentVariableIsEmpty("WS_SCREENSHOT_DIR")) {        // the README's picture of New Run
      d.setRunName(QStringLiteral("my-first-run"));
      d.resize(1000, 720);
      QVERIFY(QTest::qWaitForWindowExposed(&d));
      QVERIFY(d.grab().save(QDir(qEnvironmentVariable("WS_SCREENSHOT_DIR")).filePath(QStringLiteral("new-run.png"))));
    }
    const QStringList missing = unnamed(&d);
    for (const QString& m : missing) qInfo("unnamed: %s", qPrintable(m));
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 unnamed:\n").arg(missing.size()) + missing.join('\n')));
  }

  // The dataset page's own dialogs: the scene splitter and the duplicates list.
  void datasetDialogsControlsAreNamed() {
    DatasetModel model;
    for (QDialog* d : std::initializer_list<QDialog*>{new SceneSplitDialog(ws_.filePath(QStringLiteral("none.mp4"))),
                                                      new DuplicatesDialog(&model), new PreferencesDialog}) {
      d->show();
      const QStringList missing = unnamed(d);
      for (const QString& m : missing) qInfo("unnamed: %s", qPrintable(m));
      QVERIFY2(missing.isEmpty(),
               qPrintable(QStringLiteral("%1 unnamed in %2:\n").arg(missing.size()).arg(d->metaObject()->className()) +
                          missing.join('\n')));
      delete d;
    }
  }
};

QTEST_MAIN(TestAccessibility)
#include "test_accessibility.moc"
