#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dataset verbs through the real worker on the demo data: import a folder of clips with
# sidecar captions (problems on stderr, an atomic write with a .bak), export captions back,
# split a video at given and detected cuts (dry run writes nothing), dedupe finds a copy and
# only it; bad input gives one-line errors and exit codes.
set -euo pipefail
W="$1"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! "$W" demo-data "$T/demo" --seed 5 > /dev/null 2> "$T/demo.err"; then
  if grep -q "video support is not built" "$T/demo.err"; then echo "SKIP: no video support"; exit 77; fi
  cat "$T/demo.err" >&2; fail "demo-data failed"
fi
D="$T/demo"
V="$D/videos"
n_videos=$(ls "$V"/*.mp4 | wc -l)

# export-captions writes a .txt beside every file; import reads them back into the same texts.
"$W" dataset export-captions "$D/metadata.json" > "$T/exp.out" || fail "export-captions"
grep -q "wrote" "$T/exp.out" || fail "export-captions summary"
first=$(ls "$V"/*.mp4 | head -1)
[ -s "${first%.mp4}.txt" ] || fail "no sidecar caption for $first"
printf 'not a video' > "$V/zz_broken.mp4"
"$W" dataset import "$V" --output "$T/meta.json" > "$T/imp.out" 2> "$T/imp.err" || { cat "$T/imp.err"; fail "import"; }
grep -q "zz_broken.mp4: unreadable" "$T/imp.err" || { cat "$T/imp.err"; fail "broken file not reported"; }
rows=$(grep -c '"file_path"' "$T/meta.json")
[ "$rows" -eq "$n_videos" ] || fail "import wrote $rows rows for $n_videos videos"
caption=$(cat "${first%.mp4}.txt")
grep -qF "\"text\": \"$caption\"" "$T/meta.json" || fail "the sidecar caption is not the row's text"
grep -q '"frames": ' "$T/meta.json" || fail "no frame counts"
# Importing again keeps the previous file as .bak; --min_frames leaves short clips out.
"$W" dataset import "$V" --output "$T/meta.json" --min_frames 100000 > /dev/null 2>&1 && fail "import of nothing usable should fail"
[ ! -e "$T/meta.json.bak" ] || fail "a failed import touched the metadata"
"$W" dataset import "$V" --output "$T/meta.json" > /dev/null 2>&1 || fail "second import"
cmp -s "$T/meta.json" "$T/meta.json.bak" || fail "no identical .bak after a second import"

# split: a dry run prints cuts and writes nothing; given cuts make clips with their ranges.
"$W" dataset split "$first" --dry_run --json > "$T/dry.json" || fail "split --dry_run"
grep -q '"cuts":\[\]' "$T/dry.json" || { cat "$T/dry.json"; fail "a single synthetic shot has no cuts"; }
frames=$(sed -n 's/.*"frames":\([0-9]*\).*/\1/p' "$T/dry.json")
"$W" dataset split "$first" --output_dir "$T/scenes" --cuts 10,20 > "$T/split.out" || fail "split --cuts"
[ "$(ls "$T/scenes"/*.mp4 | wc -l)" -eq 3 ] || fail "three scenes expected"
grep -q '"frame_range": \[' "$T/scenes/metadata.json" || fail "no frame_range"
tr -d ' \n' < "$T/scenes/metadata.json" | grep -q "\"frame_range\":\[20,$frames\]" || fail "last range is not [20, $frames)"
"$W" dataset split "$first" --output_dir "$T/scenes" --cuts 10,20 > /dev/null 2> "$T/again.err" && fail "split over existing clips"
grep -q "exists" "$T/again.err" || fail "no 'exists' error"
rc=0; "$W" dataset split "$first" --output_dir "$T/s2" --threshold nan > /dev/null 2> "$T/nan.err" || rc=$?
[ $rc -eq 1 ] || fail "--threshold nan exit $rc, expected 1"
grep -q "threshold" "$T/nan.err" || fail "nan threshold message"
"$W" dataset split "$first" --output_dir "$T/s3" --cuts 0 > /dev/null 2>&1 && fail "a cut at frame 0 accepted"
[ ! -e "$T/s2" ] && [ ! -e "$T/s3/metadata.json" ] || fail "a refused split wrote files"

# dedupe: a copy of one clip under another name is the one pair; --json is only the list.
cp "$first" "$V/copy_of_first.mp4"
"$W" dataset import "$V" --output "$T/dup.json" > /dev/null 2>&1 || fail "import with a copy"
"$W" dataset dedupe "$T/dup.json" --json > "$T/dedupe.json" 2> "$T/dedupe.err" || fail "dedupe"
python3 - "$T/dedupe.json" "$(basename "$first")" <<'PY' || fail "dedupe result"
import json, os, sys
pairs = json.load(open(sys.argv[1]))
assert len(pairs) == 1, pairs
assert {pairs[0]["a"], pairs[0]["b"]} == {"demo/videos/" + sys.argv[2], "demo/videos/copy_of_first.mp4"}, pairs
assert pairs[0]["similarity"] == 1.0, pairs
PY
rc=0; "$W" dataset dedupe "$T/dup.json" --threshold 2 > /dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "--threshold 2 exit $rc, expected 1"
# trim: in and out points as the row's `trim`, written atomically with a backup, the video untouched;
# a trim past the file is refused and changes nothing; --clear takes it away.
cp "$T/dup.json" "$T/trim.json"
sum=$(sha256sum "$first" | cut -d' ' -f1)
"$W" dataset trim "$T/trim.json" --row 0 --in 2 --out 9 > /dev/null 2> "$T/trim.err" || fail "trim: $(cat "$T/trim.err")"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r["trim"] == [2, 9], r' "$T/trim.json" \
  || fail "no trim [2, 9] in row 0"
cmp -s "$T/trim.json.bak" "$T/dup.json" || fail "the previous metadata.json was not kept as .bak"
[ "$(sha256sum "$first" | cut -d' ' -f1)" = "$sum" ] || fail "trim modified a video"
cp "$T/trim.json" "$T/trim.before"
"$W" dataset trim "$T/trim.json" --row 0 --in 0 --out 100000 > /dev/null 2> "$T/trim.err" && fail "a trim past the file accepted"
grep -q "past the file" "$T/trim.err" || fail "trim past the end: $(cat "$T/trim.err")"
cmp -s "$T/trim.json" "$T/trim.before" || fail "a refused trim changed the metadata"
"$W" dataset trim "$T/trim.json" --row 0 --clear > /dev/null 2>&1 || fail "trim --clear"
python3 -c 'import json,sys; assert "trim" not in json.load(open(sys.argv[1]))[0]' "$T/trim.json" || fail "trim not cleared"
"$W" dataset trim "$T/trim.json" --row 99 --in 0 --out 5 > /dev/null 2>&1 && fail "a missing row accepted"

rc=0; "$W" dataset bogus > /dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "unknown subcommand exit $rc"
"$W" dataset import "$T/nowhere" --output "$T/x.json" > /dev/null 2> "$T/nowhere.err" && fail "import of a missing folder"
[ "$(wc -l < "$T/nowhere.err")" -eq 1 ] || fail "not a one-line error"
echo "dataset verbs: ok"
