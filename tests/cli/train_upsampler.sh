#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# train-upsampler end to end on the demo data with a tiny VAE and model: config errors, events,
# checkpoint layout and pruning, validation videos, exact resume (bitwise), cancel, and a run
# killed with SIGKILL resuming from its last complete checkpoint.
source "$(dirname "$0")/lib/common.sh"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_upsampler "$tmp/model.yaml"
common=(--config_path "$tmp/model.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
        --train_data_meta "$tmp/data/metadata.json" --video_sample_size 128 --video_sample_n_frames 5
        --video_sample_stride 2 --learning_rate 1e-3 --lr_warmup_steps 2 --seed 7 --use_ema
        --enable_degradation --enable_noisy_training --noise_sample_mode uniform --dataloader_num_workers 1
        --gradient_checkpointing=false --validation_steps 1000)
count() { grep -c "\"type\":\"$1\"" "$2"; }

# 1. Every config problem at once, no `started`, exit 1.
out=$("$engine" train-upsampler --train_data_meta "$tmp/nope.json" --vae_path "$tmp/nope.pth" \
      --video_sample_n_frames 8 --use_8bit_adam --output_dir "$tmp/bad" 2>/dev/null); rc=$?
[ $rc -eq 1 ] || fail "bad config exited $rc"
[ "$(grep -c '"type":"error"' <<<"$out")" -ge 4 ] || fail "expected ≥ 4 error lines: $out"
grep -q '"started"' <<<"$out" && fail "started despite config errors"
grep -q '"status":"failed","step":0' <<<"$out" || fail "no finished failed: $out"
grep -q 'video_sample_n_frames' <<<"$out" || fail "n_frames error missing"

# 2. A straight run of 6 steps: events, checkpoints (limit 2), validation, TensorBoard.
"$engine" train-upsampler "${common[@]}" --max_train_steps 6 --checkpointing_steps 2 --checkpoints_total_limit 2 \
  --validation_steps 3 --validation_paths "$tmp/data/videos/clip_00.mp4" --output_dir "$tmp/a" \
  >"$tmp/a.out" 2>"$tmp/a.err" || fail "run a exited $?: $(tail -3 "$tmp/a.err")"
ev="$tmp/a/events.jsonl"
[ "$(count started "$ev")" -eq 1 ] || fail "started count"
[ "$(count step "$ev")" -eq 6 ] || fail "step count $(count step "$ev")"
grep '"type":"step"' "$ev" | head -1 | grep -q '"lr":0.0\|"lr":0,' || fail "first update must use lr 0 (warmup)"
grep -q '"status":"completed","step":6' "$ev" || fail "no completed finish"
cmp -s "$tmp/a.out" "$ev" || fail "stdout and events.jsonl differ"
check_step_times "$ev"
[ "$(count validation "$ev")" -eq 2 ] || fail "validation events $(count validation "$ev")"
grep '"type":"validation"' "$ev" | head -1 | grep -q '"psnr":' || fail "validation without psnr"
for f in step3_val0_upsampled step3_val0_lowres step3_val0_highres; do
  [ -s "$tmp/a/sample/$f.mp4" ] || fail "missing sample/$f.mp4"
done
ls -d "$tmp"/a/checkpoint-* | xargs -n1 basename | sort | tr '\n' ' ' | grep -qx 'checkpoint-4 checkpoint-6 ' \
  || fail "checkpoints: $(ls "$tmp/a")"
for f in latent_upsampler/config.json latent_upsampler/diffusion_pytorch_model.safetensors latent_upsampler_ema/config.json \
         sampler_pos_start.pkl trainer_state/optimizer.safetensors trainer_state/state.json \
         trainer_state/ema_shadow.safetensors trainer_state/online_weights.safetensors; do
  [ -s "$tmp/a/checkpoint-6/$f" ] || fail "checkpoint-6/$f missing"
done
[ -e "$tmp/a/checkpoint-4/trainer_state/online_weights.safetensors" ] && fail "online weights only in the final checkpoint"
head -c 6 "$tmp/a/checkpoint-4/sampler_pos_start.pkl" | od -An -tx1 | grep -q '80 02 5d 71 00 28' || fail "pickle header"
ls "$tmp"/a/logs/events.out.tfevents.* >/dev/null 2>&1 || fail "no tfevents file"
[ -s "$tmp/a/run.yaml" ] && grep -q '^job: upsampler' "$tmp/a/run.yaml" || fail "run.yaml"
"$engine" inspect "$tmp/a/checkpoint-6/latent_upsampler/diffusion_pytorch_model.safetensors" >/dev/null || fail "inspect final weights"

# 3. Exact resume: 3 steps, then resume to 6, equals 6 straight bit for bit.
"$engine" train-upsampler "${common[@]}" --max_train_steps 3 --checkpointing_steps 100 --output_dir "$tmp/b" \
  >/dev/null 2>"$tmp/b.err" || fail "run b1: $(tail -3 "$tmp/b.err")"
