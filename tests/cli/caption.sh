#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# caption against a stand-in OpenAI-compatible server on loopback (lib/chat_server.py): the rows
# without a caption get suggestions (`text_suggested`) and nothing a person typed changes; the
# sidecar records model and prompt; a re-run asks for nothing; --rows and --overwrite; streaming;
# a job stopped midway resumes with only the rows left; a server that is down, a model it does not
# serve and bad options end in one clear line with the metadata untouched.
source "$(dirname "$0")/lib/common.sh"

caption_demo_data
rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$meta")
texts() { python3 -c 'import json,sys; print(json.dumps([r.get("text") for r in json.load(open(sys.argv[1]))]))' "$1"; }
suggested() { python3 -c 'import json,sys; print(" ".join(str(i) for i, r in enumerate(json.load(open(sys.argv[1]))) if "text_suggested" in r))' "$1"; }
requests() { [ -f "$tmp/log.jsonl" ] && wc -l <"$tmp/log.jsonl" || echo 0; }

# 1. No server yet: one line naming the endpoint, exit 1, the metadata untouched.
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' >"$tmp/closed"
out=$("$engine" caption --metadata "$meta" --endpoint "http://127.0.0.1:$(cat "$tmp/closed")/v1" --model tiny-vl \
  --retries 0 2>&1 >/dev/null) && fail "caption without a server succeeded"
grep -q "no server at http://127.0.0.1:$(cat "$tmp/closed")" <<<"$out" || fail "down message: $out"
cmp -s "$meta" "$tmp/original.json" || fail "a failed job changed the metadata"

python3 "$(dirname "$0")/lib/chat_server.py" "$tmp/port" "$tmp/log.jsonl" &
wait_for "the chat server" 20 test -f "$tmp/port"
ep=(--endpoint "http://127.0.0.1:$(cat "$tmp/port")/v1" --model tiny-vl)

# 2. The two rows without a caption; captions unchanged; events; the sidecar; the requests.
"$engine" caption --metadata "$meta" "${ep[@]}" >"$tmp/c1.out" 2>"$tmp/c1.err" || fail "caption: $(tail -3 "$tmp/c1.err")"
[ "$(suggested "$meta")" = "1 3" ] || fail "suggested rows: $(suggested "$meta")"
[ "$(texts "$meta")" = "$(texts "$tmp/original.json")" ] || fail "captions changed"
[ "$(grep -c '"type":"caption"' "$tmp/c1.out")" -eq 2 ] || fail "caption events: $(grep -c '"type":"caption"' "$tmp/c1.out")"
tail -1 "$tmp/c1.out" | grep -q '"status":"completed"' || fail "no completed finish"
[ -f "$meta.bak" ] || fail "no .bak"
python3 - "$tmp/data/metadata.captions.json" "$meta" "$tmp/log.jsonl" <<'PY' || fail "sidecar or requests"
import json, sys
side, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
log = [json.loads(l) for l in open(sys.argv[3])]
s = side["suggestions"][rows[1]["file_path"]]
assert s["model"] == "tiny-vl" and s["frames"] == 4 and "{frames}" not in s["prompt"], s
assert s["text_suggested"] == rows[1]["text_suggested"] and rows[1]["text_suggested"].endswith("first."), s
assert len(log) == 2 and all(r["images"] == 4 and r["jpeg"] and "4 frames" in r["prompt"] for r in log), log
assert all(r["max_tokens"] == 512 and not r["stream"] for r in log), log
PY

# 3. A re-run asks for nothing; --rows 2 suggests for the typed caption and keeps it; --overwrite
#    asks again for a row that has a suggestion; --frames and the prompt template reach the server.
n0=$(requests)
"$engine" caption --metadata "$meta" "${ep[@]}" >/dev/null 2>&1 || fail "re-run"
[ "$(requests)" -eq "$n0" ] || fail "the re-run asked the server again"
"$engine" caption --metadata "$meta" "${ep[@]}" --rows 2 --frames 2 --prompt 'Say {frames} things about {file_name}.' \
  >/dev/null 2>&1 || fail "--rows 2"
[ "$(suggested "$meta")" = "1 2 3" ] || fail "after --rows 2: $(suggested "$meta")"
[ "$(texts "$meta")" = "$(texts "$tmp/original.json")" ] || fail "--rows changed a caption"
tail -1 "$tmp/log.jsonl" | grep -q '"prompt": "Say 2 things about clip_02.mp4."' || fail "prompt: $(tail -1 "$tmp/log.jsonl")"
before=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[1]["text_suggested"])' "$meta")
"$engine" caption --metadata "$meta" "${ep[@]}" --rows 1 >/dev/null 2>&1 || fail "--rows 1 again"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[1]["text_suggested"])' "$meta")" = "$before" ] \
  || fail "a suggestion was replaced without --overwrite"
"$engine" caption --metadata "$meta" "${ep[@]}" --rows 1 --overwrite --stream >"$tmp/c3.out" 2>/dev/null || fail "--overwrite"
after=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[1]["text_suggested"])' "$meta")
[ "$after" != "$before" ] && [[ "$after" == *"of 4 frames"* ]] || fail "--overwrite --stream: '$after' (was '$before')"
tail -1 "$tmp/log.jsonl" | grep -q '"stream": true' || fail "not streamed"
# A trimmed row is captioned from its trim: two frames there give two images, not four.
python3 - "$meta" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
rows[4]["trim"] = [10, 12]
json.dump(rows, open(sys.argv[1], "w"), indent=2)
PY
"$engine" caption --metadata "$meta" "${ep[@]}" --rows 4 >/dev/null 2>&1 || fail "--rows 4 (trimmed)"
tail -1 "$tmp/log.jsonl" | grep -q '"images": 2,' || fail "trimmed row: $(tail -1 "$tmp/log.jsonl")"

