#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# parity t5 on the reference fixtures (two encoder cases, one tokenizer case), plus cases that
# must fail: a perturbed reference output, a tokenizer case whose expected ids are changed, a
# missing tokenizer model, and an empty folder.
set -u
engine=$1 data=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$engine" parity t5 "$data/t5") || fail "parity t5 exited $?: $out"
echo "$out"
[ "$(grep -c '^PASS ' <<<"$out")" -eq 3 ] || fail "expected 3 PASS lines"
grep -q '^FAIL' <<<"$out" && fail "a FAIL line"
grep -q '^info t5_dev_b_random_l24 inter.block_0.attn ' <<<"$out" || fail "intermediates not compared"

# Encoder case B with one element of `out` (a real row) moved far beyond the tolerance.
mkdir "$tmp/enc"
cp "$data"/t5/t5_dev_b_random_l24.* "$data"/t5/t5_dev_weights.* "$tmp/enc/"
chmod u+w "$tmp"/enc/*
python3 - "$tmp/enc/t5_dev_b_random_l24.case.safetensors" <<'PY' || fail "could not perturb"
import json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n])
s, e = h['out']['data_offsets']
off = 8 + n + s + 4 * 5  # row 0 (24 real tokens), element 5
v = struct.unpack('<f', b[off:off + 4])[0]
b[off:off + 4] = struct.pack('<f', v + 0.01)
open(p, 'wb').write(b)
PY
out=$("$engine" parity t5 "$tmp/enc"); rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "perturbed encoder case: exit $rc, want 1"
grep -q '^FAIL t5_dev_b_random_l24' <<<"$out" || fail "perturbed encoder case: no FAIL line"

# The tokenizer case with one expected id changed.
mkdir "$tmp/tok"
cp "$data"/t5/t5_dev_tok_captions.* "$data"/t5/t5_dev_tokenizer.model "$tmp/tok/"
chmod u+w "$tmp"/tok/*
python3 - "$tmp/tok/t5_dev_tok_captions.json" <<'PY' || fail "could not perturb"
import json, sys
p = sys.argv[1]
j = json.load(open(p))
j["items"][1]["ids"][3] += 1
json.dump(j, open(p, "w"))
PY
out=$("$engine" parity t5 "$tmp/tok"); rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "perturbed tokenizer case: exit $rc, want 1"
grep -q '^FAIL t5_dev_tok_captions' <<<"$out" || fail "perturbed tokenizer case: no FAIL line"

# A missing tokenizer model: one FAIL line naming it.
rm "$tmp/tok/t5_dev_tokenizer.model"
out=$("$engine" parity t5 "$tmp/tok"); rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "missing tokenizer: exit $rc, want 1"
grep -q 't5_dev_tokenizer.model' <<<"$out" || fail "missing tokenizer: the file is not named"

mkdir "$tmp/empty"
"$engine" parity t5 "$tmp/empty" >/dev/null && fail "empty folder passed"
echo "parity_t5: ok"
