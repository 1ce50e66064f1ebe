#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# train-experts end to end on the demo data with a tiny VAE and tiny experts: config errors,
# events with per-expert fields, checkpoint layout, eval with per-sample routing, exact resume
# (bitwise), cancel, the latent cache, encoding ahead, the schema, and the dit-train parity cases that share
# the trainer's ExpertStep.
source "$(dirname "$0")/lib/common.sh"

"$engine" parity dit-train "$data/train" >"$tmp/parity.out" 2>&1 || fail "parity dit-train: $(cat "$tmp/parity.out")"
"$engine" schema train-experts | grep -q '"boundary_ratio"' || fail "schema train-experts"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_dit "$tmp/dit.yaml"
common=(--transformer_config "$tmp/dit.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
        --train_data_meta "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/text" --demo_data auto
        --video_sample_size 64 --video_sample_n_frames 5 --learning_rate 1e-3 --lr_warmup_steps 2
        --seed 3 --dataloader_num_workers 1 --gradient_checkpointing=false --max_grad_norm 1.0
        --eval_data_meta "$tmp/data/metadata.json" --eval_steps 4 --eval_max_samples_per_t 1
        --boundary_ratio 0.5)
count() { grep -c "\"type\":\"$1\"" "$2"; }

# 1. Every config problem at once, no `started`, exit 1.
out=$("$engine" train-experts --train_data_meta "$tmp/nope.json" --transformer_config "$tmp/dit.yaml" \
      --text_embeddings_dir "$tmp/none" --vae_path "$tmp/nope.pth" --boundary_ratio 1.5 --mixed_precision fp16 \
      --output_dir "$tmp/bad" 2>/dev/null); rc=$?
[ $rc -eq 1 ] || fail "bad config exited $rc"
[ "$(grep -c '"type":"error"' <<<"$out")" -ge 4 ] || fail "expected ≥ 4 error lines: $out"
grep -q '"started"' <<<"$out" && fail "started despite config errors"
grep -q 'mixed_precision' <<<"$out" || fail "no mixed_precision error"
grep -q 'boundary_ratio' <<<"$out" || fail "no boundary_ratio error"
# Missing text embeddings (no demo_data) name the rows.
out=$("$engine" train-experts --train_data_meta "$tmp/data/metadata.json" --transformer_config "$tmp/dit.yaml" \
      --text_embeddings_dir "$tmp/data" --vae_path "$data/vae/vae_dev_weights.safetensors" --output_dir "$tmp/bad2" 2>/dev/null) \
  && fail "missing embeddings accepted"
grep -q 'no text embedding, first: row 0' <<<"$out" || fail "missing embeddings not named: $out"

# 2. A straight run of 8 steps: events, routing fields, checkpoints, eval, TensorBoard.
"$engine" train-experts "${common[@]}" --max_train_steps 8 --checkpointing_steps 4 --output_dir "$tmp/a" \
  >"$tmp/a.out" 2>"$tmp/a.err" || fail "run a exited $?: $(tail -3 "$tmp/a.err")"
ev="$tmp/a/events.jsonl"
[ "$(count started "$ev")" -eq 1 ] || fail "started count"
grep '"type":"started"' "$ev" | grep -q '"job":"experts"' || fail "started job"
[ "$(count step "$ev")" -eq 8 ] || fail "step count $(count step "$ev")"
cmp -s "$tmp/a.out" "$ev" || fail "stdout and events.jsonl differ"
check_step_times "$ev"
grep -q '"status":"completed","step":8' "$ev" || fail "no completed finish"
nh=$(grep '"type":"step"' "$ev" | grep -c '"expert":"high"'); nl=$(grep '"type":"step"' "$ev" | grep -c '"expert":"low"')
[ $((nh + nl)) -eq 8 ] || fail "expert field missing"
[ "$nh" -ge 1 ] && [ "$nl" -ge 1 ] || fail "seed 3 at ratio 0.5 should route both ways ($nh high, $nl low)"
# Each expert's first update uses lr 0 (its own warmup) and expert_step counts per expert.
for e in high low; do
  first=$(grep '"type":"step"' "$ev" | grep "\"expert\":\"$e\"" | head -1)
  grep -q '"expert_step":1,' <<<"$first" || fail "$e's first expert_step: $first"
  grep -q '"lr":0.0,\|"lr":0,' <<<"$first" || fail "$e's first update must use lr 0: $first"
  last=$(grep '"type":"step"' "$ev" | grep "\"expert\":\"$e\"" | tail -1)
  n=$([ $e = high ] && echo $nh || echo $nl)
  grep -q "\"expert_step\":$n," <<<"$last" || fail "$e's last expert_step should be $n: $last"
