#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# train-vae through the real worker on generated demo data (tiny crops, a few steps): the event
# stream (started, step with recon/kl, finished), run.yaml, checkpoints and the final weights
# with the widths in their metadata; resume from the latest checkpoint; a YAML run config with
# relative paths; config errors (every one reported, no `started`); cancel (exit 130).
set -uo pipefail
W="$1"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source "$(dirname "$0")/lib/wait.sh"
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1

if ! "$W" demo-data "$T/demo" --seed 2 > /dev/null 2> "$T/demo.err"; then
  if grep -q "video support is not built" "$T/demo.err"; then echo "SKIP: no video support"; exit 77; fi
  cat "$T/demo.err" >&2; fail "demo-data failed"
fi
SMALL=(--video_sample_size 32 --video_sample_n_frames 5 --train_batch_size 2 --learning_rate 1e-3)

# A fresh run: 3 steps, a checkpoint at step 2, the final weights in the run folder.
"$W" train-vae --train_data_meta "$T/demo/metadata.json" --output_dir "$T/run" --max_train_steps 3 \
  --checkpointing_steps 2 "${SMALL[@]}" > "$T/out1.jsonl" 2> "$T/err1.log"
rc=$?
[ $rc -eq 0 ] || { cat "$T/err1.log" >&2; fail "train-vae exit $rc"; }
[ -f "$T/run/vae.safetensors" ] || fail "no final weights"
[ -f "$T/run/checkpoint-2/vae.safetensors" ] || fail "no checkpoint-2"
[ -f "$T/run/checkpoint-2/trainer_state/optimizer.safetensors" ] || fail "no optimizer state"
[ -f "$T/run/run.yaml" ] || fail "no run.yaml"
grep -q '^job: vae' "$T/run/run.yaml" || fail "run.yaml has no job: vae"
[ -f "$T/run/logs/engine.log" ] || fail "no engine.log"
cmp -s <(grep -v heartbeat "$T/out1.jsonl") <(grep -v heartbeat "$T/run/events.jsonl") || fail "stdout and events.jsonl differ"

python3 - "$T/out1.jsonl" <<'PY' || fail "event stream"
import json, math, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ev = [e for e in ev if e["type"] not in ("heartbeat", "log")]
assert ev[0]["type"] == "started", ev[0]
s = ev[0]
assert s["job"] == "vae" and s["resume_step"] == 0 and s["max_train_steps"] == 3 and s["world_size"] == 1, s
assert s["config"]["video_sample_size"] == 32 and s["config"]["kl_weight"] == 1e-6, s["config"]
steps = [e for e in ev if e["type"] == "step"]
assert [e["step"] for e in steps] == [1, 2, 3], steps
for e in steps:
    assert e["expert"] == "vae" and e["expert_step"] == e["step"], e
    for k in ("loss", "lr", "grad_norm", "samples_per_s", "eta_s", "recon", "kl"):
        assert isinstance(e[k], (int, float)) and math.isfinite(e[k]), (k, e)
    assert abs(e["loss"] - (e["recon"] + 1e-6 * e["kl"])) < 1e-6 * max(1, e["loss"]), e
ck = [e for e in ev if e["type"] == "checkpoint"]
assert [c["path"] for c in ck] == ["checkpoint-2"], ck
assert ev[-1] == {**ev[-1], "type": "finished", "status": "completed", "step": 3}, ev[-1]
PY

# The weights: official keys, the tiny widths in the metadata.
"$W" inspect "$T/run/vae.safetensors" > "$T/inspect.txt" || fail "inspect"
grep -q "196 tensors, 486082 parameters" "$T/inspect.txt" || { tail -2 "$T/inspect.txt"; fail "tensor count"; }
grep -q "decoder.upsamples.0.upsamples.3.time_conv.weight" "$T/inspect.txt" || fail "official key names"
python3 - "$T/run/vae.safetensors" <<'PY' || fail "metadata config"
import json, struct, sys
f = open(sys.argv[1], "rb"); n = struct.unpack("<Q", f.read(8))[0]; h = json.loads(f.read(n))
c = json.loads(h["__metadata__"]["config"])
assert c["dim"] == 4 and c["dec_dim"] == 6 and c["z_dim"] == 48, c
PY

# Resume from the latest checkpoint (2): steps 3 and 4, then the final weights again.
"$W" train-vae --train_data_meta "$T/demo/metadata.json" --output_dir "$T/run" --max_train_steps 4 \
  --checkpointing_steps 2 --resume_from_checkpoint latest "${SMALL[@]}" > "$T/out2.jsonl" 2> "$T/err2.log" ||
  { cat "$T/err2.log" >&2; fail "resume"; }
