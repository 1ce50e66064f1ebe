#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checkpoints cross builds: a run trained by one worker resumes on the other (the Debian LibTorch 1.13
# build and the PyTorch 2.x build), both ways, for both trainers, and carries on as that worker's own
# straight run does (same data order, noise and losses within rounding). Args: ENGINE DATA OTHER_ENGINE.
# Registered where CMake is given the other build (WANSTUDIO_OTHER_ENGINE; build.sh --gpu names the
# Debian build's worker); that worker missing is a skip, said.
source "$(dirname "$0")/../cli/lib/common.sh"
other=${3:-}
if [ ! -x "$other" ]; then
  echo "SKIP: no other build's worker at '$other' (packaging/build.sh builds the Debian one)"
  exit 77
fi
va=$("$engine" --version | head -1); vb=$("$other" --version | head -1)
lt() { "$1" --version | grep '^libtorch'; }
[ "$(lt "$engine")" != "$(lt "$other")" ] || fail "both workers use the same LibTorch: $(lt "$engine")"
echo "this: $va, $(lt "$engine"); other: $vb, $(lt "$other")"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_upsampler "$tmp/up.yaml"
write_tiny_dit "$tmp/dit.yaml"
up=(train-upsampler --config_path "$tmp/up.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
    --train_data_meta "$tmp/data/metadata.json" --video_sample_size 64 --video_sample_n_frames 5
    --learning_rate 1e-3 --lr_warmup_steps 2 --seed 7 --use_ema --enable_noisy_training
    --dataloader_num_workers 1 --gradient_checkpointing=false --checkpointing_steps 100)
ex=(train-experts --transformer_config "$tmp/dit.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
    --train_data_meta "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/text" --demo_data auto
    --video_sample_size 64 --video_sample_n_frames 5 --learning_rate 1e-3 --lr_warmup_steps 2 --seed 3
    --dataloader_num_workers 1 --gradient_checkpointing=false --boundary_ratio 0.5 --checkpointing_steps 100)

# Step, routed expert and loss of each step event from step 4 on.
tail_losses() {
  python3 - "$1" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("type") == "step" and e["step"] >= 4:
        print(e["step"], e.get("expert", "-"), e["loss"])
PY
}
# The resumed run's steps 4..6 against the straight run's: same steps and experts, losses within 1e-3.
same_course() {
  python3 - "$1" "$2" "$3" <<'PY' || fail "$3: the resumed run's course differs from a straight run"
import sys
a = [l.split() for l in open(sys.argv[1])]
b = [l.split() for l in open(sys.argv[2])]
assert [x[:2] for x in a] == [x[:2] for x in b] and len(a) == 3, (a, b)
for x, y in zip(a, b):
    la, lb = float(x[2]), float(y[2])
    assert abs(la - lb) <= 1e-3 * max(abs(lb), 1e-6), (sys.argv[3], x, y)
print(sys.argv[3], "ok:", a)
PY
}

for job in up ex; do
  declare -n args=$job
  for dir in forth back; do
    if [ $dir = forth ]; then first=$engine second=$other; else first=$other second=$engine; fi
    run="$tmp/$job-$dir"
    "$first" "${args[@]}" --max_train_steps 3 --output_dir "$run" >/dev/null 2>"$run.err1" \
      || fail "$job $dir: first 3 steps: $(tail -3 "$run.err1")"
    [ -d "$run/checkpoint-3" ] || fail "$job $dir: no checkpoint-3"
    "$second" "${args[@]}" --max_train_steps 6 --output_dir "$run" --resume_from_checkpoint latest \
      >/dev/null 2>"$run.err2" || fail "$job $dir: resume on the other build: $(tail -3 "$run.err2")"
    grep '"type":"started"' "$run/events.jsonl" | tail -1 | grep -q '"resume_step":3' || fail "$job $dir: resume_step"
    grep '"type":"finished"' "$run/events.jsonl" | tail -1 | grep -q '"status":"completed","step":6' \
      || fail "$job $dir: did not complete"
    "$second" "${args[@]}" --max_train_steps 6 --output_dir "$run-straight" >/dev/null 2>"$run.err3" \
      || fail "$job $dir: straight run: $(tail -3 "$run.err3")"
    tail_losses "$run/events.jsonl" >"$run.resumed"
    tail_losses "$run-straight/events.jsonl" >"$run.straight"
    same_course "$run.resumed" "$run.straight" "$job $dir"
  done
done
echo "PASS"
