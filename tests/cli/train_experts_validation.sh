#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Validation videos during train-experts: every validation_steps (and at step 0, and after the
# last) rank 0 renders each prompt with both experts; the run trains the same bits as one without
# them; `sample` on a checkpoint with the same settings reproduces a validation latent bit for
# bit; i2v experts render from an image per prompt; prompts without embeddings or encoder, and
# missing or extra images, are config errors.
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
# A validation prompts file: its entries render after validation_prompts, each with its own seed
# and frame count; a negative prompt per entry is a config error.
cat >"$tmp/vp.json" <<'JSON'
["a red circle", {"prompt": "a blue square", "seed": 11, "frame_num": 5}]
JSON
"$engine" train-experts "${common[@]}" "${val[@]}" --validation_prompts "a green star" --validation_prompts_file "$tmp/vp.json" \
  --validation_at_start=false --output_dir "$tmp/vp" >/dev/null 2>"$tmp/vp.err" || fail "validation prompts file: $(tail -3 "$tmp/vp.err")"
[ "$(grep -c '"type":"validation"' "$tmp/vp/events.jsonl")" -eq 6 ] || fail "expected 3 prompts × steps 2, 4"
grep '"type":"validation"' "$tmp/vp/events.jsonl" | head -3 | tail -1 | grep -q '"prompt":"a blue square"' \
  || fail "the file's entries come after validation_prompts"
grep -q '"base_seed": 11' "$tmp/vp/sample/step2_val2.json" && grep -q '"frame_num": 5' "$tmp/vp/sample/step2_val2.json" \
  || fail "entry seed or frames: $(cat "$tmp/vp/sample/step2_val2.json")"
grep -q '"base_seed": 4' "$tmp/vp/sample/step2_val1.json" || fail "entry 1 takes validation_seed + 1"
echo '[{"prompt": "x", "negative_prompt": "y"}]' >"$tmp/vpn.json"
out=$("$engine" train-experts "${common[@]}" --validation_prompts_file "$tmp/vpn.json" --output_dir "$tmp/bad5" 2>/dev/null) \
  && fail "a per-entry negative prompt accepted"
grep -q 'validation takes no per-prompt negative prompt' <<<"$out" || fail "negative message: $out"

# i2v experts: validation videos start from an image per prompt (a dataset row's first frame, or a
# picture file); without images it is a config error, and a t2v run takes none.
vae21="$data/vae21/vae21_dev_weights.safetensors"
sed 's/in_dim: 48/in_dim: 36/; s/out_dim: 48/out_dim: 16/' "$tmp/dit.yaml" > "$tmp/i2v.yaml"; echo "model_type: i2v" >> "$tmp/i2v.yaml"
i2v=(--transformer_config "$tmp/i2v.yaml" --vae_path "$vae21" --train_data_meta "$tmp/data/metadata.json"
     --text_embeddings_dir "$tmp/text" --video_sample_size 64 --video_sample_n_frames 5 --max_train_steps 2
     --checkpointing_steps 100 --dataloader_num_workers 0 --seed 3 --boundary_ratio 0.5)
out=$("$engine" train-experts "${i2v[@]}" "${val[@]}" --output_dir "$tmp/bad2" 2>/dev/null) && fail "i2v validation without images accepted"
grep -q 'i2v experts render validation videos from start images' <<<"$out" || fail "i2v message: $out"
out=$("$engine" train-experts "${i2v[@]}" "${val[@]}" --validation_images row:0 --output_dir "$tmp/bad3" 2>/dev/null) \
  && fail "one image for two prompts accepted"
grep -q '1 images for 2 validation prompts' <<<"$out" || fail "image count message: $out"
out=$("$engine" train-experts "${common[@]}" "${val[@]}" --validation_images row:0 row:1 --output_dir "$tmp/bad4" 2>/dev/null) \
  && fail "t2v images accepted"
grep -q 't2v experts take no start image' <<<"$out" || fail "t2v images message: $out"
"$engine" train-experts "${i2v[@]}" "${val[@]}" --validation_images row:0 "$tmp/data/videos/clip_02.mp4" \
  --output_dir "$tmp/i2v" >/dev/null 2>"$tmp/i2v.err" || fail "i2v run with validation: $(tail -3 "$tmp/i2v.err")"
ev="$tmp/i2v/events.jsonl"
[ "$(grep -c '"type":"validation"' "$ev")" -eq 4 ] || fail "expected 4 i2v validation events (steps 0, 2 × 2): $(grep -c validation "$ev")"
grep '"type":"validation"' "$ev" | head -1 | grep -q '"image":"[^"]*clip_00.mp4"' || fail "the event names row 0's clip"
grep '"type":"validation"' "$ev" | sed -n 2p | grep -q '"image":"[^"]*clip_02.mp4"' || fail "the event names the file"
[ -s "$tmp/i2v/sample/step2_val1.mp4" ] && grep -q '"image":' "$tmp/i2v/sample/step2_val1.json" || fail "i2v video or record"
grep -q '"type":"log".*validation .* failed' "$ev" && fail "an i2v render failed: $(grep failed "$ev" | head -1)"
cmp -s "$tmp/i2v/sample/step2_val0.latents.safetensors" "$tmp/i2v/sample/step2_val1.latents.safetensors" \
  && fail "two images gave the same latents"

# The i2v demo config (tiny 100-channel i2v experts on the demo VAE): validation videos from the first
# frames of rows 0 and 1.
"$engine" train-experts --config "$cfg/demo-experts-i2v.yaml" --train_data_dir "$tmp/di" --train_data_meta "$tmp/di/metadata.json" \
  --text_embeddings_dir "$tmp/di_text" --latent_cache_dir "$tmp/di_lat" --eval_data_meta "$tmp/di/metadata.json" \
  --output_dir "$tmp/di_run" --max_train_steps 2 --validation_steps 2 --dataloader_num_workers 0 >/dev/null 2>"$tmp/di.err" \
  || fail "the i2v demo: $(tail -3 "$tmp/di.err")"
[ "$(grep -c '"type":"validation"' "$tmp/di_run/events.jsonl")" -eq 4 ] || fail "i2v demo: 4 validation events expected"
grep '"type":"validation"' "$tmp/di_run/events.jsonl" | sed -n 2p | grep -q '"image":"[^"]*di/videos/clip_01.mp4"' \
  || fail "i2v demo: row 1's clip as the image"
[ -s "$tmp/di_run/sample/step2_val1.mp4" ] || fail "i2v demo: no video"
echo ok
