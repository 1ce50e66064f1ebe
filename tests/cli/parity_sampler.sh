#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# parity sampler on the reference fixtures (every step's latent), plus cases that must fail: the
# guide tuple read the other way round, the other solver's schedule, a corrupted step of the
# reference, and an empty folder.
source "$(dirname "$0")/lib/common.sh"

out=$("$engine" parity sampler "$data/sampler") || fail "parity sampler exited $?: $out"
echo "$out"
[ "$(grep -c '^PASS ' <<<"$out")" -eq 3 ] || fail "expected 3 PASS lines"

copy_case() {  # copy_case DIR CASE: one case with its experts into DIR
  mkdir -p "$1"
  cp "$data/sampler/$2.json" "$data/sampler/$2.case.safetensors" "$data"/sampler/sampler_dev_*_{high,low}.safetensors "$1/"
  chmod u+w "$1"/*
}
# (high, low) instead of (low, high): the high expert's steps get 3.0, the low ones 4.0.
copy_case "$tmp/guide" sampler_dev_a_t2v_unipc
edit_json() {  # edit_json FILE PYTHON-STATEMENT (on the parsed object j)
  python3 - "$1" "$2" <<'PY'
import json, sys
p = sys.argv[1]; j = json.load(open(p)); exec(sys.argv[2]); json.dump(j, open(p, "w"))
PY
}
edit_json "$tmp/guide/sampler_dev_a_t2v_unipc.json" 'j["sampling"]["guide_scale"] = [4.0, 3.0]' 
out=$("$engine" parity sampler "$tmp/guide" 2>/dev/null) && fail "swapped guidance passed: $out"
grep -q '^FAIL sampler_dev_a_t2v_unipc .*step0 max_abs' <<<"$out" || fail "no FAIL at step 0: $out"
# DPM++'s schedule for a UniPC case: the timesteps differ.
copy_case "$tmp/solver" sampler_dev_a_t2v_unipc
edit_json "$tmp/solver/sampler_dev_a_t2v_unipc.json" 'j["sampling"]["sample_solver"] = "dpm++"'
out=$("$engine" parity sampler "$tmp/solver" 2>/dev/null) && fail "the other solver passed: $out"
grep -q 'timesteps differ' <<<"$out" || fail "no timestep failure: $out"
# A tolerance nothing meets.
copy_case "$tmp/tol" sampler_dev_b_i2v_dpmpp
edit_json "$tmp/tol/sampler_dev_b_i2v_dpmpp.json" 'j["suggested_tolerance"]["fp32"]["final_max_abs"] = 1e-12'
out=$("$engine" parity sampler "$tmp/tol" 2>/dev/null) && fail "impossible tolerance passed: $out"
grep -q '^FAIL sampler_dev_b_i2v_dpmpp .*final max_abs' <<<"$out" || fail "no final failure: $out"
# No case at all.
mkdir -p "$tmp/empty"
"$engine" parity sampler "$tmp/empty" >/dev/null 2>&1 && fail "an empty folder passed"
echo ok
