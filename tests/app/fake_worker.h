// Fake workers for the app tests: small bash scripts that play the worker's part of the
// contract (event lines on stdout, exit codes, signals, cancel on stdin).
#pragma once

#include <QDir>
#include <QFile>
#include <QString>

namespace fake {

// ev TYPE 'extra json fields' prints one event line with "type" and "time".
inline const char* kPrelude = R"(#!/bin/bash
now() { date +%s.%N; }
ev() { local t=$1; shift; if [ -n "$1" ]; then echo "{\"type\":\"$t\",\"time\":$(now),$1}"; else echo "{\"type\":\"$t\",\"time\":$(now)}"; fi; }
started() { ev started "\"job\":\"upsampler\",\"resume_step\":0,\"max_train_steps\":${1:-3},\"world_size\":1,\"config\":{\"learning_rate\":0.0001}"; }
step() { ev step "\"step\":$1,\"expert\":\"${2:-upsampler}\",\"expert_step\":$1,\"loss\":0.$((50 - $1)),\"lr\":0.0001,\"grad_norm\":1.5,\"samples_per_s\":2.0,\"eta_s\":10"; }
finished() { ev finished "\"status\":\"$1\",\"step\":${2:-3}"; }
)";

// Writes DIR/NAME as an executable bash script: the prelude above, then `body`.
inline QString writeScript(const QString& dir, const QString& name, const QString& body) {
  const QString path = QDir(dir).filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
  f.write(kPrelude);
  f.write(body.toUtf8());
  f.write("\n");
  f.close();
  f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup);
  return path;
}

inline QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace fake
