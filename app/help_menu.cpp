// SPDX-License-Identifier: Apache-2.0
#include "help_menu.h"

#include <QAction>
#include <QCoreApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QUrl>

#include "jobs/engine_locator.h"

namespace ws {

QString documentationDir() {
  const QDir appDir(QCoreApplication::applicationDirPath());
  QStringList candidates{appDir.filePath(QStringLiteral("../share/doc/wanstudio"))};
#ifdef WANSTUDIO_SOURCE_DIR
  candidates << QStringLiteral(WANSTUDIO_SOURCE_DIR);
#endif
  for (const QString& c : candidates)
    if (QFileInfo::exists(QDir(c).filePath(QStringLiteral("README.md")))) return QDir::cleanPath(c);
  return {};
}

QStringList shortcutLines(QMainWindow* window) {
  QStringList lines;
  for (QAction* menu : window->menuBar()->actions())
    if (menu->menu())
      for (QAction* a : menu->menu()->actions())
        if (!a->shortcut().isEmpty())
          lines << QStringLiteral("%1\t%2").arg(a->shortcut().toString(QKeySequence::NativeText),
                                                a->text().remove(QLatin1Char('&')));
  lines << QObject::tr("Space\tPlay or pause the player (whenever it is on screen)")
        << QObject::tr("Left / Right\tOne frame back / forward") << QObject::tr("Home / End\tFirst / last frame")
        << QObject::tr("F11\tFull screen (a popped-out player)")
        << QObject::tr("Ctrl+S\tSave the dataset (Dataset page)")
        << QObject::tr("Ctrl+F\tFind an option in New Run's form; Tab goes to its field")
        << QObject::tr("Delete\tRemove the selected dataset rows (Undo remove puts them back)")
        << QObject::tr("Ctrl+Return\tAccept the row's suggested caption (Dataset page)")
        << QObject::tr("Ctrl+Backspace\tReject the row's suggested caption (in the caption editor it deletes a word)")
        << QObject::tr("Delete (scene timeline)\tDrop the selected cut; Left / Right move it");
  return lines;
}

void addHelpMenu(QMainWindow* window, const std::function<void()>& gettingStarted) {
  QMenu* help = window->menuBar()->addMenu(QObject::tr("&Help"));
  help->addAction(QObject::tr("&Getting Started"), QKeySequence::HelpContents, window, gettingStarted);
  help->addAction(QObject::tr("&Keyboard Shortcuts"), window, [window] {
    QString rows;
    for (const QString& line : shortcutLines(window)) {
      const QStringList kv = line.split(QLatin1Char('\t'));
      rows += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                  .arg(kv.value(0).toHtmlEscaped(), kv.value(1).toHtmlEscaped());
    }
    QMessageBox::information(window, QObject::tr("Keyboard Shortcuts"), QStringLiteral("<table>%1</table>").arg(rows));
  });
  help->addAction(QObject::tr("&Documentation"), window, [window] {
    const QString dir = documentationDir();
    const QString readme = QDir(dir).filePath(QStringLiteral("README.md"));
    // Never silent: without a viewer (no desktop, no file manager) the path is the answer.
    if (dir.isEmpty())
      QMessageBox::information(window, QObject::tr("Documentation"),
                               QObject::tr("The documentation is not installed with this build."));
    else if (!QDesktopServices::openUrl(QUrl::fromLocalFile(readme)))
      QMessageBox::information(window, QObject::tr("Documentation"),
                               QObject::tr("No viewer opened it. The documentation is in %1 (README.md, and the "
                                           "design notes in docs/design/).")
                                   .arg(dir));
  });
  help->addAction(QObject::tr("&About Wan Studio"), window, [window] {
    QMessageBox::about(window, QObject::tr("About Wan Studio"),
                       QObject::tr("<b>Wan Studio %1</b><p>Training studio for Wan 2.2 video models: the latent "
                                   "upsampler and the dual-expert DiT.</p><p>Worker: %2</p>")
                           .arg(QStringLiteral(WANSTUDIO_VERSION), engineExecutable().toHtmlEscaped()));
  });
}

}  // namespace ws
