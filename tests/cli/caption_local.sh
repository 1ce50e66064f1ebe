#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# caption with the engine's own Qwen2.5-VL (--model_path) on the demo dataset, using the tiny random
# model of the parity test (tests/data/qwen_vl): the rows without a caption get suggestions and the
# typed caption stays; the sidecar says which backend, device and dtype; greedy answers repeat
# themselves; a seed repeats a sampled answer; a bad folder and a mixed-up backend end in one line
# with the metadata untouched.
source "$(dirname "$0")/lib/common.sh"

caption_demo_data
model=(--model_path "$data/qwen_vl" --max_new_tokens 6 --frames 2 --frame_size 128)
texts() { python3 -c 'import json,sys; print(json.dumps([r.get("text") for r in json.load(open(sys.argv[1]))]))' "$1"; }
suggested() { python3 -c 'import json,sys; print(" ".join(str(i) for i, r in enumerate(json.load(open(sys.argv[1]))) if "text_suggested" in r))' "$1"; }
suggestion() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])]["text_suggested"])' "$1" "$2"; }

# 1. The two rows without a caption, from the model in the engine.
"$engine" caption --metadata "$meta" "${model[@]}" >"$tmp/c1.out" 2>"$tmp/c1.err" || fail "caption: $(tail -3 "$tmp/c1.err")"
[ "$(suggested "$meta")" = "1 3" ] || fail "suggested rows: $(suggested "$meta")"
[ "$(texts "$meta")" = "$(texts "$tmp/original.json")" ] || fail "captions changed"
[ "$(grep -c '"type":"caption"' "$tmp/c1.out")" -eq 2 ] || fail "caption events"
grep -q '"backend":"engine"' "$tmp/c1.out" || fail "caption_started has no engine backend"
python3 - "$tmp/data/metadata.captions.json" "$meta" <<'PY' || fail "sidecar"
import json, sys
side, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = side["suggestions"][rows[1]["file_path"]]
assert s["backend"].startswith("engine") and s["model"] == "qwen_vl" and s["model_path"].endswith("qwen_vl"), s
assert s["device"] == "cpu" and s["dtype"] == "fp32" and s["frames"] == 2 and s["max_new_tokens"] == 6, s
assert s["text_suggested"] == rows[1]["text_suggested"] and s["text_suggested"].strip(), s
PY

# 2. Greedy is deterministic: asked again, row 1 gets the same words; a sampled answer repeats
#    with its seed.
first=$(suggestion "$meta" 1)
"$engine" caption --metadata "$meta" "${model[@]}" --rows 1 --overwrite >/dev/null 2>&1 || fail "--overwrite"
[ "$(suggestion "$meta" 1)" = "$first" ] || fail "greedy changed: '$first' then '$(suggestion "$meta" 1)'"
"$engine" caption --metadata "$meta" "${model[@]}" --rows 1 --overwrite --temperature 1.5 --seed 7 >/dev/null 2>&1 \
  || fail "sampled"
s7=$(suggestion "$meta" 1)
"$engine" caption --metadata "$meta" "${model[@]}" --rows 1 --overwrite --temperature 1.5 --seed 7 >/dev/null 2>&1 \
  || fail "sampled again"
[ "$(suggestion "$meta" 1)" = "$s7" ] || fail "seed 7 gave '$s7' then '$(suggestion "$meta" 1)'"
grep -q '"seed": 7' "$tmp/data/metadata.captions.json" || fail "the sidecar has no seed"

# 3. A release stores bf16 weights: on the CPU `--dtype auto` then computes in bf16 (no conversion
#    of every matrix at every token); the same rows get suggestions.
mkdir -p "$tmp/bf16"
cp "$data/qwen_vl/config.json" "$data/qwen_vl/tokenizer.json" "$tmp/bf16/"
python3 - "$data/qwen_vl/model.safetensors" "$tmp/bf16/model.safetensors" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head, body = json.loads(raw[8:8 + n]), raw[8 + n:]
out, parts, at = {}, [], 0
for k, v in head.items():
    if k == "__metadata__":
        out[k] = v
        continue
    b, e = v["data_offsets"]
    data = body[b:e]
    if v["dtype"] == "F32":  # the upper half of each float: bf16 by truncation
        data = b"".join(data[i + 2:i + 4] for i in range(0, len(data), 4))
        v = dict(v, dtype="BF16")
    out[k] = dict(v, data_offsets=[at, at + len(data)])
    parts.append(data)
    at += len(data)
