#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dataset verbs write into people's data: a kill -9 at any moment of a rewrite leaves either the
# old metadata.json or the new one (never a torn file or none), and the source videos are never
# modified. Each verb is killed at a spread of moments from its start.
source "$(dirname "$0")/../cli/lib/common.sh"
"$engine" dataset --help >/dev/null 2>&1
"$engine" demo-data "$tmp/d" >/dev/null 2>&1 || fail "demo-data"
"$engine" dataset import "$tmp/d" --output "$tmp/new.json" >/dev/null 2>&1 || exit 77  # no video support
before=$(cd "$tmp/d" && find . -type f ! -name 'metadata.json*' -exec sha256sum {} + | sort)
printf '[]\n' > "$tmp/old.json"
for delay in 0 0.05 0.1 0.2 0.3 0.5 0.8 1.2; do
  cp "$tmp/old.json" "$tmp/d/metadata.json"
  "$engine" dataset import "$tmp/d" --output "$tmp/d/metadata.json" >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  python3 - "$tmp/d/metadata.json" "$tmp/old.json" <<'PY' || fail "after kill -9 at ${delay} s: not the old nor a whole new file"
import json, sys
text = open(sys.argv[1]).read()
rows = json.loads(text)  # a torn file fails here
assert text == open(sys.argv[2]).read() or (isinstance(rows, list) and len(rows) > 0), text[:200]
PY
  "$engine" dataset trim "$tmp/d/metadata.json" --row 0 --in 0 --out 3 >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/d/metadata.json" \
    || fail "trim killed at ${delay} s left a torn metadata.json"
done
after=$(cd "$tmp/d" && find . -type f ! -name 'metadata.json*' ! -name '*.tmp.*' -exec sha256sum {} + | sort)
[ "$before" = "$after" ] || fail "a source file changed or appeared: $(diff <(echo "$before") <(echo "$after") | head -5)"
leftover=$(find "$tmp/d" -name '*.tmp.*')
echo "ok (temporary files left by kill -9, never read: ${leftover:-none})"
