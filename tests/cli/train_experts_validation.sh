#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Validation videos during train-experts: every validation_steps (and at step 0, and after the
# last) rank 0 renders each prompt with both experts; the run trains the same bits as one without
# them; `sample` on a checkpoint with the same settings reproduces a validation latent bit for
# bit; prompts without embeddings or encoder, and i2v experts, are config errors.
source "$(dirname "$0")/lib/common.sh"
cfg="$data/../../configs"
vae="$data/vae/vae_dev_weights.safetensors"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_dit "$tmp/dit.yaml" 32 16
common=(--transformer_config "$tmp/dit.yaml" --vae_path "$vae" --train_data_meta "$tmp/data/metadata.json"
        --text_embeddings_dir "$tmp/text" --text_encoder_path "$cfg/demo/umt5_demo.safetensors"
        --tokenizer_path "$cfg/demo/umt5_demo_spiece.model" --video_sample_size 64 --video_sample_n_frames 5
        --max_train_steps 4 --checkpointing_steps 100 --dataloader_num_workers 0 --seed 3 --boundary_ratio 0.5)
val=(--validation_prompts "a red circle" "a blue square" --validation_steps 2 --validation_size 64x64
     --validation_frames 9 --validation_sample_steps 4)

"$engine" train-experts "${common[@]}" "${val[@]}" --output_dir "$tmp/a" >/dev/null 2>"$tmp/a.err" \
  || fail "run with validation: $(tail -3 "$tmp/a.err")"
ev="$tmp/a/events.jsonl"
[ "$(grep -c '"type":"validation"' "$ev")" -eq 6 ] || fail "expected 6 validation events (steps 0, 2, 4 × 2 prompts)"
for s in 0 2 4; do for i in 0 1; do for ext in mp4 json latents.safetensors; do
  [ -s "$tmp/a/sample/step${s}_val${i}.$ext" ] || fail "sample/step${s}_val${i}.$ext missing"
done; done; done
grep '"type":"validation"' "$ev" | grep '"step":2' | grep -q '"video":"sample/step2_val1.mp4"' || fail "validation event: $(grep '"type":"validation"' "$ev" | head -1)"
grep '"type":"validation"' "$ev" | head -1 | grep -q '"prompt":"a red circle"' || fail "the event names the prompt"
grep '"type":"validation"' "$ev" | head -1 | grep -q '"seconds":' || fail "the event has the time"

# Training is unaffected.
"$engine" train-experts "${common[@]}" --output_dir "$tmp/b" >/dev/null 2>"$tmp/b.err" || fail "run without: $(tail -3 "$tmp/b.err")"
for f in high_noise_transformer/diffusion_pytorch_model.safetensors low_noise_transformer/diffusion_pytorch_model.safetensors \
         trainer_state/optimizer_high.safetensors trainer_state/optimizer_low.safetensors; do
  cmp -s "$tmp/a/checkpoint-4/$f" "$tmp/b/checkpoint-4/$f" || fail "validation changed $f"
done

# `sample` with the same settings on checkpoint-4 gives the validation's latents exactly.
"$engine" sample --ckpt_dir "$tmp/a/checkpoint-4" --prompt "a red circle" --text_embeddings_dir "$tmp/text" --size 64x64 \
  --frame_num 9 --sample_steps 4 --seed 3 --boundary_ratio 0.5 --save_file "$tmp/r.mp4" >/dev/null 2>"$tmp/r.err" \
  || fail "sample: $(tail -3 "$tmp/r.err")"
python3 - "$tmp/a/sample/step4_val0.latents.safetensors" "$tmp/r.latents.safetensors" <<'PY' || fail "sample does not reproduce the validation latents"
import json, struct, sys
def latents(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); s, e = h["latents"]["data_offsets"]
    return h["latents"]["shape"], b[8 + n + s:8 + n + e]
a, r = latents(sys.argv[1]), latents(sys.argv[2])
sys.exit(0 if a == r else 1)
PY

# Config errors.
out=$("$engine" train-experts --transformer_config "$tmp/dit.yaml" --vae_path "$vae" --train_data_meta "$tmp/data/metadata.json" \
      --text_embeddings_dir "$tmp/text" --validation_prompts "never encoded" --output_dir "$tmp/bad" 2>/dev/null) \
  && fail "a prompt without embedding or encoder accepted"
grep -q 'no embedding for \\"never encoded\\"' <<<"$out" || fail "missing embedding message: $out"
sed 's/in_dim: 48/in_dim: 100/' "$tmp/dit.yaml" > "$tmp/i2v.yaml"; echo "model_type: i2v" >> "$tmp/i2v.yaml"
out=$("$engine" train-experts "${common[@]}" --transformer_config "$tmp/i2v.yaml" "${val[@]}" --output_dir "$tmp/bad2" 2>/dev/null) \
  && fail "i2v validation accepted"
grep -q 'need start images' <<<"$out" || fail "i2v message: $out"
echo ok