done
grep '"type":"step"' "$ev" | tail -1 | grep -q '"share_high":' || fail "no share_high"
[ "$(count eval "$ev")" -eq 2 ] || fail "eval events $(count eval "$ev")"
grep '"type":"eval"' "$ev" | head -1 | grep -q '"expert":"all".*"loss_high":[0-9].*"loss_low":[0-9]' \
  || fail "eval without per-expert losses: $(grep '"type":"eval"' "$ev" | head -1)"
for f in high_noise_transformer/config.json high_noise_transformer/diffusion_pytorch_model.safetensors \
         low_noise_transformer/config.json low_noise_transformer/diffusion_pytorch_model.safetensors \
         trainer_state/optimizer_high.safetensors trainer_state/optimizer_low.safetensors trainer_state/state.json; do
  [ -s "$tmp/a/checkpoint-8/$f" ] || fail "checkpoint-8/$f missing"
done
[ -d "$tmp/a/checkpoint-4" ] || fail "no periodic checkpoint-4"
grep -q '"_class_name": "WanModel"' "$tmp/a/checkpoint-8/high_noise_transformer/config.json" || fail "config.json class"
grep -q "\"steps_high\": $nh" "$tmp/a/checkpoint-8/trainer_state/state.json" || fail "state.json steps_high"
ls "$tmp"/a/logs/events.out.tfevents.* >/dev/null 2>&1 || fail "no tfevents file"
grep -qa 'high/loss' "$tmp"/a/logs/events.out.tfevents.* && grep -qa 'low/lr' "$tmp"/a/logs/events.out.tfevents.* \
  || fail "per-expert TensorBoard tags missing"
grep -q '^job: experts' "$tmp/a/run.yaml" || fail "run.yaml"

# 3. Exact resume: 3 steps, then resume to 8, equals 8 straight bit for bit (both experts, both optimizers).
"$engine" train-experts "${common[@]}" --max_train_steps 3 --checkpointing_steps 100 --output_dir "$tmp/b" \
  >/dev/null 2>"$tmp/b.err" || fail "run b1: $(tail -3 "$tmp/b.err")"
"$engine" train-experts "${common[@]}" --max_train_steps 8 --checkpointing_steps 4 --output_dir "$tmp/b" \
  --resume_from_checkpoint latest >/dev/null 2>"$tmp/b.err" || fail "run b2: $(tail -3 "$tmp/b.err")"
grep '"type":"started"' "$tmp/b/events.jsonl" | tail -1 | grep -q '"resume_step":3' || fail "resume_step 3"
grep '"type":"step"' "$tmp/b/events.jsonl" | sed -n 4p | grep -q '"step":4' || fail "first resumed step is 4"
for f in high_noise_transformer/diffusion_pytorch_model.safetensors low_noise_transformer/diffusion_pytorch_model.safetensors \
         trainer_state/optimizer_high.safetensors trainer_state/optimizer_low.safetensors; do
  cmp -s "$tmp/a/checkpoint-8/$f" "$tmp/b/checkpoint-8/$f" || fail "resumed $f differs from the straight run"
done
steps_of() { grep '"type":"step"' "$1" | grep -o '"expert":"[a-z]*","expert_step":[0-9]*\|"loss":[^,]*\|"step":[0-9]*\|"timesteps":[^]]*'; }
diff <(steps_of "$tmp/a/events.jsonl") <(steps_of "$tmp/b/events.jsonl") \
  >/dev/null || fail "routing or losses differ after resume"

# 4. Cancel: finish the step, checkpoint, `finished` cancelled, exit 130.
"$engine" train-experts "${common[@]}" --max_train_steps 100000 --checkpointing_steps 100000 --eval_steps 100000 \
  --output_dir "$tmp/c" >/dev/null 2>&1 &
