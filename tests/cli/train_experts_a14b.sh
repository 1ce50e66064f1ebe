#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A14B-shaped tiny experts (16 latent channels) trained from videos through the Wan2.1 VAE: on the
# fly, through the latent cache and from `encode-latents` files, with the same losses; t2v and
# i2v (y = mask + first-frame latent). encode-latents resumes after SIGTERM and SIGKILL with the
# files a clean run writes. A 16/48-channel mismatch is a config error naming both numbers.
source "$(dirname "$0")/lib/common.sh"
[ -n "${KEEP_TMP:-}" ] && trap - EXIT && echo "tmp: $tmp"
vae="$data/vae21/vae21_dev_weights.safetensors"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_dit "$tmp/dit48.yaml"
sed 's/_dim: 48/_dim: 16/' "$tmp/dit48.yaml" > "$tmp/t2v.yaml"
sed 's/in_dim: 48/in_dim: 36/; s/out_dim: 48/out_dim: 16/' "$tmp/dit48.yaml" > "$tmp/i2v.yaml"; echo "model_type: i2v" >> "$tmp/i2v.yaml"
train=(--text_embeddings_dir "$tmp/text" --demo_data auto --video_sample_size 64 --learning_rate 1e-3
       --dataloader_num_workers 0 --max_train_steps 5 --checkpointing_steps 100)
losses() { grep '"type":"step"' "$1" | grep -o '"step":[0-9]*\|"expert":"[a-z]*"\|"loss":[^,]*\|"frames":[0-9]*'; }

