#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `upsample` reproduces what a run's validation wrote: the same checkpoint (its EMA weights) on the
# same clip gives the same PSNRs (the ceiling against the source too) and the three decodes, between a
# started and a completed finished event; a checkpoint without EMA refuses --ema.
source "$(dirname "$0")/lib/common.sh"
vae="$data/vae/vae_dev_weights.safetensors"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_upsampler "$tmp/model.yaml"
clip="$tmp/data/videos/clip_00.mp4"
"$engine" train-upsampler --config_path "$tmp/model.yaml" --vae_path "$vae" --train_data_meta "$tmp/data/metadata.json" \
  --video_sample_size 128 --video_sample_n_frames 5 --learning_rate 1e-3 --seed 7 --use_ema --dataloader_num_workers 0 \
  --max_train_steps 3 --checkpointing_steps 100 --validation_steps 3 --validation_paths "$clip" --output_dir "$tmp/run" \
  >/dev/null 2>"$tmp/run.err" || fail "train-upsampler: $(tail -3 "$tmp/run.err")"
val=$(grep '"type":"validation"' "$tmp/run/events.jsonl" | grep '"step":3')
[ -n "$val" ] || fail "no validation at step 3"

"$engine" upsample --checkpoint "$tmp/run/checkpoint-3" --ema --vae "$vae" --video "$clip" --out "$tmp/up" \
  --video_sample_size 128 --video_sample_n_frames 5 --threads 1 >"$tmp/up.out" 2>"$tmp/up.err" || fail "upsample: $(tail -3 "$tmp/up.err")"
got=$(grep '"type":"validation"' "$tmp/up.out")
for f in step3_val0_lowres step3_val0_upsampled step3_val0_highres; do
  [ -s "$tmp/up/sample/$f.mp4" ] || fail "sample/$f.mp4 missing"
done
python3 - "$val" "$got" <<'PY' || fail "upsample's PSNRs differ from the validation's: $val vs $got"
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
# To rounding: the run computed on weights in its own memory, `upsample` on the file's, and LibTorch
# 2.x's kernels round by the data's address (7 significant digits agree there; 1.13 agrees exactly).
for k in ("psnr", "psnr_lowres", "latent_mse", "frames", "size", "size_lr", "psnr_ceiling", "psnr_source", "psnr_lowres_source"):
    assert abs(a[k] - b[k]) <= 1e-6 * max(1.0, abs(a[k])), (k, a[k], b[k])
# Three different decodes against the source. (The high-res decode is a ceiling only for a VAE that
# reconstructs well: the test VAE's random weights do not, so no order is asserted here.)
for k in ("psnr_ceiling", "psnr_source", "psnr_lowres_source"):
    assert 0 < b[k] < 100, (k, b)
assert len({b["psnr_ceiling"], b["psnr_source"], b["psnr_lowres_source"]}) == 3, b
PY
head -1 "$tmp/up.out" | grep -q '"type":"started".*"job":"upsample"\|"job":"upsample".*"type":"started"' || fail "no started event first"
tail -1 "$tmp/up.out" | grep -q '"status":"completed"' || fail "no completed finished event last"
# Without --ema: latent_upsampler/ (in a final checkpoint the EMA weights too, as the reference saves them).
"$engine" upsample --checkpoint "$tmp/run/checkpoint-3" --vae "$vae" --video "$clip" --out "$tmp/raw" \
  --video_sample_size 128 --video_sample_n_frames 5 --threads 1 >"$tmp/raw.out" 2>/dev/null || fail "upsample raw"
# A model folder without EMA cannot give --ema.
out=$("$engine" upsample --checkpoint "$tmp/run/checkpoint-3/latent_upsampler" --ema --vae "$vae" --video "$clip" \
      --out "$tmp/bad" 2>&1) && fail "--ema without EMA weights accepted"
grep -q 'no latent_upsampler_ema' <<<"$out" || fail "ema message: $out"
[ -e "$tmp/bad/sample" ] && fail "a failed upsample left files"
echo ok
