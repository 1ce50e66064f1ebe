#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `sample` on a checkpoint of tiny experts trained here: an MP4, the latents and the JSON record;
# the t2v-A14B preset's expert split; bit-identical latents for the same seed, other ones for
# another seed or guidance; prompts as texts through the demo's UMT5; cancel leaves no file;
# block swap gives the same latents and bf16 others; a prompts file (lines or JSON) renders each
# prompt into a folder; bad settings are one-line errors.
source "$(dirname "$0")/lib/common.sh"
cfg="$data/../../configs"
vae="$data/vae/vae_dev_weights.safetensors"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_dit "$tmp/dit.yaml" 32 16
"$engine" train-experts --transformer_config "$tmp/dit.yaml" --vae_path "$vae" --train_data_meta "$tmp/data/metadata.json" \
  --text_embeddings_dir "$tmp/text" --text_encoder_path "$cfg/demo/umt5_demo.safetensors" \
  --tokenizer_path "$cfg/demo/umt5_demo_spiece.model" --video_sample_size 64 --video_sample_n_frames 5 --max_train_steps 3 \
  --checkpointing_steps 100 --dataloader_num_workers 0 --output_dir "$tmp/run" >/dev/null 2>"$tmp/train.err" \
  || fail "training the experts: $(tail -3 "$tmp/train.err")"
ck="$tmp/run/checkpoint-3"
text=(--text_embeddings_dir "$tmp/text" --text_encoder_path "$cfg/demo/umt5_demo.safetensors"
      --tokenizer_path "$cfg/demo/umt5_demo_spiece.model")
small=(--size 64x64 --frame_num 9 --sample_steps 6 --threads 1)

# 1. A render: events, files, the record, the preset's split (6 steps at shift 12: 4 high, 2 low).
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" --vae_path "$vae" "${small[@]}" \
  --seed 7 --save_file "$tmp/a.mp4" >"$tmp/a.out" 2>"$tmp/a.err" || fail "sample: $(tail -3 "$tmp/a.err")"
for f in a.mp4 a.latents.safetensors a.json; do [ -s "$tmp/$f" ] || fail "$f missing"; done
grep -q '"type":"started"' "$tmp/a.out" && grep '"type":"started"' "$tmp/a.out" | grep -q '"job":"sample"' || fail "started"
[ "$(grep -c '"type":"sample_step"' "$tmp/a.out")" -eq 6 ] || fail "sample_step count"
[ "$(grep '"type":"sample_step"' "$tmp/a.out" | grep -c '"expert":"high"')" -eq 4 ] || fail "expected 4 high-noise steps"
grep '"type":"sample_step"' "$tmp/a.out" | head -1 | grep -q '"t":999' || fail "UniPC starts at t = 999"
grep -q '"type":"sample","video":".*a.mp4"' "$tmp/a.out" || fail "no sample event naming the video"
grep -q '"status":"completed"' "$tmp/a.out" || fail "not completed"
grep -q '"base_seed": 7' "$tmp/a.json" && grep -q '"task": "t2v-A14B"' "$tmp/a.json" && grep -q '"sample_guide_scale"' "$tmp/a.json" \
  || fail "record: $(cat "$tmp/a.json")"
grep -q '"text": "a red circle moving left"' "$tmp/a.json" || fail "the record lacks the prompt"
"$engine" inspect "$tmp/a.latents.safetensors" | grep -q '^latents *F32 *\[48,3,4,4\]' \
  || fail "latent shape: $("$engine" inspect "$tmp/a.latents.safetensors")"

# 2. Determinism and options that must matter.
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" "${small[@]}" --seed 7 \
  --save_file "$tmp/b.mp4" >/dev/null 2>&1 || fail "sample b"
cmp -s "$tmp/a.latents.safetensors" "$tmp/b.latents.safetensors" || fail "the same seed gave other latents"
[ -e "$tmp/b.mp4" ] && fail "an MP4 without a VAE"
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" "${small[@]}" --seed 8 \
  --save_file "$tmp/c.mp4" >/dev/null 2>&1 || fail "sample c"
cmp -s "$tmp/a.latents.safetensors" "$tmp/c.latents.safetensors" && fail "another seed gave the same latents"
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" "${small[@]}" --seed 7 \
  --sample_guide_scale 1.0 --save_file "$tmp/d.mp4" >/dev/null 2>&1 || fail "sample d"
cmp -s "$tmp/a.latents.safetensors" "$tmp/d.latents.safetensors" && fail "--sample_guide_scale changed nothing"
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" --threads 1 --preview --seed 7 \
  --sample_steps 2 --save_file "$tmp/p.mp4" >/dev/null 2>&1 || fail "preview"
grep -q '"size": "256\*256"' "$tmp/p.json" && grep -q '"frame_num": 17' "$tmp/p.json" || fail "preview settings: $(cat "$tmp/p.json")"

# 3. Cancel between steps: exit 130, nothing written.
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" --size 512x512 --frame_num 33 \
  --sample_steps 200 --seed 1 --threads 1 --save_file "$tmp/x.mp4" >"$tmp/cancel.out" 2>/dev/null &
pid=$!
wait_for "the first denoising step" 300 has_event sample_step "$tmp/cancel.out"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "cancel exited $rc"
grep -q '"status":"cancelled"' "$tmp/cancel.out" || fail "not cancelled"
ls "$tmp" | grep -q '^x\.' && fail "a cancelled render left files: $(ls "$tmp" | grep '^x\.')"
ls -a "$tmp" | grep -q 'tmp' && fail "temporary files left"

