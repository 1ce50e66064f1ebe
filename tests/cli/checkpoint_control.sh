#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checkpoints on request and by merit, with the real trainers on the demo data: a `save` line on
# the worker's stdin writes a checkpoint after the current step and training goes on (and that
# checkpoint resumes to the same bits as the straight run); keep_best keeps the checkpoint of the
# best validation PSNR (upsampler) or eval loss (experts) beside checkpoints_total_limit others.
source "$(dirname "$0")/lib/common.sh"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_upsampler "$tmp/model.yaml"
up=(--config_path "$tmp/model.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
    --train_data_meta "$tmp/data/metadata.json" --video_sample_size 128 --video_sample_n_frames 5
    --video_sample_stride 2 --learning_rate 1e-3 --lr_warmup_steps 2 --seed 7 --use_ema
    --dataloader_num_workers 1 --gradient_checkpointing=false --validation_steps 100000)
# The step of every event of TYPE in FILE, one per line.
steps_of() { grep "\"type\":\"$1\"" "$2" | sed 's/.*"step":\([0-9]*\).*/\1/'; }

# 1. Save now: the worker reads `save` after step 2 has been reported, checkpoints the step it is
#    on and trains to the end; no other checkpoint falls on the cadence (checkpointing_steps 100000).
mkfifo "$tmp/ctl"
"$engine" train-upsampler "${up[@]}" --max_train_steps 40 --checkpointing_steps 100000 --output_dir "$tmp/s" \
  <"$tmp/ctl" >/dev/null 2>"$tmp/s.err" &
pid=$!
exec 3>"$tmp/ctl"
has_step_2() { steps_of step "$tmp/s/events.jsonl" | grep -qx 2; }
wait_for "step 2 of run s" 600 has_step_2
echo save >&3
wait $pid || fail "run s exited $?: $(tail -3 "$tmp/s.err")"
exec 3>&-
saved=$(steps_of checkpoint "$tmp/s/events.jsonl" | head -1)
[ -n "$saved" ] && [ "$saved" -ge 2 ] && [ "$saved" -lt 40 ] || fail "no checkpoint on request: $(steps_of checkpoint "$tmp/s/events.jsonl" | tr '\n' ' ')"
[ "$(steps_of checkpoint "$tmp/s/events.jsonl" | tr '\n' ' ')" = "$saved 40 " ] || fail "checkpoints: $(steps_of checkpoint "$tmp/s/events.jsonl" | tr '\n' ' ')"
grep -q '"status":"completed","step":40' "$tmp/s/events.jsonl" || fail "the run did not train on after the save"
# It resumes exactly: from checkpoint-<saved> alone to step 40 gives the straight run's bits.
mkdir "$tmp/r" && cp -r "$tmp/s/checkpoint-$saved" "$tmp/r/"
"$engine" train-upsampler "${up[@]}" --max_train_steps 40 --checkpointing_steps 100000 --output_dir "$tmp/r" \
  --resume_from_checkpoint latest >/dev/null 2>"$tmp/r.err" </dev/null || fail "resume from the saved step: $(tail -3 "$tmp/r.err")"
for f in latent_upsampler/diffusion_pytorch_model.safetensors trainer_state/optimizer.safetensors trainer_state/ema_shadow.safetensors; do
  cmp -s "$tmp/s/checkpoint-40/$f" "$tmp/r/checkpoint-40/$f" || fail "resumed from checkpoint-$saved: $f differs"
done

# A checkpoint saved on request is kept: it holds the KEPT marker.
[ -f "$tmp/s/checkpoint-$saved/KEPT" ] || fail "checkpoint-$saved saved on request has no KEPT marker"

# 1b. SIGUSR1 is `save` too (for a studio or shell that did not start the worker), and rotation
#     (checkpoints_total_limit 1, a checkpoint every 5 steps) never removes the kept checkpoint.
"$engine" train-upsampler "${up[@]}" --max_train_steps 40 --checkpointing_steps 5 --checkpoints_total_limit 1 \
  --output_dir "$tmp/u" </dev/null >/dev/null 2>"$tmp/u.err" &
pid=$!
has_step_2u() { steps_of step "$tmp/u/events.jsonl" | grep -qx 2; }
wait_for "step 2 of run u" 600 has_step_2u
kill -USR1 $pid
wait $pid || fail "run u exited $?: $(tail -3 "$tmp/u.err")"
kept=$(grep -l . "$tmp"/u/checkpoint-*/KEPT 2>/dev/null | sed 's|.*/checkpoint-\([0-9]*\)/KEPT|\1|')
[ -n "$kept" ] || fail "SIGUSR1 saved no kept checkpoint: $(ls "$tmp/u")"
[ "$(ls -d "$tmp"/u/checkpoint-* | xargs -n1 basename | sort -t- -k2 -n | tr '\n' ' ')" = "checkpoint-$kept checkpoint-40 " ] ||
  fail "rotation with a kept checkpoint left: $(ls "$tmp/u" | tr '\n' ' ')"