pid=$!
wait_for "the first step of run c" 600 has_event step "$tmp/c/events.jsonl"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "cancel exited $rc"
line=$(grep '"type":"finished"' "$tmp/c/events.jsonl")
grep -q '"status":"cancelled"' <<<"$line" || fail "not cancelled: $line"
step=$(sed 's/.*"step":\([0-9]*\).*/\1/' <<<"$line")
[ -d "$tmp/c/checkpoint-$step" ] || fail "no checkpoint-$step after cancel"

# 5. Latent cache: a second run over the same cache hits every batch and trains to the same bits.
cache=("${common[@]}" --latent_cache_dir "$tmp/cache" --max_train_steps 6 --checkpointing_steps 100 --dataloader_num_workers 0)
"$engine" train-experts "${cache[@]}" --output_dir "$tmp/l1" >/dev/null 2>"$tmp/l1.err" || fail "cache run 1: $(tail -3 "$tmp/l1.err")"
"$engine" train-experts "${cache[@]}" --output_dir "$tmp/l2" >/dev/null 2>"$tmp/l2.err" || fail "cache run 2: $(tail -3 "$tmp/l2.err")"
grep '"type":"step"' "$tmp/l2/events.jsonl" | tail -1 | grep -q '"cache_misses":0' || fail "second cached run missed"
cmp -s "$tmp/l1/checkpoint-6/low_noise_transformer/diffusion_pytorch_model.safetensors" \
       "$tmp/l2/checkpoint-6/low_noise_transformer/diffusion_pytorch_model.safetensors" || fail "cached latents changed the result"
# 6. SIGKILL: the run resumes from its last complete checkpoint; a half-written one is cleared.
"$engine" train-experts "${common[@]}" --max_train_steps 100000 --checkpointing_steps 2 --checkpoints_total_limit 2 \
  --eval_steps 100000 --output_dir "$tmp/k" >/dev/null 2>&1 &
pid=$!
wait_for "a checkpoint of run k" 600 has_checkpoint "$tmp/k"
kill -9 $pid; wait $pid 2>/dev/null
has_checkpoint "$tmp/k" || fail "no checkpoint before SIGKILL"
grep -q '"type":"finished"' "$tmp/k/events.jsonl" && fail "a killed run wrote finished"
mkdir -p "$tmp/k/.checkpoint-999.tmp/high_noise_transformer" && echo junk > "$tmp/k/.checkpoint-999.tmp/high_noise_transformer/config.json"
last=$(ls -d "$tmp"/k/checkpoint-* | sed 's/.*checkpoint-//' | sort -n | tail -1)
"$engine" train-experts "${common[@]}" --max_train_steps $((last + 2)) --eval_steps 100000 --output_dir "$tmp/k" \
  --resume_from_checkpoint latest >/dev/null 2>"$tmp/k.err" || fail "resume after SIGKILL: $(tail -3 "$tmp/k.err")"
grep '"type":"started"' "$tmp/k/events.jsonl" | tail -1 | grep -q "\"resume_step\":$last" || fail "did not resume at $last"
grep '"type":"finished"' "$tmp/k/events.jsonl" | grep -q "\"status\":\"completed\",\"step\":$((last + 2))" || fail "resumed run did not complete"
[ -e "$tmp/k/.checkpoint-999.tmp" ] && fail "leftover temporary checkpoint not removed"

# 7. Image conditioning on the fly: i2v experts (in_dim 48 + 4 + 48) get y, ti2v experts a clean
# first frame on about half the samples; both evaluate.
i2v=(--video_sample_n_frames 9 --max_train_steps 4 --checkpointing_steps 100 --output_dir)
sed 's/in_dim: 48/in_dim: 100/' "$tmp/dit.yaml" > "$tmp/i2v.yaml"; echo "model_type: i2v" >> "$tmp/i2v.yaml"
"$engine" train-experts "${common[@]}" --transformer_config "$tmp/i2v.yaml" "${i2v[@]}" "$tmp/i2v" \
  >/dev/null 2>"$tmp/i2v.err" || fail "i2v run: $(tail -3 "$tmp/i2v.err")"
grep '"type":"step"' "$tmp/i2v/events.jsonl" | head -1 | grep -q '"conditioning":"i2v"' || fail "i2v steps"
[ "$(count eval "$tmp/i2v/events.jsonl")" -ge 1 ] || fail "i2v eval"
cp "$tmp/dit.yaml" "$tmp/ti2v.yaml"; echo "model_type: ti2v" >> "$tmp/ti2v.yaml"
"$engine" train-experts "${common[@]}" --transformer_config "$tmp/ti2v.yaml" "${i2v[@]}" "$tmp/ti2v" \
  >/dev/null 2>"$tmp/ti2v.err" || fail "ti2v run: $(tail -3 "$tmp/ti2v.err")"
