#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# probe and demo-data through the real worker: a generated dataset probes clean; wrong,
# missing and mistyped sizes are reported (exit 1) and fixed by --fix with a .bak kept; bad
# files and bad metadata give one-line errors; demo-data is deterministic for a seed.
set -euo pipefail
W="$1"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! "$W" demo-data "$T/demo" --seed 3 > "$T/demo.out" 2> "$T/demo.err"; then
  if grep -q "video support is not built" "$T/demo.err"; then echo "SKIP: no video support"; exit 77; fi
  cat "$T/demo.err" >&2; fail "demo-data failed"
fi
M="$T/demo/metadata.json"
[ -f "$M" ] || fail "no metadata.json"
n_rows=$(grep -c '"file_path"' "$M")
[ "$n_rows" -ge 12 ] || fail "expected at least 12 rows, got $n_rows"
grep -q '"type": "image"' "$M" || fail "no image rows"
size_kb=$(du -sk "$T/demo" | cut -f1)
[ "$size_kb" -lt 8000 ] || fail "demo dataset is ${size_kb} KB, expected a few MB"

# A fresh dataset probes clean, as a table and as JSON.
"$W" probe "$M" > "$T/p1.out" || { cat "$T/p1.out"; fail "probe of demo data failed"; }
grep -q "0 with problems" "$T/p1.out" || fail "probe summary"
"$W" probe "$M" --json > "$T/p1.json" || fail "probe --json"
grep -q '"rows_with_problems": 0' "$T/p1.json" || fail "probe --json summary"

# Deterministic for a seed; another seed differs.
# Another folder name length and other heap contents (MALLOC_PERTURB_ fills freed and new memory)
# must not change a byte: the encoder once read memory it never wrote.
MALLOC_PERTURB_=165 "$W" demo-data "$T/demo2-with-a-longer-name" --seed 3 > /dev/null
diff -r -q "$T/demo/videos" "$T/demo2-with-a-longer-name/videos" > /dev/null || fail "demo-data not deterministic"
cmp -s "$M" "$T/demo2-with-a-longer-name/metadata.json" || fail "demo-data metadata not deterministic"
"$W" demo-data "$T/demo2" --seed 3 > /dev/null
diff -r -q "$T/demo/videos" "$T/demo2/videos" > /dev/null || fail "demo-data not deterministic"
cmp -s "$M" "$T/demo2/metadata.json" || fail "demo-data metadata not deterministic"
"$W" demo-data "$T/demo3" --seed 4 > /dev/null
cmp -s "$T/demo/videos/clip_00.mp4" "$T/demo3/videos/clip_00.mp4" && fail "seeds 3 and 4 gave the same clip"

# Wrong size (row 0), missing size (row 1), mistyped size (row 2): problems, exit 1.
cp "$M" "$T/orig.json"
sed -i '0,/"width": 384/s//"width": 999/' "$M"
python_free_delete() { awk -v n="$1" '/"width":/{c++; if (c==n) {next}} {print}' "$2" > "$2.new" && mv "$2.new" "$2"; }
python_free_delete 2 "$M"
sed -i '0,/"height": 384/s//"height": "tall"/' "$M"
cp "$M" "$T/broken.json"
if "$W" probe "$M" > "$T/p2.out"; then cat "$T/p2.out"; fail "probe should exit 1 on a wrong size"; fi
grep -q "metadata says 999x216" "$T/p2.out" || { cat "$T/p2.out"; fail "wrong size not reported"; }
grep -q 'without `width`' "$T/p2.out" || { cat "$T/p2.out"; fail "missing width not reported"; }
grep -q '`height` must be a positive whole number' "$T/p2.out" || { cat "$T/p2.out"; fail "mistyped height not reported"; }

# --fix fills them, keeps the old file as .bak, and the result probes clean.
"$W" probe "$M" --fix > "$T/p3.out" || { cat "$T/p3.out"; fail "probe --fix failed"; }
grep -q "filled in 3 rows" "$T/p3.out" || { cat "$T/p3.out"; fail "fix count"; }
cmp -s "$M.bak" "$T/broken.json" || fail "backup is not the previous file"
"$W" probe "$M" > /dev/null || fail "fixed metadata still has problems"
grep -q '"width": 999' "$M" && fail "wrong width survived --fix"
grep -q '"tall"' "$M" && fail "mistyped height survived --fix"
cp "$M" "$T/fixed.json"
"$W" probe "$M" --fix > "$T/p4.out"
grep -q "nothing to write" "$T/p4.out" || fail "second --fix should write nothing"

# --train_data_dir: relative paths resolve against it.
mkdir -p "$T/elsewhere"
cp "$M" "$T/elsewhere/metadata.json"
if "$W" probe "$T/elsewhere/metadata.json" > /dev/null; then fail "rows should be missing next to the copy"; fi
"$W" probe "$T/elsewhere/metadata.json" --train-data-dir "$T/demo" > /dev/null || fail "--train_data_dir"

# Bad files: each row's reason, and --fix cannot fix them (exit 1, other rows still fixed).
: > "$T/demo/empty.mp4"
echo "not a video" > "$T/demo/text.mp4"
head -c 3000 "$T/demo/videos/clip_01.mp4" > "$T/demo/cut.mp4"
cat > "$T/demo/bad.json" <<JSON
[
  {"file_path": "empty.mp4", "text": "zero bytes"},
  {"file_path": "text.mp4", "text": "text"},
  {"file_path": "cut.mp4", "text": "truncated"},
  {"file_path": "nope.mp4", "text": "missing"},
  {"file_path": "videos/clip_03.mp4", "text": "fine"}
]
JSON
if "$W" probe "$T/demo/bad.json" --fix > "$T/p5.out"; then cat "$T/p5.out"; fail "bad files must exit 1"; fi
grep -q "empty file" "$T/p5.out" || { cat "$T/p5.out"; fail "zero-byte reason"; }
grep -q "not a video or image FFmpeg can read" "$T/p5.out" || { cat "$T/p5.out"; fail "text file reason"; }
grep -q "no such file" "$T/p5.out" || { cat "$T/p5.out"; fail "missing reason"; }
grep -q "4 with problems" "$T/p5.out" || { cat "$T/p5.out"; fail "bad row count"; }
grep -q '"width": 216' "$T/demo/bad.json" || fail "the good row was not fixed"

# Whole-file errors: one line naming the file, exit 1.
echo "[{" > "$T/notjson.json"
if "$W" probe "$T/notjson.json" 2> "$T/e1.err"; then fail "bad JSON must exit 1"; fi
[ "$(wc -l < "$T/e1.err")" -eq 1 ] || { cat "$T/e1.err"; fail "error is not one line"; }
grep -q "notjson.json: not valid JSON" "$T/e1.err" || { cat "$T/e1.err"; fail "bad JSON message"; }
if "$W" probe "$T/absent.json" 2> "$T/e2.err"; then fail "missing metadata must exit 1"; fi
grep -q "absent.json: no such file" "$T/e2.err" || { cat "$T/e2.err"; fail "missing metadata message"; }
if "$W" probe 2> /dev/null; then fail "probe without arguments must exit 1"; fi
"$W" probe --help | grep -q -- "--fix" || fail "probe --help"
"$W" demo-data --help | grep -q -- "--seed" || fail "demo-data --help"
echo "probe.sh: all checks passed"
