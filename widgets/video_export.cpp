// SPDX-License-Identifier: Apache-2.0
#include "video_export.h"

#include <QFont>
#include <QImage>
#include <QPainter>
#include <QtConcurrent>

#include <algorithm>
#include <memory>
#include <vector>

#ifdef WANSTUDIO_HAVE_VIDEO
#include "video/video_decode.h"
#include "video/video_encode.h"
#endif

namespace ws {

bool exportSideBySide(const QList<ExportVideo>& videos, const QString& outPath, QString* error,
                      const std::function<void(int, int)>& progress, const std::atomic_bool* abort) {
#ifdef WANSTUDIO_HAVE_VIDEO
  if (videos.isEmpty()) {
    if (error) *error = QStringLiteral("nothing to export");
    return false;
  }
  try {
    std::vector<std::unique_ptr<video::VideoReader>> readers;
    std::vector<int64_t> counts;
    int64_t frames = 0;
    double fps = 16.0;
    for (const ExportVideo& v : videos) {
      readers.push_back(std::make_unique<video::VideoReader>(v.path.toStdString()));
      counts.push_back(readers.back()->frame_count());
      frames = std::max(frames, counts.back());
      if (readers.size() == 1 && readers.back()->info().fps > 0) fps = readers.back()->info().fps;
    }
    // Every pane at the first video's height; widths keep each video's aspect ratio.
    const video::RgbFrame first = readers[0]->read(0);
    const int paneH = first.height + (first.height % 2);
    const int titleH = std::max(16, paneH / 12);
    std::vector<int> widths;
    for (size_t i = 0; i < readers.size(); ++i) {
      const auto& info = readers[i]->info();
      const int w = info.height > 0 ? int(std::lround(double(info.width) * paneH / double(info.height))) : first.width;
      widths.push_back(std::max(2, w + (w % 2)));
    }
    int totalW = 0;
    for (int w : widths) totalW += w;
    const int totalH = paneH + titleH + ((paneH + titleH) % 2);
    video::EncodeOptions eo;
    eo.fps = fps;
    video::VideoWriter writer(outPath.toStdString(), totalW, totalH, eo);
    std::vector<QImage> last(readers.size());
    for (int64_t t = 0; t < frames; ++t) {
      if (abort && abort->load()) {
        if (error) *error = QStringLiteral("cancelled");
        return false;  // the writer's destructor removes its temporary file
      }
      QImage canvas(totalW, totalH, QImage::Format_RGB888);
      canvas.fill(Qt::black);
      QPainter p(&canvas);
      QFont font = p.font();
      font.setPixelSize(std::max(9, titleH * 2 / 3));
      p.setFont(font);
      int x = 0;
      for (size_t i = 0; i < readers.size(); ++i) {
        if (t < counts[i]) {
          const video::RgbFrame f = readers[i]->read(t);
          last[i] = QImage(f.data.data(), f.width, f.height, f.width * 3, QImage::Format_RGB888).copy();
        }
        if (!last[i].isNull()) p.drawImage(QRect(x, titleH, widths[i], paneH), last[i]);
        p.setPen(Qt::white);
        p.drawText(QRect(x + 4, 0, widths[i] - 8, titleH), Qt::AlignVCenter | Qt::AlignLeft, videos[int(i)].title);
        x += widths[i];
      }
      p.end();
      video::RgbFrame out(totalW, totalH);
      for (int y = 0; y < totalH; ++y)
        std::copy_n(canvas.constScanLine(y), size_t(totalW) * 3, out.data.data() + size_t(y) * size_t(totalW) * 3);
      writer.write(out);
      if (progress) progress(int(t + 1), int(frames));
    }
    writer.finish();
    return true;
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }
#else
  Q_UNUSED(videos)
  Q_UNUSED(outPath)
  Q_UNUSED(progress)
  Q_UNUSED(abort)
  if (error) *error = QStringLiteral("this build has no video support");
  return false;
#endif
}

QFuture<QString> exportSideBySideInBackground(QList<ExportVideo> videos, QString outPath,
                                              std::shared_ptr<std::atomic_bool> abort) {
  return QtConcurrent::run([videos = std::move(videos), outPath = std::move(outPath), abort = std::move(abort)] {
    QString error;
    return exportSideBySide(videos, outPath, &error, {}, abort.get()) ? QString() : error;
  });
}

}  // namespace ws
