// SPDX-License-Identifier: Apache-2.0
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

// A training worker in miniature, for the whole-run tests: `train-* --config Y [--output_dir D]
// [--resume_from_checkpoint latest|DIR/checkpoint-N] [--max_train_steps N]`. Reads output_dir, max_train_steps
// and checkpointing_steps from Y, writes D/run.yaml, appends events to stdout and
// D/events.jsonl, writes checkpoint-N folders, resumes from the newest one, and on a `cancel`
// line or SIGTERM finishes the step, checkpoints and exits 130. STEP_SLEEP paces it.
inline const char* kTrainerBody = R"sh(
yaml=; out=; resume=; max=; verb=$1; shift
while [ $# -gt 0 ]; do
  case "$1" in
    --config) yaml=$2; shift 2;;
    --output_dir) out=$2; shift 2;;
    --resume_from_checkpoint) resume=$2; shift 2;;
    --max_train_steps) max=$2; shift 2;;
    *) shift;;
  esac
done
key() { sed -n "s/^$1: *//p" "$yaml" | head -1; }
[ -n "$out" ] || out=$(key output_dir)
[ -n "$max" ] || max=$(key max_train_steps)
every=$(key checkpointing_steps); every=${every:-1000000}
mkdir -p "$out"
[ "$(readlink -f "$yaml")" = "$(readlink -f "$out/run.yaml")" ] || cp "$yaml" "$out/run.yaml"
emit() { local l; l=$(ev "$@"); echo "$l"; echo "$l" >> "$out/events.jsonl"; }
from=0
if [ "$resume" = latest ]; then
  for d in "$out"/checkpoint-*; do n=${d##*/checkpoint-}; [ -d "$d" ] && [ "$n" -gt "$from" ] && from=$n; done
elif [ -n "$resume" ]; then
  from=${resume##*/checkpoint-}
fi
echo "training $verb in $out from step $from" >&2
emit started "\"job\":\"upsampler\",\"resume_step\":$from,\"max_train_steps\":$max,\"world_size\":1,\"config\":{\"output_dir\":\"$out\"}"
cancel=0
trap 'cancel=1' TERM INT
exec 3<&0
( while read -r l <&3; do [ "$l" = cancel ] && kill -TERM $$; done ) &
reader=$!
trap 'kill $reader 2>/dev/null' EXIT
ckpt() { mkdir -p "$out/checkpoint-$1"; emit checkpoint "\"step\":$1,\"path\":\"checkpoint-$1\""; }
for ((s = from + 1; s <= max; s++)); do
  sleep ${STEP_SLEEP:-0.05}
  loss=$(awk "BEGIN{print 1/sqrt($s)}")
  emit step "\"step\":$s,\"expert\":\"upsampler\",\"expert_step\":$s,\"loss\":$loss,\"lr\":0.0001,\"grad_norm\":1.0,\"samples_per_s\":4.0,\"eta_s\":$((max - s))"
  [ $((s % 5)) -eq 0 ] && emit heartbeat '"rss_bytes":1000000'
  [ $((s % every)) -eq 0 ] && ckpt $s
  if [ $cancel = 1 ]; then
    [ -d "$out/checkpoint-$s" ] || ckpt $s
    emit finished '"status":"cancelled","step":'$s; exit 130
  fi
done
[ -d "$out/checkpoint-$max" ] || ckpt $max
emit finished '"status":"completed","step":'$max
exit 0
)sh";

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