grep '"type":"step"' "$tmp/ti2v/events.jsonl" | grep -q '"image_conditioned":\[true' || fail "ti2v: no image-conditioned sample"
grep '"type":"step"' "$tmp/ti2v/events.jsonl" | grep -q '"image_conditioned":\[false' || fail "ti2v: no text-only sample"
# A t2v expert's in_dim does not fit i2v: a clear config error.
sed 's/ti2v/i2v/' "$tmp/ti2v.yaml" > "$tmp/bad.yaml"
out=$("$engine" train-experts "${common[@]}" --transformer_config "$tmp/bad.yaml" --output_dir "$tmp/bad3" 2>/dev/null) \
  && fail "i2v with in_dim 48 accepted"
grep -q 'needs in_dim 100' <<<"$out" || fail "i2v in_dim error: $out"

# 8. fp8 only where it saves memory (a frozen pretrained base, with lora): full fine-tuning and
# fresh LoRA experts are config errors that say why (the LoRA run is in train_experts_lora.sh).
out=$("$engine" train-experts "${common[@]}" --fp8 e4m3 --max_train_steps 3 --output_dir "$tmp/f8" 2>/dev/null) \
  && fail "fp8 accepted for full fine-tuning"
grep -q 'fp8.*save memory only for a frozen base' <<<"$out" || fail "fp8 message: $out"
out=$("$engine" train-experts "${common[@]}" --fp8 e4m3 --lora --max_train_steps 3 --output_dir "$tmp/f8" 2>/dev/null) \
  && fail "fp8 accepted for fresh LoRA experts"
grep -q "fp8 needs both experts' pretrained weights" <<<"$out" || fail "fp8 fresh message: $out"

# 9. overlap_vae_encode (off by default): on, every micro-batch after the first was taken and
# encoded during the one before (across an eval too), and the experts train to the same bits.
ahead_flags() { grep '"type":"step"' "$1" | grep -o '"encoded_ahead":[a-z]*' | sed 's/.*://' | tr '\n' ' '; }
[ "$(ahead_flags "$tmp/a/events.jsonl")" = "false false false false false false false false " ] \
  || fail "overlap_vae_encode off: encoded_ahead per step is $(ahead_flags "$tmp/a/events.jsonl")"
"$engine" train-experts "${common[@]}" --max_train_steps 8 --checkpointing_steps 4 --overlap_vae_encode \
  --output_dir "$tmp/ov" >/dev/null 2>"$tmp/ov.err" || fail "run ov: $(tail -3 "$tmp/ov.err")"
[ "$(ahead_flags "$tmp/ov/events.jsonl")" = "false true true true true true true true " ] \
  || fail "overlap_vae_encode: encoded_ahead per step is $(ahead_flags "$tmp/ov/events.jsonl")"
check_step_times "$tmp/ov/events.jsonl"
[ "$(count eval "$tmp/ov/events.jsonl")" -eq 2 ] || fail "overlap_vae_encode: eval events $(count eval "$tmp/ov/events.jsonl")"
for f in high_noise_transformer/diffusion_pytorch_model.safetensors low_noise_transformer/diffusion_pytorch_model.safetensors; do
  cmp -s "$tmp/a/checkpoint-8/$f" "$tmp/ov/checkpoint-8/$f" || fail "overlap_vae_encode changed $f"
done

# 10. blocks_to_swap: the swapped run trains to the same bits as the plain one (both with
# gradient checkpointing, which it needs), and each step reports its copies (2N − 1 = 1).
"$engine" train-experts "${common[@]}" --gradient_checkpointing=true --max_train_steps 4 --checkpointing_steps 4 \
  --output_dir "$tmp/gc" >/dev/null 2>"$tmp/gc.err" || fail "run gc: $(tail -3 "$tmp/gc.err")"
"$engine" train-experts "${common[@]}" --gradient_checkpointing=true --blocks_to_swap 1 --max_train_steps 4 \
  --checkpointing_steps 4 --output_dir "$tmp/sw" >/dev/null 2>"$tmp/sw.err" || fail "run sw: $(tail -3 "$tmp/sw.err")"
