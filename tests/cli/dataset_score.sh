#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `dataset score` through the real worker on the demo data: motion, sharpness and brightness on
# every row, written back with a .bak; a row whose file is gone is named and left unscored (exit 1).
# Skipped (77) in a build without OpenCV's optical flow.
set -euo pipefail
W="$1"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! "$W" demo-data "$T/demo" --seed 5 > /dev/null 2> "$T/demo.err"; then
  if grep -q "video support is not built" "$T/demo.err"; then echo "SKIP: no video support"; exit 77; fi
  cat "$T/demo.err" >&2; fail "demo-data failed"
fi
cp "$T/demo/metadata.json" "$T/meta.json"
rows=$(grep -c '"file_path"' "$T/meta.json")
rc=0; "$W" dataset score "$T/meta.json" --sampling_fps 2 > /dev/null 2> "$T/probe.err" || rc=$?
if [ $rc -ne 0 ] && grep -q "without OpenCV" "$T/probe.err"; then echo "SKIP: built without OpenCV"; exit 77; fi
cp "$T/demo/metadata.json" "$T/meta.json"
sed -i 's#"file_path": "#"file_path": "demo/#' "$T/meta.json"
# score: motion, sharpness and brightness on every row, written back with a .bak; a row whose
# file is gone is named and left unscored (exit 1), the others still scored.
cp "$T/meta.json" "$T/score.json"
"$W" dataset score "$T/score.json" > "$T/score.out" 2> "$T/score.err" || { cat "$T/score.err"; fail "score"; }
[ "$(grep -c '"motion_score"' "$T/score.json")" -eq "$rows" ] || fail "not every row scored"
grep -q '"sharpness"' "$T/score.json" && grep -q '"brightness"' "$T/score.json" || fail "sharpness/brightness missing"
cmp -s "$T/score.json.bak" "$T/meta.json" || fail "score kept no .bak of the unscored file"
sed -i '0,/"file_path": "[^"]*"/s//"file_path": "gone.mp4"/' "$T/meta.json"
rc=0; "$W" dataset score "$T/meta.json" > /dev/null 2> "$T/score2.err" || rc=$?
[ $rc -eq 1 ] || fail "score with a missing file: exit $rc, expected 1"
grep -q "row 0" "$T/score2.err" || fail "the missing row is not named"
[ "$(grep -c '"motion_score"' "$T/meta.json")" -eq $((rows - 1)) ] || fail "the other rows were not scored"
echo "dataset score: ok"
