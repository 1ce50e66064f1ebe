#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Wan2.1 VAE through the CLI: parity vae21 on the fixtures (and a Wan2.2 case or weights
# refused naming both), inspect naming the type, vae encode/decode with 16 channels at a size
# that is a multiple of 8 but not 16, the latent file's metadata, and the type mismatch errors.
source "$(dirname "$0")/lib/common.sh"
w21="$data/vae21/vae21_dev_weights.safetensors" w22="$data/vae/vae_dev_weights.safetensors"

out=$("$engine" parity vae21 "$data/vae21") || fail "parity vae21 exited $?: $out"
echo "$out"
[ "$(grep -c '^PASS ' <<<"$out")" -eq 2 ] || fail "expected 2 PASS lines"
# The Wan2.2 cases are not Wan2.1 cases.
out=$("$engine" parity vae21 "$data/vae" 2>/dev/null) && fail "parity vae21 passed Wan2.2 cases"
grep -q 'a wan2.2 case, but this parity kind checks the wan2.1 VAE' <<<"$out" || fail "wrong-kind message: $out"
# A Wan2.1 case whose weights are a Wan2.2 VAE fails, naming the declared type and the evidence.
mkdir -p "$tmp/swap"
cp "$data/vae21/vae21_dev_a_t5_24x40.json" "$data/vae21/vae21_dev_a_t5_24x40.case.safetensors" "$tmp/swap/"
cp "$w22" "$tmp/swap/vae21_dev_weights.safetensors"
out=$("$engine" parity vae21 "$tmp/swap" 2>/dev/null) && fail "Wan2.2 weights passed a Wan2.1 case"
grep -q 'vae_type wan2.1, but encoder.conv1.weight is \[4,12,3,3,3\]: a Wan2.2 VAE' <<<"$out" || fail "swap message: $out"
# A tolerance nothing meets fails (the check is real).
mkdir -p "$tmp/tol" && cp "$data/vae21/vae21_dev_b_t9_32x16.json" "$data/vae21/vae21_dev_b_t9_32x16.case.safetensors" "$w21" "$tmp/tol/"
chmod u+w "$tmp/tol"/*
sed -i 's/"suggested_atol": 2e-05/"suggested_atol": 1e-12/' "$tmp/tol/vae21_dev_b_t9_32x16.json"
out=$("$engine" parity vae21 "$tmp/tol" 2>/dev/null) && fail "impossible tolerance passed: $out"
grep -q '^FAIL vae21_dev_b_t9_32x16 .*dec_chunk0' <<<"$out" || fail "no FAIL naming dec_chunk0: $out"

# inspect names the type and the widths inferred from the shapes (.pth: no metadata).
"$engine" inspect "$data/vae21/vae21_dev_weights.pth" | grep -q '^VAE: wan2.1, dim 4, z_dim 16, spatial factor 8' \
  || fail "inspect .pth"
"$engine" inspect --json "$w22" | grep -q '"vae_type":"wan2.2"' || fail "inspect --json wan2.2"

# vae encode / decode: 24x40 is fine for the Wan2.1 VAE (stride 8), 36x40 is not.
"$engine" vae encode --vae "$w21" --input "$data/vae21/vae21_dev_a_t5_24x40.case.safetensors" --out "$tmp/z.safetensors" \
  --threads 1 >"$tmp/enc.out" 2>&1 || fail "vae encode: $(cat "$tmp/enc.out")"
grep -q '"latents":\[16,2,3,5\]' "$tmp/enc.out" || fail "latent shape: $(cat "$tmp/enc.out")"
meta=$("$engine" inspect --json "$tmp/z.safetensors")
grep -q '"vae_type":"wan2.1"' <<<"$meta" && grep -q '"z_dim":"16"' <<<"$meta" && grep -q '"vae_sha256":"[0-9a-f]\{64\}"' <<<"$meta" \
  || fail "latent metadata: $meta"
"$engine" vae decode --vae "$w21" --input "$tmp/z.safetensors" --out "$tmp/x.safetensors" --threads 1 >"$tmp/dec.out" 2>&1 \
  || fail "vae decode: $(cat "$tmp/dec.out")"
grep -q '"video":\[3,5,24,40\]' "$tmp/dec.out" || fail "decoded shape: $(cat "$tmp/dec.out")"
out=$("$engine" vae decode --vae "$w22" --input "$tmp/z.safetensors" --out "$tmp/bad.safetensors" 2>&1) && fail "wan2.2 decoded wan2.1 latents"
grep -q 'latents have 16 channels (wan2.1) but the VAE is wan2.2 (z_dim 48)' <<<"$out" || fail "decode mismatch: $out"
out=$("$engine" vae encode --vae "$w21" --vae-type wan2.2 --input "$data/vae21/vae21_dev_a_t5_24x40.case.safetensors" \
      --out "$tmp/bad.safetensors" 2>&1) && fail "--vae-type wan2.2 accepted Wan2.1 weights"
grep -q 'vae_type wan2.2, but encoder.conv1.weight is \[4,3,3,3,3\]: a Wan2.1 VAE' <<<"$out" || fail "--vae-type: $out"

# bench runs the Wan2.1 layout (tiny width) and refuses a Wan2.2-only width.
out=$("$engine" bench vae-decode --vae-type wan2.1 --dim 4 --frames 5 --size 32,32 --reps 1 --warmup 0 --threads 1 2>/dev/null) \
  || fail "bench wan2.1"
tail -1 <<<"$out" | grep -q '"vae_type":"wan2.1"' || fail "bench json: $out"
"$engine" bench vae-encode --vae-type wan2.1 --dec-dim 8 >/dev/null 2>&1 && fail "--dec-dim with wan2.1 accepted"
echo ok
