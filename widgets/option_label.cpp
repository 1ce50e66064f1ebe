// SPDX-License-Identifier: Apache-2.0
#include "option_label.h"

#include <QHash>
#include <QStringList>

namespace ws {

QString plainLabel(const QString& key) {
  // Abbreviations spelled out or capitalised; "" drops a word that says nothing in prose.
  static const QHash<QString, QString> words = {
      {QStringLiteral("lr"), QStringLiteral("learning-rate")},
      {QStringLiteral("num"), QStringLiteral("number of")},
      {QStringLiteral("n"), QString()},
      {QStringLiteral("dir"), QStringLiteral("folder")},
      {QStringLiteral("meta"), QStringLiteral("metadata")},
      {QStringLiteral("hw"), QStringLiteral("size")},
      {QStringLiteral("cfg"), QStringLiteral("CFG")},
      {QStringLiteral("vae"), QStringLiteral("VAE")},
      {QStringLiteral("ema"), QStringLiteral("EMA")},
      {QStringLiteral("dit"), QStringLiteral("DiT")},
      {QStringLiteral("lora"), QStringLiteral("LoRA")},
      {QStringLiteral("t5"), QStringLiteral("T5")},
      {QStringLiteral("umt5"), QStringLiteral("UMT5")},
      {QStringLiteral("tf32"), QStringLiteral("TF32")},
      {QStringLiteral("fp8"), QStringLiteral("FP8")},
      {QStringLiteral("fp16"), QStringLiteral("FP16")},
      {QStringLiteral("bf16"), QStringLiteral("BF16")},
      {QStringLiteral("8bit"), QStringLiteral("8-bit")},
      {QStringLiteral("adam"), QStringLiteral("Adam")},
      {QStringLiteral("came"), QStringLiteral("CAME")},
      {QStringLiteral("fsdp"), QStringLiteral("FSDP")},
      {QStringLiteral("zero"), QStringLiteral("ZeRO")},
      {QStringLiteral("psnr"), QStringLiteral("PSNR")},
      {QStringLiteral("mse"), QStringLiteral("MSE")},
      {QStringLiteral("gpu"), QStringLiteral("GPU")},
      {QStringLiteral("cpu"), QStringLiteral("CPU")},
      {QStringLiteral("vram"), QStringLiteral("VRAM")},
      {QStringLiteral("id"), QStringLiteral("ID")},
      {QStringLiteral("i2v"), QStringLiteral("I2V")},
      {QStringLiteral("t2v"), QStringLiteral("T2V")},
      {QStringLiteral("ti2v"), QStringLiteral("TI2V")},
      {QStringLiteral("rope"), QStringLiteral("RoPE")},
      {QStringLiteral("sdpa"), QStringLiteral("SDPA")},
      {QStringLiteral("jpeg"), QStringLiteral("JPEG")},
      {QStringLiteral("yaml"), QStringLiteral("YAML")},
  };
  QStringList out;
  for (const QString& part : key.split(QLatin1Char('_'), Qt::SkipEmptyParts)) {
    const auto it = words.constFind(part.toLower());
    if (it == words.constEnd()) out << part;
    else if (!it->isEmpty()) out << *it;
  }
  QString text = out.join(QLatin1Char(' '));
  if (text.isEmpty()) return key;
  text[0] = text[0].toUpper();
  return text;
}

}  // namespace ws
