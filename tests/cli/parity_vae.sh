#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# parity vae on the reference fixtures, plus cases that must fail: a corrupted tolerance, a
# corrupted reference tensor, a missing case file, and an empty folder. Also vae encode/decode.
set -u
engine=$1 data=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$engine" parity vae "$data/vae") || fail "parity vae exited $?: $out"
echo "$out"
[ "$(grep -c '^PASS ' <<<"$out")" -eq 2 ] || fail "expected 2 PASS lines"
grep -q '^PASS vae_dev_a_t5_32x32 worst=' <<<"$out" || fail "no PASS line for case a"

copy_case() {  # copy_case DIR: case a with its weights into DIR
  mkdir -p "$1"
  cp "$data/vae/vae_dev_a_t5_32x32.json" "$data/vae/vae_dev_a_t5_32x32.case.safetensors" \
     "$data/vae/vae_dev_weights.safetensors" "$1/"
  chmod u+w "$1"/*
}

# A tolerance no fp32 run can meet fails the case, exit 1.
copy_case "$tmp/tol"
sed -i 's/"suggested_atol": 3e-05/"suggested_atol": 1e-12/' "$tmp/tol/vae_dev_a_t5_32x32.json"
out=$("$engine" parity vae "$tmp/tol") && fail "corrupted tolerance passed: $out"
grep -q '^FAIL vae_dev_a_t5_32x32 .*decoded' <<<"$out" || fail "no FAIL line naming decoded: $out"

# A corrupted reference tensor (bytes near the end of the data: decoded_clamped/x) fails.
copy_case "$tmp/tensor"
f="$tmp/tensor/vae_dev_a_t5_32x32.case.safetensors"
size=$(stat -c %s "$f")
printf '\x7f\x7f\x7f\x7f' | dd of="$f" bs=1 seek=$((size - 4000)) conv=notrunc status=none
out=$("$engine" parity vae "$tmp/tensor") && fail "corrupted tensor passed: $out"
grep -q '^FAIL vae_dev_a_t5_32x32 ' <<<"$out" || fail "no FAIL line for the corrupted tensor: $out"

# A missing case file fails with the reason; a JSON without `case` is not a case.
copy_case "$tmp/missing"
rm "$tmp/missing/vae_dev_a_t5_32x32.case.safetensors"
echo '{"note": "not a case"}' > "$tmp/missing/extra.json"
out=$("$engine" parity vae "$tmp/missing" 2>/dev/null) && fail "missing case file passed: $out"
grep -q '^FAIL vae_dev_a_t5_32x32 .*case' <<<"$out" || fail "no FAIL line for the missing file: $out"
[ "$(wc -l <<<"$out")" -eq 1 ] || fail "the non-case JSON printed a line: $out"

# Empty folder: no case is a failure.
mkdir "$tmp/empty"
"$engine" parity vae "$tmp/empty" >/dev/null 2>&1 && fail "empty folder passed"

# vae encode / decode round trip on the fixture's input `x` (tensor files for now).
w="$data/vae/vae_dev_weights.safetensors"
"$engine" vae encode --vae "$w" --threads 2 --input "$data/vae/vae_dev_a_t5_32x32.case.safetensors" \
  --out "$tmp/z.safetensors" >/dev/null || fail "vae encode failed"
"$engine" inspect "$tmp/z.safetensors" | grep -q '^latents .*\[48,2,2,2\]' || fail "no latents [48, 2, 2, 2]"
"$engine" vae decode --vae "$w" --threads 2 --input "$tmp/z.safetensors" --out "$tmp/x.safetensors" >/dev/null \
  || fail "vae decode failed"
"$engine" inspect "$tmp/x.safetensors" | grep -q '^video .*\[3,5,32,32\]' || fail "no video [3, 5, 32, 32]"

# A clip with T = 6 is refused with its shape; --video reads a video file through the data pipeline.
python3 - "$tmp/t6.safetensors" <<'PY'
import json, struct, sys
n = 3 * 6 * 32 * 32
head = json.dumps({"video": {"dtype": "F32", "shape": [3, 6, 32, 32], "data_offsets": [0, 4 * n]}}).encode()
head += b" " * (-len(head) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(head)) + head + bytes(4 * n))
PY
"$engine" vae encode --vae "$w" --input "$tmp/t6.safetensors" --out "$tmp/z6.safetensors" 2>"$tmp/err" \
  && fail "T=6 accepted"
grep -q 'T=6' "$tmp/err" || fail "no T=6 in the error: $(cat "$tmp/err")"
"$engine" vae encode --vae "$w" --video "$tmp/missing.mp4" --out "$tmp/z2.safetensors" 2>"$tmp/err" && fail "missing video accepted"
grep -q 'missing.mp4' "$tmp/err" || fail "the error does not name the file: $(cat "$tmp/err")"
"$engine" demo-data "$tmp/demo" >/dev/null 2>&1 || fail "demo-data"
clip=$(ls "$tmp"/demo/videos/*.mp4 | head -1)
out=$("$engine" vae encode --vae "$w" --video "$clip" --size 64x64 --frames 5 --out "$tmp/zv.safetensors") || fail "vae encode --video"
grep -q '"latents":\[48,2,4,4\]' <<<"$out" || fail "latent shape of a 5-frame 64x64 clip: $out"
# --size is width x height; a stride reads every other frame, which the metadata records; the
# VAE's hash is there whatever the weights' size.
out=$("$engine" vae encode --vae "$w" --video "$clip" --size 96x64 --frames 5 --stride 2 --out "$tmp/zs.safetensors") ||
  fail "vae encode --size 96x64 --stride 2"
grep -q '"latents":\[48,2,4,6\]' <<<"$out" || fail "--size 96x64 must be 96 wide, 64 high: $out"
python3 - "$tmp/zs.safetensors" <<'PY' || fail "latent metadata"
import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]; m = json.loads(f.read(n))["__metadata__"]
assert json.loads(m["frame_indices"]) == [0, 2, 4, 6, 8], m["frame_indices"]
assert len(m["vae_sha256"]) == 64, m
assert m["pixel_width"] == "96" and m["pixel_height"] == "64", m
PY
out=$("$engine" vae decode --vae "$w" --latents "$tmp/zv.safetensors" --out "$tmp/back.mp4") || fail "vae decode to mp4"
[ -s "$tmp/back.mp4" ] || fail "no mp4 written"
echo "ok"