# 4. Stopped midway (SIGTERM after the first caption): exit 130, what was answered is kept, and a
#    re-run asks only for the rows left.
cp "$tmp/original.json" "$tmp/data/all.json"
python3 - "$tmp/data/all.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
for r in rows:
    r["text"] = ""
json.dump(rows, open(sys.argv[1], "w"))
PY
echo 1 >"$tmp/delay"
n0=$(requests)
"$engine" caption --metadata "$tmp/data/all.json" "${ep[@]}" --concurrency 1 >"$tmp/c4.out" 2>/dev/null &
pid=$!
wait_for "a first caption" 60 has_event caption "$tmp/c4.out"
# A caption typed while the job runs survives its writes (it merges into the file as it is then).
python3 - "$tmp/data/all.json" <<'PY'
import json, os, sys
rows = json.load(open(sys.argv[1]))
rows[-1]["text"] = "Typed during the job."
json.dump(rows, open(sys.argv[1] + ".edit", "w"))
os.replace(sys.argv[1] + ".edit", sys.argv[1])
PY
wait_for "a write after the edit" 60 grep -q text_suggested "$tmp/data/all.json"
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 130 ] || fail "a stopped job exited $rc"
done1=$(suggested "$tmp/data/all.json" | wc -w)
[ "$done1" -ge 1 ] && [ "$done1" -lt "$rows" ] || fail "$done1 of $rows rows kept after the stop"
grep -q '"Typed during the job."' "$tmp/data/all.json" || fail "the job overwrote a caption typed meanwhile"
echo 0 >"$tmp/delay"
n1=$(requests)
"$engine" caption --metadata "$tmp/data/all.json" "${ep[@]}" >/dev/null 2>&1 || fail "resume"
# Every row but the one typed meanwhile (a captioned row is not asked for by default).
[ "$(suggested "$tmp/data/all.json")" = "$(seq -s ' ' 0 $((rows - 2)))" ] \
  || fail "resume left rows: $(suggested "$tmp/data/all.json")"
[ $(($(requests) - n1)) -eq $((rows - 1 - done1)) ] || fail "resume asked $(($(requests) - n1)) times for $((rows - 1 - done1)) rows"

# 5. A model the server does not serve, and bad options: one line, metadata untouched.
cp "$meta" "$tmp/before.json"
out=$("$engine" caption --metadata "$meta" --endpoint "${ep[1]}" --model nope --rows 0 2>&1 >/dev/null) \
  && fail "an unknown model succeeded"
grep -q "model 'nope' not found" <<<"$out" || fail "unknown model message: $out"
out=$("$engine" caption --metadata "$meta" --endpoint https://example.com/v1 --model tiny-vl --rows 0 2>&1 >/dev/null) \
  && fail "https accepted"
grep -q "no TLS" <<<"$out" || fail "https message: $out"
out=$("$engine" caption --metadata "$meta" "${ep[@]}" --rows 99 2>&1 >/dev/null) && fail "--rows 99 accepted"
grep -q "row 99 is not in" <<<"$out" || fail "rows message: $out"
out=$("$engine" caption --metadata "$meta" --endpoint "${ep[1]}" 2>&1 >/dev/null) && fail "no --model accepted"
grep -q -- "--model is required" <<<"$out" || fail "model message: $out"
cmp -s "$meta" "$tmp/before.json" || fail "a failed job changed the metadata"

# 6. Headless from a file: `job: caption` through the engine's --config, and through
#    `wanstudio --batch` when the studio is built (flags after the file win).
cat >"$tmp/data/caption.yaml" <<YAML
job: caption
metadata: metadata.json
endpoint: ${ep[1]}
model: tiny-vl
rows: "0"
frames: 3
YAML
"$engine" caption --config "$tmp/data/caption.yaml" --frames 2 >/dev/null 2>"$tmp/c6.err" || fail "--config: $(tail -2 "$tmp/c6.err")"
tail -1 "$tmp/log.jsonl" | grep -q '"images": 2,' || fail "--config: $(tail -1 "$tmp/log.jsonl")"
[ "$(suggested "$meta" | cut -d' ' -f1)" = 0 ] || fail "--config: row 0 has no suggestion"
studio=$(dirname "$engine")/../app/wanstudio
if [ -x "$studio" ]; then
  n0=$(requests)
  WANSTUDIO_ENGINE=$engine QT_QPA_PLATFORM=offscreen "$studio" --batch "$tmp/data/caption.yaml" --overwrite \
    >"$tmp/c7.out" 2>&1 || fail "wanstudio --batch caption.yaml: $(tail -3 "$tmp/c7.out")"
  grep -q "run completed" "$tmp/c7.out" || fail "batch: $(tail -3 "$tmp/c7.out")"
  [ "$(requests)" -eq $((n0 + 1)) ] && tail -1 "$tmp/log.jsonl" | grep -q '"images": 3,' || fail "batch request: $(tail -1 "$tmp/log.jsonl")"
fi
echo ok