# 4. Block swap renders the same latents; bf16 renders others; a prompts file renders each prompt
#    (seed i = base + i) into a folder, and a JSON list gives prompts their own seed and name.
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" "${small[@]}" --seed 7 \
  --blocks_to_swap 1 --save_file "$tmp/s.mp4" >/dev/null 2>"$tmp/s.err" || fail "block swap: $(tail -2 "$tmp/s.err")"
cmp -s "$tmp/b.latents.safetensors" "$tmp/s.latents.safetensors" || fail "block swap changed the latents"
grep -q '"swap_copies_low": [1-9]' "$tmp/s.json" || fail "no swap copies recorded: $(cat "$tmp/s.json")"
"$engine" sample --ckpt_dir "$ck" --prompt "a red circle moving left" "${text[@]}" "${small[@]}" --seed 7 \
  --dtype bf16 --offload --save_file "$tmp/h.mp4" >/dev/null 2>"$tmp/h.err" || fail "bf16: $(tail -2 "$tmp/h.err")"
cmp -s "$tmp/b.latents.safetensors" "$tmp/h.latents.safetensors" && fail "--dtype bf16 changed nothing"
grep -q '"dtype": "bf16"' "$tmp/h.json" || fail "bf16 not recorded"
printf '# two prompts\na red circle moving left\n\na blue square\n' >"$tmp/prompts.txt"
"$engine" sample --ckpt_dir "$ck" --prompts_file "$tmp/prompts.txt" "${text[@]}" "${small[@]}" --seed 7 \
  --save_file "$tmp/many" >"$tmp/many.out" 2>"$tmp/many.err" || fail "prompts file: $(tail -2 "$tmp/many.err")"
for f in 000.json 000.latents.safetensors 001.json 001.latents.safetensors; do [ -s "$tmp/many/$f" ] || fail "many/$f missing"; done
[ "$(grep -cE '"type":"sample"[,}]' "$tmp/many.out")" -eq 2 ] || fail "expected two sample events"
grep '"type":"sample_step"' "$tmp/many.out" | tail -1 | grep -q '"index":1' || fail "the second video's steps lack index 1"
cmp -s "$tmp/b.latents.safetensors" "$tmp/many/000.latents.safetensors" || fail "prompt 0 is not the seed-7 render"
grep -q '"base_seed": 8' "$tmp/many/001.json" && grep -q '"text": "a blue square"' "$tmp/many/001.json" \
  || fail "prompt 1: $(cat "$tmp/many/001.json")"
cat >"$tmp/prompts.json" <<'JSON'
["a red circle moving left", {"prompt": "a blue square", "seed": 8, "name": "square", "frame_num": 5}]
JSON
"$engine" sample --ckpt_dir "$ck" --prompts_file "$tmp/prompts.json" "${text[@]}" "${small[@]}" --seed 3 \
  --save_file "$tmp/json" >/dev/null 2>"$tmp/json.err" || fail "JSON prompts: $(tail -2 "$tmp/json.err")"
cmp -s "$tmp/many/001.latents.safetensors" "$tmp/json/square.latents.safetensors" && fail "frame_num per prompt ignored"
"$engine" inspect "$tmp/json/square.latents.safetensors" | grep -q '^latents *F32 *\[48,2,4,4\]' || fail "square's shape"
[ -s "$tmp/json/000.latents.safetensors" ] || fail "the unnamed prompt's files"
echo '[{"prompt": "x", "sede": 3}]' >"$tmp/bad.json"
out=$("$engine" sample --ckpt_dir "$ck" --prompts_file "$tmp/bad.json" "${text[@]}" 2>&1) && fail "a misspelt key accepted"
grep -q "bad.json entry 0: unknown key 'sede'" <<<"$out" || fail "prompts file message: $out"
out=$("$engine" sample --ckpt_dir "$ck" --prompts_file "$tmp/prompts.txt" --prompt x "${text[@]}" 2>&1) && fail "both accepted"
grep -q 'not both' <<<"$out" || fail "both message: $out"
out=$("$engine" sample --ckpt_dir "$ck" --prompt x "${text[@]}" "${small[@]}" --blocks_to_swap 2 2>&1) && fail "2 of 1 blocks accepted"
grep -q 'the experts have 1 blocks' <<<"$out" || fail "swap message: $out"

# 5. Bad settings fail before any work.
out=$("$engine" sample --ckpt_dir "$ck" --prompt x "${text[@]}" --frame_num 10 2>&1) && fail "frame_num 10 accepted"
grep -q 'frame_num: must be 4k+1' <<<"$out" || fail "frame_num message: $out"
out=$("$engine" sample --ckpt_dir "$ck" --prompt x "${text[@]}" --size 80x64 2>&1) && fail "80x64 accepted"
grep -q 'multiples of 32' <<<"$out" || fail "size message: $out"
out=$("$engine" sample --ckpt_dir "$ck" --prompt x --size 64x64 2>&1) && fail "a prompt text without embeddings accepted"
grep -q 'text_embeddings_dir' <<<"$out" || fail "prompt message: $out"
out=$("$engine" sample --ckpt_dir "$ck" --prompt x "${text[@]}" --size 64x64 --vae_path "$data/vae21/vae21_dev_weights.safetensors" 2>&1) \
  && fail "a 16-channel VAE accepted for 48-channel experts"
grep -q 'the VAE has 16 latent channels, the experts 48' <<<"$out" || fail "VAE message: $out"
echo ok
