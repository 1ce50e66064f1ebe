#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `wanstudio-engine launch --nproc N VERB ...`: data parallel on one machine without torchrun.
# Rank 0's events on stdout (the same lines as events.jsonl), exit 0; a SIGTERM to the launcher
# cancels every rank at the same step (exit 130, a checkpoint); a rank killed with SIGKILL takes
# the run down with a non-zero exit and leaves no rank behind; usage errors are one line.
# WANSTUDIO_DP_BACKEND picks the backend by name (a Gloo group of one changes nothing; NCCL needs a GPU).
source "$(dirname "$0")/lib/common.sh"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_dit "$tmp/dit.yaml"
common=(train-experts --transformer_config "$tmp/dit.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
        --train_data_meta "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/text" --demo_data auto
        --video_sample_size 64 --video_sample_n_frames 5 --seed 3 --dataloader_num_workers 1
        --gradient_checkpointing=false --boundary_ratio 0.5)

# 1. Two ranks to the end.
"$engine" launch --nproc 2 "${common[@]}" --max_train_steps 4 --output_dir "$tmp/a" >"$tmp/a.out" 2>"$tmp/a.err" \
  || fail "launch exited $?: $(tail -3 "$tmp/a.err")"
grep -q '"type":"started".*"world_size":2' "$tmp/a.out" || fail "no started with world_size 2"
[ "$(grep -c '"type":"step"' "$tmp/a.out")" -eq 4 ] || fail "step count"
grep -q '"status":"completed","step":4' "$tmp/a.out" || fail "not completed"
cmp -s "$tmp/a.out" "$tmp/a/events.jsonl" || fail "stdout and events.jsonl differ (another rank wrote events?)"
grep -q 'rank 1' "$tmp/a.err" || fail "rank 1's log lines are not on stderr"
[ -d "$tmp/a/checkpoint-4" ] || fail "no final checkpoint"

# 2. SIGTERM to the launcher: every rank cancels after the same step.
"$engine" launch --nproc 2 "${common[@]}" --max_train_steps 100000 --checkpointing_steps 100000 --output_dir "$tmp/c" \
  >"$tmp/c.out" 2>"$tmp/c.err" &
pid=$!
wait_for "the first step of run c" 600 has_event step "$tmp/c.out"
kill -TERM $pid; wait $pid; rc=$?
[ $rc -eq 130 ] || fail "cancel exited $rc: $(tail -3 "$tmp/c.err")"
line=$(grep '"type":"finished"' "$tmp/c.out")
grep -q '"status":"cancelled"' <<<"$line" || fail "not cancelled: $line"
step=$(sed 's/.*"step":\([0-9]*\).*/\1/' <<<"$line")
[ -d "$tmp/c/checkpoint-$step" ] || fail "no checkpoint-$step after cancel"

# 3. One rank killed: the launcher stops the others and fails; no rank is left running.
"$engine" launch --nproc 2 "${common[@]}" --max_train_steps 100000 --checkpointing_steps 100000 --output_dir "$tmp/k" \
  >"$tmp/k.out" 2>"$tmp/k.err" &
pid=$!
wait_for "the first step of run k" 600 has_event step "$tmp/k.out"
ranks=$(pgrep -P $pid | tr '\n' ' ')
[ "$(wc -w <<<"$ranks")" -eq 2 ] || fail "expected 2 rank processes, got '$ranks'"
kill -9 $(awk '{print $2}' <<<"$ranks")
wait $pid; rc=$?
[ $rc -ne 0 ] || fail "a killed rank still gave exit 0"
for r in $ranks; do kill -0 "$r" 2>/dev/null && fail "rank process $r left running"; done

# 4. The backend. WANSTUDIO_DP_BACKEND=gloo makes a group even of one process, so every collective
# of a step runs through Gloo; over one rank they change nothing: the same weights as no group.
"$engine" "${common[@]}" --max_train_steps 2 --output_dir "$tmp/p" >/dev/null 2>"$tmp/p.err" </dev/null \
  || fail "plain run: $(tail -3 "$tmp/p.err")"
grep -q 'data parallel' "$tmp/p.err" && fail "a single process without WANSTUDIO_DP_BACKEND made a group"
WANSTUDIO_DP_BACKEND=gloo MASTER_PORT=$((29700 + RANDOM % 200)) "$engine" "${common[@]}" --max_train_steps 2 \
  --output_dir "$tmp/g" >/dev/null 2>"$tmp/g.err" </dev/null || fail "gloo group of one: $(tail -3 "$tmp/g.err")"
grep -q 'data parallel: rank 0 of 1 over gloo' "$tmp/g.err" || fail "no Gloo group: $(grep -i parallel "$tmp/g.err")"
n=0
while IFS= read -r f; do
  same_tensors "$tmp/p/checkpoint-2/$f" "$tmp/g/checkpoint-2/$f" || fail "$f differs between no group and a group of one"
  n=$((n + 1))
done < <(cd "$tmp/p/checkpoint-2" && find . -name '*.safetensors')
[ "$n" -ge 2 ] || fail "only $n weight files compared"
# NCCL needs a GPU (and a CUDA build); an unknown name is refused. One line each, non-zero exit.
for pair in "nccl:WANSTUDIO_DP_BACKEND=nccl" "mpi:expected nccl or gloo"; do
  out=$(WANSTUDIO_DP_BACKEND=${pair%%:*} "$engine" "${common[@]}" --max_train_steps 1 --output_dir "$tmp/x${pair%%:*}" \
        2>&1 </dev/null) && fail "WANSTUDIO_DP_BACKEND=${pair%%:*} accepted on this machine"
  grep -q "${pair#*:}" <<<"$out" || fail "WANSTUDIO_DP_BACKEND=${pair%%:*}: $out"
done

# 5. Usage errors.
out=$("$engine" launch train-experts 2>&1) && fail "launch without --nproc accepted"
grep -q 'needs --nproc' <<<"$out" || fail "usage message: $out"
out=$("$engine" launch --nproc 2 no-such-verb 2>&1) && fail "unknown verb accepted"
grep -q "unknown verb 'no-such-verb'" <<<"$out" || fail "unknown verb message: $out"
echo ok
