#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# parity dit / dit-train on the reference fixtures, with each CPU GEMM (models/cpu_gemm.h: the
# machine picks one, so both are forced here), plus cases that must fail: a perturbed reference
# output, a perturbed training expectation, and an empty folder.
set -u
engine=$1 data=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for gemm in onednn libtorch; do
  export WANSTUDIO_GEMM=$gemm
  out=$("$engine" parity dit "$data/dit") || fail "$gemm: parity dit exited $?: $out"
  echo "$gemm: $out"
  [ "$(grep -c '^PASS ' <<<"$out")" -eq 2 ] || fail "$gemm: expected 2 PASS lines"
  grep -q '^FAIL' <<<"$out" && fail "$gemm: a FAIL line"

  out=$("$engine" parity dit-train "$data/train") || fail "$gemm: parity dit-train exited $?: $out"
  echo "$gemm: $out"
  grep -q '^FAIL' <<<"$out" && fail "$gemm: a FAIL line"
  for g in loss grad_norm grad1 model adam x_t; do
    grep -q "^PASS dit_train_dev_a:$g " <<<"$out" || fail "$gemm: no PASS line for group $g"
  done
done
unset WANSTUDIO_GEMM
grep -q 'upsampler' <<<"$out" && fail "upsampler-train cases not skipped"

# A perturbed copy of case b: `out` in the case file is rewritten with one changed byte far
# beyond the tolerance (the last data bytes are the tail of some tensor; flip its exponent).
mkdir "$tmp/dit"
cp "$data"/dit/dit_dev_b_low_t_pad.* "$tmp/dit/"
chmod u+w "$tmp"/dit/*
python3 - "$tmp/dit/dit_dev_b_low_t_pad.case.safetensors" <<'PY' || fail "could not perturb"
import json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
s, e = h['out']['data_offsets']
off = 8 + n + s + 4 * 17
v = struct.unpack('<f', b[off:off + 4])[0]
b[off:off + 4] = struct.pack('<f', v + 0.5)
open(p, 'wb').write(b)
PY
out=$("$engine" parity dit "$tmp/dit"); rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "perturbed dit case: exit $rc, want 1"
grep -q '^FAIL dit_dev_b_low_t_pad' <<<"$out" || fail "perturbed dit case: no FAIL line"

# A perturbed training case: the expected loss of step 1 changed.
mkdir "$tmp/train"
cp -r "$data/train/dit_train_dev_a" "$tmp/train/"
chmod -R u+w "$tmp/train"
python3 - "$tmp/train/dit_train_dev_a/expected.safetensors" <<'PY' || fail "could not perturb"
import json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
s, e = h['loss']['data_offsets']
off = 8 + n + s
v = struct.unpack('<d', b[off:off + 8])[0]
b[off:off + 8] = struct.pack('<d', v * 1.001)
open(p, 'wb').write(b)
PY
out=$("$engine" parity dit-train "$tmp/train"); rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "perturbed dit-train case: exit $rc, want 1"
grep -q '^FAIL dit_train_dev_a:loss' <<<"$out" || fail "perturbed dit-train case: no FAIL loss line"

# A case whose weights file is missing fails with the reason.
rm "$tmp/dit/dit_dev_b_low_t_pad.weights.safetensors"
out=$("$engine" parity dit "$tmp/dit"); rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "missing weights: exit $rc, want 1"

# No case at all.
mkdir "$tmp/empty"
out=$("$engine" parity dit "$tmp/empty"); rc=$?
[ "$rc" -eq 1 ] || fail "empty folder (dit): exit $rc, want 1"
out=$("$engine" parity dit-train "$tmp/empty"); rc=$?
[ "$rc" -eq 1 ] || fail "empty folder (dit-train): exit $rc, want 1"
echo "parity_dit: ok"