"$engine" train-upsampler "${common[@]}" --max_train_steps 6 --checkpointing_steps 100 --output_dir "$tmp/b" \
  --resume_from_checkpoint latest >/dev/null 2>"$tmp/b.err" || fail "run b2: $(tail -3 "$tmp/b.err")"
grep '"type":"started"' "$tmp/b/events.jsonl" | tail -1 | grep -q '"resume_step":3' || fail "resume_step 3"
grep '"type":"step"' "$tmp/b/events.jsonl" | tail -3 | head -1 | grep -q '"step":4' || fail "first resumed step is 4"
for f in latent_upsampler/diffusion_pytorch_model.safetensors trainer_state/online_weights.safetensors \
         trainer_state/optimizer.safetensors trainer_state/ema_shadow.safetensors; do
  cmp -s "$tmp/a/checkpoint-6/$f" "$tmp/b/checkpoint-6/$f" || fail "resumed $f differs from the straight run"
done
# A misspelt checkpoint is an error, not a silent fresh start.
"$engine" train-upsampler "${common[@]}" --max_train_steps 6 --output_dir "$tmp/b" \
  --resume_from_checkpoint checkpoint-33 >"$tmp/typo.out" 2>/dev/null && fail "a missing checkpoint started"
grep -q 'checkpoint-33' "$tmp/typo.out" || fail "no error naming the checkpoint"

# 4. Cancel: finish the step, checkpoint, `finished` cancelled, exit 130.
"$engine" train-upsampler "${common[@]}" --max_train_steps 100000 --checkpointing_steps 100000 --output_dir "$tmp/c" \
  >/dev/null 2>&1 &
pid=$!
wait_for "the first step of run c" 600 has_event step "$tmp/c/events.jsonl"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "cancel exited $rc"
line=$(grep '"type":"finished"' "$tmp/c/events.jsonl")
grep -q '"status":"cancelled"' <<<"$line" || fail "not cancelled: $line"
step=$(sed 's/.*"step":\([0-9]*\).*/\1/' <<<"$line")
[ -d "$tmp/c/checkpoint-$step" ] || fail "no checkpoint-$step after cancel"

# 5. SIGKILL: the run resumes from its last complete checkpoint; a half-written one is cleared.
"$engine" train-upsampler "${common[@]}" --max_train_steps 100000 --checkpointing_steps 1 --checkpoints_total_limit 2 \
  --output_dir "$tmp/k" >/dev/null 2>&1 &
pid=$!
wait_for "a checkpoint of run k" 600 has_checkpoint "$tmp/k"
kill -9 $pid; wait $pid 2>/dev/null
mkdir -p "$tmp/k/.checkpoint-999.tmp/latent_upsampler" && echo junk > "$tmp/k/.checkpoint-999.tmp/latent_upsampler/config.json"
last=$(ls -d "$tmp"/k/checkpoint-* | sed 's/.*checkpoint-//' | sort -n | tail -1)
"$engine" train-upsampler "${common[@]}" --max_train_steps $((last + 1)) --output_dir "$tmp/k" \
  --resume_from_checkpoint latest >/dev/null 2>"$tmp/k.err" || fail "resume after SIGKILL: $(tail -3 "$tmp/k.err")"
grep '"type":"started"' "$tmp/k/events.jsonl" | tail -1 | grep -q "\"resume_step\":$last" || fail "did not resume at $last"
[ -e "$tmp/k/.checkpoint-999.tmp" ] && fail "leftover temporary checkpoint not removed"

# 6. Latent cache: a second run over the same cache hits every clip and trains to the same bits.
cache=(--config_path "$tmp/model.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
       --train_data_meta "$tmp/data/metadata.json" --video_sample_size 128 --video_sample_n_frames 5 --seed 7
       --gradient_checkpointing=false --cache_latents --latent_cache_dir "$tmp/cache" --max_train_steps 8
       --checkpointing_steps 100 --dataloader_num_workers 0)
"$engine" train-upsampler "${cache[@]}" --output_dir "$tmp/l1" >/dev/null 2>"$tmp/l1.err" || fail "cache run 1: $(tail -3 "$tmp/l1.err")"
"$engine" train-upsampler "${cache[@]}" --output_dir "$tmp/l2" >/dev/null 2>"$tmp/l2.err" || fail "cache run 2: $(tail -3 "$tmp/l2.err")"
grep '"type":"step"' "$tmp/l2/events.jsonl" | tail -1 | grep -q '"cache_misses":0' || fail "second cached run missed"
cmp -s "$tmp/l1/checkpoint-8/latent_upsampler/diffusion_pytorch_model.safetensors" \
       "$tmp/l2/checkpoint-8/latent_upsampler/diffusion_pytorch_model.safetensors" || fail "cached latents changed the result"
out=$("$engine" train-upsampler "${cache[@]}" --enable_degradation --output_dir "$tmp/l3" 2>/dev/null) && fail "cache with degradation accepted"
grep -q 'cache_latents' <<<"$out" || fail "no error naming cache_latents"
echo ok