for f in high_noise_transformer/diffusion_pytorch_model.safetensors low_noise_transformer/diffusion_pytorch_model.safetensors; do
  cmp -s "$tmp/gc/checkpoint-4/$f" "$tmp/sw/checkpoint-4/$f" || fail "blocks_to_swap changed $f"
done
[ "$(grep '"type":"step"' "$tmp/sw/events.jsonl" | grep -c '"swap_copies":1,')" -eq 4 ] \
  || fail "swap copies per step: $(grep -o '"swap_copies":[0-9]*' "$tmp/sw/events.jsonl" | tr '\n' ' ')"
grep -q '"swap_wait_s"' "$tmp/sw/events.jsonl" || fail "no swap_wait_s"
grep -q '"swap_copies"' "$tmp/gc/events.jsonl" && fail "swap fields without block swap"
out=$("$engine" train-experts "${common[@]}" --blocks_to_swap 1 --max_train_steps 2 --output_dir "$tmp/sw2" 2>/dev/null) \
  && fail "blocks_to_swap without gradient checkpointing accepted"
grep -q 'blocks_to_swap: needs gradient_checkpointing' <<<"$out" || fail "swap message: $out"
out=$("$engine" train-experts "${common[@]}" --gradient_checkpointing=true --blocks_to_swap 2 --max_train_steps 2 \
  --output_dir "$tmp/sw3" 2>/dev/null) && fail "2 of 1 blocks accepted"
grep -q 'the experts have 1 blocks, got 2' <<<"$out" || fail "swap count message: $out"

# 11. gradient_checkpointing_offload: the block inputs go to host memory and back (2 copies a
# step for the one block), the same bits as keeping them; gradient_checkpointing_parts recomputes
# the parts apart: the first step's loss is the same forward, the run trains; both need checkpointing.
"$engine" train-experts "${common[@]}" --gradient_checkpointing=true --gradient_checkpointing_offload=true \
  --max_train_steps 4 --checkpointing_steps 4 --output_dir "$tmp/off" >/dev/null 2>"$tmp/off.err" \
  || fail "run off: $(tail -3 "$tmp/off.err")"
for f in high_noise_transformer/diffusion_pytorch_model.safetensors low_noise_transformer/diffusion_pytorch_model.safetensors; do
  cmp -s "$tmp/gc/checkpoint-4/$f" "$tmp/off/checkpoint-4/$f" || fail "gradient_checkpointing_offload changed $f"
done
[ "$(grep '"type":"step"' "$tmp/off/events.jsonl" | grep -c '"offload_copies":2,')" -eq 4 ] \
  || fail "offload copies per step: $(grep -o '"offload_copies":[0-9]*' "$tmp/off/events.jsonl" | tr '\n' ' ')"
grep -q '"offload_copies"' "$tmp/gc/events.jsonl" && fail "offload fields without offload"
"$engine" train-experts "${common[@]}" --gradient_checkpointing=true --gradient_checkpointing_parts=true \
  --max_train_steps 4 --checkpointing_steps 4 --output_dir "$tmp/parts" >/dev/null 2>"$tmp/parts.err" \
  || fail "run parts: $(tail -3 "$tmp/parts.err")"
first_loss() { grep '"type":"step"' "$1" | head -1 | grep -o '"loss":[-0-9.e]*'; }
[ -n "$(first_loss "$tmp/gc/events.jsonl")" ] && [ "$(first_loss "$tmp/gc/events.jsonl")" = "$(first_loss "$tmp/parts/events.jsonl")" ] \
  || fail "parts changed the first loss: $(first_loss "$tmp/gc/events.jsonl") vs $(first_loss "$tmp/parts/events.jsonl")"
[ -f "$tmp/parts/checkpoint-4/low_noise_transformer/diffusion_pytorch_model.safetensors" ] || fail "parts: no checkpoint"
for opt in gradient_checkpointing_offload gradient_checkpointing_parts; do
  out=$("$engine" train-experts "${common[@]}" --gradient_checkpointing=false --$opt=true --max_train_steps 2 \
    --output_dir "$tmp/no-$opt" 2>/dev/null) && fail "$opt without gradient checkpointing accepted"
  grep -q "$opt: needs gradient_checkpointing: true" <<<"$out" || fail "$opt message: $out"
done
echo ok
