#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# parity upsampler / upsampler-train on the reference fixtures, plus cases that must fail:
# a perturbed expected tensor, a case with a missing file, and an empty folder.
set -u
engine=$1 data=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$engine" parity upsampler "$data/upsampler") || fail "parity upsampler exited $?: $out"
echo "$out"
[ "$(grep -c '^PASS ' <<<"$out")" -eq 2 ] || fail "expected 2 PASS lines"

out=$("$engine" parity upsampler-train "$data/train") || fail "parity upsampler-train exited $?: $out"
echo "$out"
grep -q '^FAIL' <<<"$out" && fail "a FAIL line"
grep -q 'upsampler_train_dev_accum2_cosine_abnormal:model ' <<<"$out" || fail "no model line for the accum2 case"
grep -q 'dit_train' <<<"$out" && fail "dit-train case not skipped"

# A missing weights file fails that case with a reason, exit 1.
cp -r "$data/upsampler/dev_s1p5_mid32_b1" "$tmp/broken"
rm "$tmp/broken/latent_upsampler/diffusion_pytorch_model.safetensors"
out=$("$engine" parity upsampler "$tmp") && fail "missing weights passed"
grep -q '^FAIL dev_s1p5_mid32_b1 ' <<<"$out" || fail "no FAIL line for missing weights: $out"

# Empty folder: no case is a failure.
mkdir "$tmp/empty"
"$engine" parity upsampler "$tmp/empty" >/dev/null && fail "empty folder passed"
"$engine" parity upsampler-train "$tmp/empty" >/dev/null && fail "empty train folder passed"
echo "ok"
