// SPDX-License-Identifier: Apache-2.0
#include "batch_progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "runfolder/event_format.h"

namespace ws {
namespace {

void write(std::FILE* f, const QString& text) {
  const QByteArray bytes = text.toUtf8();
  std::fwrite(bytes.constData(), 1, size_t(bytes.size()), f);
  std::fflush(f);
}

}  // namespace

BatchProgress::BatchProgress(std::FILE* out, bool live) : out_(out), live_(live) {}

int BatchProgress::terminalColumns(std::FILE* f) {
  struct winsize ws {};
  if (::ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

QString BatchProgress::render(const RunEvents::StepPoint& p, qint64 maxSteps, int columns) {
  QString s = QStringLiteral("step %1").arg(p.step);
  if (maxSteps > 0) {
    const double f = std::clamp(double(p.step) / double(maxSteps), 0.0, 1.0);
    constexpr int kBar = 20;
    const int filled = int(std::lround(f * kBar));
    s += QStringLiteral("/%1 [%2%3] %4%")
             .arg(maxSteps)
             .arg(QString(filled, QLatin1Char('#')), QString(kBar - filled, QLatin1Char('.')))
             .arg(int(std::floor(f * 100)), 3);
  }
  if (!p.expert.isEmpty() && p.expert != QLatin1String("upsampler")) s += QStringLiteral(" [%1]").arg(p.expert);
  if (std::isfinite(p.loss)) s += QStringLiteral("  loss %1").arg(QString::number(p.loss, 'g', 5));
  if (std::isfinite(p.samplesPerS)) s += QStringLiteral("  %1 clips/s").arg(QString::number(p.samplesPerS, 'g', 3));
  if (std::isfinite(p.etaS)) s += QStringLiteral("  eta %1").arg(formatDuration(p.etaS));
  // One column less than the terminal: writing the last column wraps on some terminals.
  if (columns > 1 && s.size() > columns - 1) s.truncate(columns - 1);
  return s;
}

void BatchProgress::step(const RunEvents::StepPoint& p, qint64 maxSteps, const QString& plainText) {
  if (!live_) {
    write(out_, plainText + QLatin1Char('\n'));
    return;
  }
  // Asked every time: the terminal may have been resized.
  current_ = render(p, maxSteps, terminalColumns(out_));
  draw();
}

void BatchProgress::print(std::FILE* f, const QString& line) {
  clearLine();
  write(f, line + QLatin1Char('\n'));
  draw();
}

void BatchProgress::finish() {
  if (live_ && !current_.isEmpty()) write(out_, QStringLiteral("\r\x1b[K") + current_ + QLatin1Char('\n'));
  current_.clear();
}

void BatchProgress::clearLine() {
  if (live_ && !current_.isEmpty()) write(out_, QStringLiteral("\r\x1b[K"));
}

void BatchProgress::draw() {
  if (live_ && !current_.isEmpty()) write(out_, QStringLiteral("\r\x1b[K") + current_);
}

}  // namespace ws