python3 - "$T/out2.jsonl" <<'PY' || fail "resume events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
st = [e for e in ev if e["type"] == "started"][0]
assert st["resume_step"] == 2, st
assert [e["step"] for e in ev if e["type"] == "step"] == [3, 4]
assert ev[-1]["type"] == "finished" and ev[-1]["status"] == "completed" and ev[-1]["step"] == 4
PY
[ -d "$T/run/checkpoint-4" ] || fail "no checkpoint-4 after resume"

# A YAML run config with paths relative to it, demo_data auto writing the dataset first.
mkdir -p "$T/cfg"
cat > "$T/cfg/run.yaml" <<YAML
job: vae
demo_data: auto
train_data_dir: ../auto
train_data_meta: ../auto/metadata.json
output_dir: ../yrun
save_path: ../weights/demo_vae.safetensors
video_sample_size: 32
video_sample_n_frames: 1
train_batch_size: 1
max_train_steps: 2
checkpointing_steps: 100
YAML
"$W" train-vae --config "$T/cfg/run.yaml" > "$T/out3.jsonl" 2> "$T/err3.log" || { cat "$T/err3.log" >&2; fail "YAML run"; }
[ -f "$T/auto/metadata.json" ] || fail "demo_data auto did not write the dataset"
[ -f "$T/weights/demo_vae.safetensors" ] || fail "save_path not honoured"
grep -q '"status":"completed"' "$T/out3.jsonl" || fail "YAML run did not complete"

# Config errors: every problem, no `started`, finished failed at step 0, exit 1.
"$W" train-vae --train_data_meta "$T/nope.json" --output_dir "$T/bad" --video_sample_size 40 \
  --video_sample_n_frames 4 > "$T/out4.jsonl" 2> /dev/null
rc=$?
[ $rc -eq 1 ] || fail "bad config exit $rc"
[ "$(grep -c '"type":"error"' "$T/out4.jsonl")" -eq 3 ] || { cat "$T/out4.jsonl"; fail "expected 3 errors"; }
grep -q '"type":"started"' "$T/out4.jsonl" && fail "started on a bad config"
grep -q '"status":"failed","step":0' "$T/out4.jsonl" || fail "no failed finish"
echo "job: upsampler" > "$T/cfg/wrong.yaml"
"$W" train-vae --config "$T/cfg/wrong.yaml" --train_data_meta "$T/demo/metadata.json" > "$T/out5.jsonl" 2> /dev/null &&
  fail "job: upsampler accepted"
grep -q "does not match this verb" "$T/out5.jsonl" || fail "job mismatch message"

# Cancel: SIGTERM after the first step finishes that step, checkpoints it, exits 130.
"$W" train-vae --train_data_meta "$T/demo/metadata.json" --output_dir "$T/crun" --max_train_steps 100000 \
  "${SMALL[@]}" > "$T/out6.jsonl" 2> "$T/err6.log" < /dev/null &
pid=$!
wait_for "the first step of the cancel run" 600 has_event step "$T/out6.jsonl"
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || { cat "$T/err6.log" >&2; fail "cancel exit $rc"; }
python3 - "$T/out6.jsonl" "$T/crun" <<'PY' || fail "cancel events"
import json, os, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fin = ev[-1]
assert fin["type"] == "finished" and fin["status"] == "cancelled" and fin["step"] >= 1, fin
assert os.path.isfile(os.path.join(sys.argv[2], "checkpoint-%d" % fin["step"], "vae.safetensors"))
PY
"$W" schema train-vae > "$T/schema.json" || fail "schema train-vae exit"
python3 - "$T/schema.json" <<'PY' || fail "schema train-vae"
import json, sys
s = json.load(open(sys.argv[1]))
opts = {o["name"]: o for o in s["options"]}
assert s["job"] == "vae"
for n in ("config_path", "vae_path", "train_data_meta", "demo_data", "video_sample_size", "video_sample_n_frames",
          "video_sample_stride", "train_batch_size", "learning_rate", "adam_beta1", "max_train_steps", "kl_weight",
          "seed", "output_dir", "checkpointing_steps", "save_path"):
    assert n in opts, n
assert opts["kl_weight"]["default"] == 1e-6 and opts["train_data_meta"]["required"] is True
PY
"$W" train-vae --help > "$T/help.txt" || fail "train-vae --help exit"
grep -q "kl_weight" "$T/help.txt" || fail "train-vae --help"
echo "train_vae.sh: all checks passed"