# 1. The mismatches are config errors naming both numbers, before anything trains.
out=$("$engine" train-experts "${train[@]}" --transformer_config "$tmp/dit48.yaml" --vae_path "$vae" \
      --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/bad" 2>/dev/null) && fail "48-channel experts took the Wan2.1 VAE"
grep -q 'has 16 latent channels, but the experts.* out_dim is 48' <<<"$out" || fail "16/48 message: $out"
grep -q '"started"' <<<"$out" && fail "started despite the mismatch"
sed 's/in_dim: 36/in_dim: 100/' "$tmp/i2v.yaml" > "$tmp/i2v_bad.yaml"
out=$("$engine" train-experts "${train[@]}" --transformer_config "$tmp/i2v_bad.yaml" --vae_path "$vae" \
      --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/bad" 2>/dev/null) && fail "i2v in_dim 100 took the Wan2.1 VAE"
grep -q 'i2v expert needs in_dim 36, got 100' <<<"$out" || fail "i2v in_dim message: $out"
out=$("$engine" train-experts "${train[@]}" --transformer_config "$tmp/t2v.yaml" --vae_path "$vae" --vae_type wan2.2 \
      --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/bad" 2>/dev/null) && fail "vae_type wan2.2 accepted"
grep -q 'vae_type wan2.2, but encoder.conv1.weight is \[4,3,3,3,3\]: a Wan2.1 VAE' <<<"$out" || fail "vae_type message: $out"

# 2. t2v with fixed windows (stride 1, every clip whole: the windows cannot differ): on the fly,
# latent cache and encode-latents train to the same losses.
fixed=(--seed 3 --video_sample_n_frames 65 --video_sample_stride 1 --boundary_ratio 0.5)
"$engine" train-experts "${train[@]}" "${fixed[@]}" --transformer_config "$tmp/t2v.yaml" --vae_path "$vae" \
  --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/fly" >/dev/null 2>"$tmp/fly.err" || fail "on the fly: $(tail -3 "$tmp/fly.err")"
grep '"type":"started"' "$tmp/fly/events.jsonl" >/dev/null || fail "no started"
grep -q '^vae_type: "wan2.1"' "$tmp/fly/run.yaml" || fail "run.yaml does not record the detected vae_type"
# Buckets align to 16 pixels with the Wan2.1 VAE (48 is not a multiple of 32).
grep '"type":"step"' "$tmp/fly/events.jsonl" | grep -q '"size":\[48,\|,48\]' || fail "no 16-aligned bucket: $(losses "$tmp/fly/events.jsonl")"
"$engine" train-experts "${train[@]}" "${fixed[@]}" --transformer_config "$tmp/t2v.yaml" --vae_path "$vae" \
  --latent_cache_dir "$tmp/cache" --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/cached" >/dev/null 2>"$tmp/c.err" \
  || fail "cached: $(tail -3 "$tmp/c.err")"
"$engine" encode-latents --metadata "$tmp/data/metadata.json" --vae "$vae" --out "$tmp/lat" --seed 3 --video_sample_size 64 \
  --video_sample_n_frames 65 --video_sample_stride 1 --threads 1 >"$tmp/el.out" 2>"$tmp/el.err" || fail "encode-latents: $(tail -3 "$tmp/el.err")"
grep -q '"task":"encode-latents"' "$tmp/el.out" && grep '"type":"progress"' "$tmp/el.out" | tail -1 | grep -q '"done":14,.*"total":14' \
  || fail "progress events: $(tail -3 "$tmp/el.out")"
grep -q '"eta_s":' "$tmp/el.out" || fail "no ETA"
"$engine" train-experts "${train[@]}" "${fixed[@]}" --transformer_config "$tmp/t2v.yaml" \
  --train_data_meta "$tmp/lat/metadata.json" --output_dir "$tmp/files" >/dev/null 2>"$tmp/f.err" || fail "from files: $(tail -3 "$tmp/f.err")"
grep -q 'every row brings its latent file: no VAE' "$tmp/f.err" || fail "the latent-file run loaded a VAE"
[ -n "$(losses "$tmp/fly/events.jsonl")" ] || fail "no losses"
diff <(losses "$tmp/fly/events.jsonl") <(losses "$tmp/cached/events.jsonl") >/dev/null || fail "cached losses differ from on the fly"
diff <(losses "$tmp/fly/events.jsonl") <(losses "$tmp/files/events.jsonl") >/dev/null || fail "encode-latents losses differ from on the fly"

# The released layout: configs/wan2.2/model_t2v_a14b.yaml over a model folder holding
# Wan2.1_VAE.pth (vae_type AutoencoderKLWan) and the two experts (here the tiny ones just trained).
mkdir -p "$tmp/A14B"
cp "$data/vae21/vae21_dev_weights.pth" "$tmp/A14B/Wan2.1_VAE.pth"
cp -r "$tmp/fly/checkpoint-5/high_noise_transformer" "$tmp/A14B/high_noise_model"
cp -r "$tmp/fly/checkpoint-5/low_noise_transformer" "$tmp/A14B/low_noise_model"
"$engine" train-experts "${train[@]}" --seed 3 --video_sample_n_frames 65 --video_sample_stride 1 --config_path "$data/../../configs/wan2.2/model_t2v_a14b.yaml" \
  --pretrained_model_name_or_path "$tmp/A14B" --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/rel" \
  >/dev/null 2>"$tmp/rel.err" || fail "model_t2v_a14b.yaml: $(tail -3 "$tmp/rel.err")"
grep -q 'loading the VAE from .*A14B/Wan2.1_VAE.pth' "$tmp/rel.err" || fail "the model YAML's vae_subpath was not used"
grep -q '^boundary_ratio: 0.875' "$tmp/rel/run.yaml" || fail "boundary from the model YAML: $(grep boundary "$tmp/rel/run.yaml")"

# 3. i2v with drawn windows (stride 2, 9 frames): the cache and encode-latents --i2v (the same
# seed draws the same window per row) train to the same losses.
drawn=(--seed 5 --video_sample_n_frames 9 --video_sample_stride 2 --boundary_ratio 0.5)
"$engine" train-experts "${train[@]}" "${drawn[@]}" --transformer_config "$tmp/i2v.yaml" --vae_path "$vae" \
  --latent_cache_dir "$tmp/cache_i2v" --train_data_meta "$tmp/data/metadata.json" --output_dir "$tmp/i2v_c" >/dev/null 2>"$tmp/ic.err" \
  || fail "i2v cached: $(tail -3 "$tmp/ic.err")"
grep '"type":"step"' "$tmp/i2v_c/events.jsonl" | head -1 | grep -q '"conditioning":"i2v"' || fail "i2v steps"
"$engine" encode-latents --metadata "$tmp/data/metadata.json" --vae "$vae" --out "$tmp/lat_i2v" --seed 5 --video_sample_size 64 \
  --video_sample_n_frames 9 --video_sample_stride 2 --i2v --threads 1 >/dev/null 2>"$tmp/eli.err" || fail "encode-latents --i2v: $(tail -3 "$tmp/eli.err")"
"$engine" inspect "$tmp/lat_i2v/latents/row00000.safetensors" | grep -q '^y .*\[20,' || fail "no y [4 + 16, ...] in the i2v latent file"
"$engine" train-experts "${train[@]}" "${drawn[@]}" --transformer_config "$tmp/i2v.yaml" \
  --train_data_meta "$tmp/lat_i2v/metadata.json" --output_dir "$tmp/i2v_f" >/dev/null 2>"$tmp/if.err" || fail "i2v from files: $(tail -3 "$tmp/if.err")"
diff <(losses "$tmp/i2v_c/events.jsonl") <(losses "$tmp/i2v_f/events.jsonl") >/dev/null || fail "i2v: encode-latents losses differ from the cache's"

# 4. encode-latents resumes: SIGTERM after the first row (exit 130, no metadata yet), SIGKILL
# later, then a re-run keeps what is there and ends with the files a clean run writes.
slow=(--metadata "$tmp/data/metadata.json" --vae "$vae" --seed 7 --video_sample_size 256 --video_sample_n_frames 33
      --video_sample_stride 1 --threads 1)
"$engine" encode-latents "${slow[@]}" --out "$tmp/r" >"$tmp/r1.out" 2>/dev/null &
pid=$!
row_done() { grep -q '"done":[1-9]' "$1"; }
wait_for "the first encoded row" 300 row_done "$tmp/r1.out"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "SIGTERM exited $rc"
grep -q '"status":"cancelled"' "$tmp/r1.out" || fail "not cancelled: $(tail -1 "$tmp/r1.out")"
[ -e "$tmp/r/metadata.json" ] && fail "a cancelled run wrote metadata.json"
n1=$(ls "$tmp/r/latents" | grep -c '^row.*\.safetensors$')
[ "$n1" -ge 1 ] && [ "$n1" -lt 14 ] || fail "$n1 files after SIGTERM"
"$engine" encode-latents "${slow[@]}" --out "$tmp/r" >"$tmp/r2.out" 2>/dev/null &
pid=$!
wait_for "a row of the second run" 300 row_done "$tmp/r2.out"
kill -9 $pid; wait $pid 2>/dev/null
"$engine" encode-latents "${slow[@]}" --out "$tmp/r" >"$tmp/r3.out" 2>"$tmp/r3.err" || fail "resume: $(tail -3 "$tmp/r3.err")"
grep -q "[1-9][0-9]* already there" "$tmp/r3.err" || fail "the resumed run kept nothing: $(tail -1 "$tmp/r3.err")"
"$engine" encode-latents "${slow[@]}" --out "$tmp/clean" >/dev/null 2>&1 || fail "clean run"
for f in "$tmp"/clean/latents/*.safetensors; do
  cmp -s "$f" "$tmp/r/latents/$(basename "$f")" || fail "resumed $(basename "$f") differs from a clean run's"
done
cmp -s "$tmp/clean/metadata.json" "$tmp/r/metadata.json" || fail "resumed metadata.json differs"
ls -a "$tmp/r/latents" | grep -q 'tmp' && fail "a temporary file was left behind"
# Options that change the clips redo the files.
"$engine" encode-latents "${slow[@]}" --seed 8 --out "$tmp/r" >/dev/null 2>"$tmp/r4.err" || fail "reseeded run"
grep -q ' 0 already there' "$tmp/r4.err" || fail "another seed kept stale files: $(tail -1 "$tmp/r4.err")"
echo ok