h = json.dumps(out).encode()
h += b" " * (-len(h) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + b"".join(parts))
PY
"$engine" caption --metadata "$meta" --model_path "$tmp/bf16" --max_new_tokens 4 --frames 2 --frame_size 128 --rows 0 \
  >/dev/null 2>"$tmp/bf.err" || fail "bf16 release: $(tail -2 "$tmp/bf.err")"
python3 - "$tmp/data/metadata.captions.json" "$meta" <<'PY' || fail "bf16 sidecar"
import json, sys
side, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = side["suggestions"][rows[0]["file_path"]]
assert s["dtype"] == "bf16" and s["device"] == "cpu" and rows[0]["text_suggested"].strip(), s
PY

# 4. Headless from a file: a `job: caption` YAML whose model_path is relative to the file.
mkdir -p "$tmp/data/models" && cp -r "$data/qwen_vl" "$tmp/data/models/qwen"
cat >"$tmp/data/caption.yaml" <<YAML
job: caption
metadata: metadata.json
model_path: models/qwen
rows: "2"
max_new_tokens: 3
frames: 2
frame_size: 96
YAML
(cd / && "$engine" caption --config "$tmp/data/caption.yaml" >/dev/null 2>"$tmp/y.err") || fail "--config: $(tail -2 "$tmp/y.err")"
grep -q '"model_path": ".*/data/models/qwen"' "$tmp/data/metadata.captions.json" || fail "--config model_path"
[ "$(texts "$meta")" = "$(texts "$tmp/original.json")" ] || fail "--config changed a caption"

# 5. `bench caption` times the same model (the device check compares its ids across devices): the
#    greedy ids of a caption, twice the same.
for i in 1 2; do
  "$engine" bench caption --model_path "$data/qwen_vl" --new_tokens 4 --reps 1 --warmup 0 --size 56x84 \
    2>/dev/null | tail -1 >"$tmp/bench$i.json" || fail "bench caption"
done
python3 - "$tmp/bench1.json" "$tmp/bench2.json" <<'PY' || fail "bench caption: $(cat "$tmp/bench1.json")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["bench"] == "caption" and len(a["ids"]) == 4 and a["ids"] == b["ids"] and a["grid"] == [2, 4, 6], a
assert a["vision_ms"] > 0 and a["first_token_ms"] > 0 and "decode_ms_per_token" in a, a
PY

# 6. Bad input: one line, exit non-zero, the metadata untouched.
cp "$meta" "$tmp/before.json"
out=$("$engine" caption --metadata "$meta" --model_path "$tmp/nowhere" --rows 0 2>&1 >/dev/null) && fail "a missing folder"
grep -q "nowhere" <<<"$out" && [ "$(wc -l <<<"$out")" -le 2 ] || fail "missing folder message: $out"
mkdir -p "$tmp/notokenizer" && cp "$data/qwen_vl/config.json" "$data/qwen_vl/model.safetensors" "$tmp/notokenizer/"
out=$("$engine" caption --metadata "$meta" --model_path "$tmp/notokenizer" --rows 0 2>&1 >/dev/null) && fail "no tokenizer"
grep -q "tokenizer.json" <<<"$out" || fail "no tokenizer message: $out"
out=$("$engine" caption --metadata "$meta" "${model[@]}" --endpoint http://127.0.0.1:9/v1 --rows 0 2>&1 >/dev/null) \
  && fail "two backends accepted"
grep -q "choose one backend" <<<"$out" || fail "two backends message: $out"
out=$("$engine" caption --metadata "$meta" "${model[@]}" --device gpu --rows 0 2>&1 >/dev/null) && fail "--device gpu accepted"
grep -q -- "--device: auto, cpu, cuda or cuda:N, got 'gpu'" <<<"$out" || fail "device message: $out"
cmp -s "$meta" "$tmp/before.json" || fail "a failed job changed the metadata"
echo ok