# 2. keep_best (upsampler): a validation every step, at most 1 checkpoint besides the best one.
best_run() {
  "$engine" train-upsampler "${up[@]}" --max_train_steps 8 --checkpointing_steps 100000 --checkpoints_total_limit 1 \
    --validation_steps 1 --validation_paths "$tmp/data/videos/clip_00.mp4" --learning_rate 3e-3 "$@" \
    >/dev/null 2>"$tmp/best.err" </dev/null || fail "keep_best run: $(tail -3 "$tmp/best.err")"
}
best_run --keep_best --output_dir "$tmp/b"
python3 - "$tmp/b" 8 <<'EOF' || fail "upsampler best: $(cat "$tmp/b/best.json")"
import json, os, sys
run, last = sys.argv[1], int(sys.argv[2])
vals = [json.loads(l) for l in open(os.path.join(run, "events.jsonl")) if '"type":"validation"' in l]
assert len(vals) >= last, len(vals)
best = max(vals, key=lambda v: v["psnr"])  # max keeps the first of equals
b = json.load(open(os.path.join(run, "best.json")))
assert b["metric"] == "val_psnr" and b["higher_is_better"] is True, b
assert b["step"] == best["step"] and b["path"] == "checkpoint-%d" % best["step"], (b, best)
assert abs(b["value"] - best["psnr"]) < 1e-9, (b, best)
kept = sorted(int(n.split("-")[1]) for n in os.listdir(run) if n.startswith("checkpoint-"))
assert kept == sorted({best["step"], last}), kept
events = [json.loads(l) for l in open(os.path.join(run, "events.jsonl")) if '"type":"best"' in l]
assert events and events[-1]["step"] == best["step"], events
EOF
# Without the option the same run keeps only the last checkpoint and writes no best.json.
best_run --output_dir "$tmp/nb"
[ "$(ls -d "$tmp"/nb/checkpoint-* | xargs -n1 basename | tr '\n' ' ')" = "checkpoint-8 " ] || fail "without keep_best: $(ls "$tmp/nb")"
[ -e "$tmp/nb/best.json" ] && fail "best.json without keep_best"

# keep_best with nothing to rank by is a config error, for both trainers.
out=$("$engine" train-upsampler "${up[@]}" --keep_best --output_dir "$tmp/x" 2>/dev/null) && fail "keep_best without validation accepted"
grep -q '"keep_best' <<<"$out" || grep -q "keep_best" <<<"$out" || fail "no error naming keep_best: $out"
out=$("$engine" train-experts --transformer_config "$tmp/model.yaml" --train_data_meta "$tmp/data/metadata.json" \
      --keep_best --output_dir "$tmp/y" 2>/dev/null) && fail "experts keep_best without eval accepted"
grep -q 'eval_data_meta' <<<"$out" || fail "no error naming eval_data_meta: $out"

# 3. keep_best (experts): the lowest eval loss.
write_tiny_dit "$tmp/dit.yaml"
"$engine" train-experts --transformer_config "$tmp/dit.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors" \
  --train_data_meta "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/text" --demo_data auto \
  --video_sample_size 64 --video_sample_n_frames 5 --learning_rate 3e-3 --seed 3 --dataloader_num_workers 1 \
  --eval_data_meta "$tmp/data/metadata.json" --eval_steps 1 --eval_max_samples_per_t 1 --boundary_ratio 0.5 \
  --max_train_steps 6 --checkpointing_steps 100000 --checkpoints_total_limit 1 --keep_best --output_dir "$tmp/e" \
  >/dev/null 2>"$tmp/e.err" </dev/null || fail "experts keep_best run: $(tail -3 "$tmp/e.err")"
python3 - "$tmp/e" <<'EOF' || fail "experts best: $(cat "$tmp/e/best.json")"
import json, os, sys
run = sys.argv[1]
evals = [json.loads(l) for l in open(os.path.join(run, "events.jsonl")) if '"type":"eval"' in l]
assert len(evals) >= 6, len(evals)
best = min(evals, key=lambda e: e["loss"])  # min keeps the first of equals
b = json.load(open(os.path.join(run, "best.json")))
assert b["metric"] == "eval_loss" and b["higher_is_better"] is False, b
assert b["step"] == best["step"] and abs(b["value"] - best["loss"]) < 1e-12, (b, best)
kept = sorted(int(n.split("-")[1]) for n in os.listdir(run) if n.startswith("checkpoint-"))
assert kept == sorted({best["step"], 6}), kept
EOF
echo ok
