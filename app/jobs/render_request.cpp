// SPDX-License-Identifier: Apache-2.0
#include "jobs/render_request.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QJsonDocument>

#include <cmath>

namespace ws {
namespace {

QString cfg(const QJsonObject& c, const char* key) {
  const QJsonValue v = c.value(QLatin1String(key));
  return v.isString() ? v.toString() : QString();
}

// Path, size and modification time of every file under `dir` (sorted): new weights under the
// same name give another key without hashing gigabytes.
void addFiles(QCryptographicHash& h, const QString& dir) {
  QStringList lines;
  QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QFileInfo fi(it.next());
    lines << QStringLiteral("%1|%2|%3")
                 .arg(QDir(dir).relativeFilePath(fi.filePath()))
                 .arg(fi.size())
                 .arg(fi.lastModified().toMSecsSinceEpoch());
  }
  lines.sort();
  h.addData(lines.join(QLatin1Char('\n')).toUtf8());
}

void addFile(QCryptographicHash& h, const QString& path) {
  const QFileInfo fi(path);
  h.addData(QStringLiteral("%1|%2|%3\n")
                .arg(fi.absoluteFilePath())
                .arg(fi.size())
                .arg(fi.lastModified().toMSecsSinceEpoch())
                .toUtf8());
}

double num(const QJsonObject& o, const char* key) {
  const QJsonValue v = o.value(QLatin1String(key));
  return v.isDouble() ? v.toDouble() : std::nan("");
}

}  // namespace

QString RenderRequest::checkpointDir() const {
  return QDir(runDir).filePath(QStringLiteral("checkpoint-%1").arg(step));
}

QString RenderRequest::label() const {
  return QStringLiteral("%1 · step %2").arg(QFileInfo(runDir).fileName()).arg(step);
}

QString RenderRequest::problem() const {
  if (job != QLatin1String("experts") && job != QLatin1String("upsampler"))
    return QStringLiteral("%1: only expert and upsampler runs can be rendered (job \"%2\")").arg(runDir, job);
  if (step < 0 || !QFileInfo(checkpointDir()).isDir())
    return QStringLiteral("%1: no checkpoint-%2").arg(runDir).arg(step);
  if (cfg(config, "vae_path").isEmpty())
    return QStringLiteral("%1: the run names no vae_path to decode with").arg(QFileInfo(runDir).fileName());
  if (settings.frames < 1 || (settings.frames - 1) % 4 != 0)
    return QStringLiteral("frames must be 4k+1 (1, 5, 9, 13, 17, ...)");
  if (job == QLatin1String("experts")) {
    if (settings.prompt.trimmed().isEmpty()) return QStringLiteral("type a prompt to render");
    if (cfg(config, "text_encoder_path").isEmpty() && cfg(config, "text_embeddings_dir").isEmpty())
      return QStringLiteral("the run has no text encoder to encode the prompt with");
    if (settings.width < 16 || settings.height < 16 || settings.width % 16 || settings.height % 16)
      return QStringLiteral("the size must be a multiple of 16 (at least 16×16)");
    if (settings.steps < 1) return QStringLiteral("at least one denoising step");
  } else {
    if (settings.video.isEmpty()) return QStringLiteral("choose a video to upsample");
    if (!QFileInfo(settings.video).isFile()) return QStringLiteral("%1: no such file").arg(settings.video);
  }
  return {};
}

QString RenderRequest::cacheKey() const {
  QCryptographicHash h(QCryptographicHash::Sha1);
  h.addData(QStringLiteral("%1\n%2\n").arg(job, QStringLiteral(WANSTUDIO_VERSION)).toUtf8());
  addFiles(h, checkpointDir());
  addFile(h, cfg(config, "vae_path"));
  const RenderSettings& s = settings;
  if (job == QLatin1String("experts")) {
    addFile(h, cfg(config, "text_encoder_path"));
    h.addData(QStringLiteral("%1\n%2x%3 %4f %5 steps seed %6\n")
                  .arg(s.prompt)
                  .arg(s.width)
                  .arg(s.height)
                  .arg(s.frames)
                  .arg(s.steps)
                  .arg(s.seed)
                  .toUtf8());
  } else {
    addFile(h, s.video);
    h.addData(QStringLiteral("%1 %2f ema %3 step %4\n").arg(s.height).arg(s.frames).arg(s.ema).arg(step).toUtf8());
  }
  return QString::fromLatin1(h.result().toHex());
}

QStringList RenderRequest::arguments(const QString& outDir, const QString& textDir) const {
  const RenderSettings& s = settings;
  QStringList a;
  if (job == QLatin1String("experts")) {
    a << QStringLiteral("sample") << QStringLiteral("--ckpt_dir") << checkpointDir() << QStringLiteral("--prompt")
      << s.prompt;
    const QString encoder = cfg(config, "text_encoder_path");
    if (!encoder.isEmpty())
      a << QStringLiteral("--text_embeddings_dir") << textDir << QStringLiteral("--text_encoder_path") << encoder
        << QStringLiteral("--tokenizer_path") << cfg(config, "tokenizer_path");
    else a << QStringLiteral("--text_embeddings_dir") << cfg(config, "text_embeddings_dir");
    if (!cfg(config, "config_path").isEmpty()) a << QStringLiteral("--config_path") << cfg(config, "config_path");
    // The run's own expert split (a flag wins over the model YAML's boundary, as in training).
    if (config.value(QStringLiteral("boundary_ratio")).isDouble())
      a << QStringLiteral("--boundary_ratio")
        << QString::number(config.value(QStringLiteral("boundary_ratio")).toDouble(), 'g', 17);
    a << QStringLiteral("--vae_path") << cfg(config, "vae_path") << QStringLiteral("--size")
      << QStringLiteral("%1x%2").arg(s.width).arg(s.height) << QStringLiteral("--frame_num")
      << QString::number(s.frames) << QStringLiteral("--sample_steps") << QString::number(s.steps)
      << QStringLiteral("--base_seed") << QString::number(s.seed) << QStringLiteral("--save_file")
      << QDir(outDir).filePath(QStringLiteral("video.mp4"));
  } else {
    a << QStringLiteral("upsample") << QStringLiteral("--checkpoint") << checkpointDir();
    if (s.ema) a << QStringLiteral("--ema");
    a << QStringLiteral("--vae") << cfg(config, "vae_path") << QStringLiteral("--video") << s.video
      << QStringLiteral("--out") << outDir << QStringLiteral("--video_sample_size") << QString::number(s.height)
      << QStringLiteral("--video_sample_n_frames") << QString::number(s.frames) << QStringLiteral("--step")
      << QString::number(step);
  }
  return a;
}

QJsonObject RenderResult::toJson() const {
  const QDir d(dir);
  QJsonObject o{{QStringLiteral("video"), d.relativeFilePath(video)}, {QStringLiteral("seconds"), seconds}};
  if (!reference.isEmpty()) o[QStringLiteral("reference")] = d.relativeFilePath(reference);
  if (!lowres.isEmpty()) o[QStringLiteral("lowres")] = d.relativeFilePath(lowres);
  for (auto [key, v] : {std::pair<const char*, double>{"psnr", psnr},
                        {"psnr_lowres", psnrLowres},
                        {"psnr_ceiling", psnrCeiling},
                        {"psnr_source", psnrSource}})
    if (std::isfinite(v)) o[QLatin1String(key)] = v;
  return o;
}

RenderResult RenderResult::fromJson(const QJsonObject& o, const QString& dir) {
  RenderResult r;
  const QDir d(dir);
  r.dir = dir;
  auto path = [&](const char* key) {
    const QString p = o.value(QLatin1String(key)).toString();
    return p.isEmpty() ? QString() : QDir::cleanPath(d.absoluteFilePath(p));
  };
  r.video = path("video");
  r.reference = path("reference");
  r.lowres = path("lowres");
  r.psnr = num(o, "psnr");
  r.psnrLowres = num(o, "psnr_lowres");
  r.psnrCeiling = num(o, "psnr_ceiling");
  r.psnrSource = num(o, "psnr_source");
  r.seconds = o.value(QStringLiteral("seconds")).toDouble();
  return r;
}

}  // namespace ws
