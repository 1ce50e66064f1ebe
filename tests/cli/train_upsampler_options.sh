#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every train-upsampler option (docs/design/upsampler-training.md §2 and §2.1) has a check here that fails
# if the option did nothing: runs of 1–7 steps on the demo data with a tiny VAE and model, read
# back through the `step` / `started` / `log` / `error` events and the checkpoint weights.
# Most runs use S = 48 and one frame (every bucket is 48×48), which is enough for options that
# do not act on sizes or frames. Runs with the same seed see the same batches, and the first
# update uses lr 0 (warmup), so first-step losses of two runs are directly comparable.
# The latent cache, bitwise resume, cancel and SIGKILL recovery are in train_upsampler.sh.
# Three options promise identical results and act only on speed or memory, so their checks are
# "same result" and cannot see the option ignored: gradient_checkpointing, vae_mini_batch and
# dataloader_num_workers. mixed_precision bf16, low_vram and allow_tf32 are CPU no-ops: checked
# by their warning. Runs go two at a time; the checks run in one python pass at the end.
set -u
engine=$(realpath "$1") data=$(realpath "$2")
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
# CPU only, even on a GPU machine: the checks compare runs bit for bit.
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 CUDA_VISIBLE_DEVICES= TMPD=$tmp
vae=$data/vae/vae_dev_weights.safetensors
t_start=$SECONDS

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
model_kw='latent_upsampler_kwargs:
  mid_channels: 32
  num_blocks_per_stage: 1'
printf '%s\n' "$model_kw" >"$tmp/model.yaml"
printf 'latent_upsampler_kwargs:\n  mid_channels: 64\n  num_blocks_per_stage: 1\n' >"$tmp/model64.yaml"
printf '%s\nvae_kwargs:\n  vae_subpath: vae/tiny.safetensors\n' "$model_kw" >"$tmp/model_sub.yaml"
# A .pth has no __metadata__ config: the tiny widths come from the model YAML's vae_kwargs.
printf '%s\nvae_kwargs:\n  dim: 4\n  dec_dim: 6\n' "$model_kw" >"$tmp/model_pth.yaml"
printf '%s\nscheduler_kwargs:\n  shift: 100\n' "$model_kw" >"$tmp/model_shift.yaml"
mkdir -p "$tmp/pre_sub/vae" "$tmp/pre_pth" "$tmp/empty" "$tmp/elsewhere"
cp "$vae" "$tmp/pre_sub/vae/tiny.safetensors"
cp "$data/vae/vae_dev_weights.pth" "$tmp/pre_pth/Wan2.2_VAE.pth"
cp "$tmp/data/metadata.json" "$tmp/elsewhere/meta.json"  # relative file_path values, now in another folder

# q.py CHECKS: evaluates the queued checks on events and weights; each fails with its MESSAGE
# (and the value of SHOW) unless EXPR is true. Names: S(run) step events, ST(run) the last `started`,
# LOGS(run, level), ERR(run), VAL(run), L(run, i) the i-th step loss, CK(run) checkpoint numbers,
# W(run[, step]) the weights file, TS(path) {name: (dtype, shape, bytes)}, FL(path, name) floats.
cat >"$tmp/q.py" <<'PY'
import glob, json, math, os, struct, sys
T = os.environ["TMPD"]
def ev(r):
    # A run refused for its config makes no folder: its events are on stdout (<run>.out) only.
    path = os.path.join(T, r, "events.jsonl")
    if not os.path.exists(path): path = os.path.join(T, r + ".out")
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip().startswith("{")]
def S(r): return [e for e in ev(r) if e["type"] == "step"]
def ST(r): return [e for e in ev(r) if e["type"] == "started"][-1]
def LOGS(r, level=None): return [e["message"] for e in ev(r) if e["type"] == "log" and level in (None, e.get("level"))]
def ERR(r): return [e["message"] for e in ev(r) if e["type"] == "error"]
def VAL(r): return [e for e in ev(r) if e["type"] == "validation"]
def L(r, i=0): return S(r)[i]["loss"]
def CK(r): return sorted(int(p.rsplit("-", 1)[1]) for p in glob.glob(os.path.join(T, r, "checkpoint-*")))
def W(r, step=None, sub="latent_upsampler/diffusion_pytorch_model.safetensors"):
    return os.path.join(T, r, "checkpoint-%d" % (step or CK(r)[-1]), sub)
def TS(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        body = f.read()
    return {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in head.items() if k != "__metadata__"}
def FL(path, name):
    raw = TS(path)[name][2]
    return struct.unpack("<%df" % (len(raw) // 4), raw)
def close(a, b, rel=1e-6): return abs(a - b) <= rel * max(abs(a), abs(b))
def median(xs): xs = sorted(xs); return xs[len(xs) // 2]
def square_edge(S): return max(48, S // 48 * 48)  # a square clip's bucket at scale 1.5 (A = 48)
META = json.load(open(os.path.join(T, "data", "metadata.json")))
def square_steps(r):  # steps whose first clip (the one that picks the bucket) is square
    return [s for s in S(r) if META[s["clips"][0]["row"]]["width"] == META[s["clips"][0]["row"]]["height"]]
def video_clips(r): return [c for s in S(r) for c in s["clips"] if c["frames_in_clip"] > 1]
def changed(a, b):  # names of the tensors whose bytes differ between two weight files
    x, y = TS(a), TS(b)
    return sorted(k for k in x if x[k][2] != y[k][2])
def step_size(a, b, name):  # median |change| of the elements of one tensor that changed
    return median([abs(p - q) for p, q in zip(FL(a, name), FL(b, name)) if p != q])
def lr_factor(name, k, W, N):  # docs/design/upsampler-training.md §9.2
    p = (k - W) / max(1, N - W)
    if name == "constant": return 1.0
    if k < W: return k / max(1, W)
    if name == "constant_with_warmup": return 1.0
    if name == "linear": return max(0.0, (N - k) / max(1, N - W))
    if name == "cosine": return max(0.0, 0.5 * (1 + math.cos(math.pi * 2 * 0.5 * p)))
    if name == "cosine_with_restarts": return 0.0 if p >= 1 else max(0.0, 0.5 * (1 + math.cos(math.pi * ((1 * p) % 1))))
    if name == "polynomial":
        lr, end = LR, 1e-7
        return end / lr if k > N else ((lr - end) * (1 - (k - W) / (N - W)) + end) / lr
LR = 3e-3
# The queued checks: records of (expression, message, what to show on failure), NUL-separated.
# Events are read once per run (cached); every check runs, and each failure is reported.
_ev = ev
_cache = {}
def ev(r):
    if r not in _cache: _cache[r] = _ev(r)
    return _cache[r]
parts = open(sys.argv[1], "rb").read().decode().split("\0")[:-1]
failed = 0
for expr, msg, show in zip(parts[0::3], parts[1::3], parts[2::3]):
    try:
        good, why = eval(expr), ""
    except Exception as e:
        good, why = False, "(%s: %s)" % (type(e).__name__, e)
    if not good:
        failed += 1
        if show:
            try: why += " " + repr(eval(show))[:600]
            except Exception as e: why += " (%s)" % e
        print("FAIL: %s %s" % (msg, why))
print("%d checks, %d failed" % (len(parts) // 3, failed))
sys.exit(1 if failed else 0)
PY
# ok EXPR MESSAGE [SHOW]: queue a check for the single python pass at the end.
ok() { printf '%s\0%s\0%s\0' "$1" "$2" "${3:-}" >>"$tmp/checks"; }
# wts RUN [STEP]: the weights of a run's last (or STEP's) checkpoint.
wts() {
  local d=${2:+$tmp/$1/checkpoint-$2}
  [ -n "$d" ] || d=$(ls -d "$tmp/$1"/checkpoint-* 2>/dev/null | sort -V | tail -1)
  echo "$d/latent_upsampler/diffusion_pytorch_model.safetensors"
}

base=(--config_path "$tmp/model.yaml" --vae_path "$vae" --train_data_meta "$tmp/data/metadata.json"
      --video_sample_size 128 --video_sample_n_frames 5 --video_sample_stride 2 --seed 7 --learning_rate 1e-3
      --lr_warmup_steps 2 --dataloader_num_workers 0 --gradient_checkpointing=false --report_to none
      --checkpointing_steps 1000 --mixed_precision no --low_vram=false)
fast=(--video_sample_size 48 --video_sample_n_frames 1)
meta3=(--train_data_meta "$tmp/data/meta3.json")
# train NAME ARGS: a run from `base` that must succeed; train_err NAME ARGS: one that must exit 1.
train() {
  local n=$1; shift
  "$engine" train-upsampler "${base[@]}" "$@" --output_dir "$tmp/$n" >"$tmp/$n.out" 2>"$tmp/$n.err" ||
    fail "run $n exited $?: $(grep '"type":"error"' "$tmp/$n.out" | tail -2) $(tail -2 "$tmp/$n.err")"
}
train_err() {
  local n=$1; shift
  "$engine" train-upsampler "${base[@]}" "$@" --output_dir "$tmp/$n" >"$tmp/$n.out" 2>"$tmp/$n.err"
  local rc=$?
  [ $rc -eq 1 ] || fail "run $n should fail with exit 1, got $rc"
}
# spawn NAME ARGS: `train` in the background, two runs at a time; wait_all: wait for all of them.
running=0
spawn() {
  (train "$@") &
  running=$((running + 1))
  if [ $running -ge 2 ]; then wait -n || exit 1; running=$((running - 1)); fi
}
wait_all() { while [ $running -gt 0 ]; do wait -n || exit 1; running=$((running - 1)); done; }
# Checks report every failure and the script fails at the end (`bad` counts them).
nbad=0
bad() { echo "FAIL: $*"; nbad=$((nbad + 1)); }
same() { cmp -s "$1" "$2" || bad "$3: weights differ (${1#"$tmp"/} vs ${2#"$tmp"/})"; }
differ() {
  if ! [ -s "$1" ] || ! [ -s "$2" ]; then bad "$3: missing weights ($1, $2)"
  elif cmp -s "$1" "$2"; then bad "$3: weights are identical (${1#"$tmp"/} and ${2#"$tmp"/})"; fi
}
section() { echo "[$((SECONDS - t_start))s] $*"; }

python3 - "$tmp/data" <<'PY'
import json, sys
d = sys.argv[1]
m = json.load(open(d + "/metadata.json"))
pick = lambda names: [r for r in m if r["file_path"].rsplit("/", 1)[-1] in names]
# Three square clips share one bucket: 3 batches per epoch at batch 1, one at batch 2.
json.dump(pick({"clip_05.mp4", "clip_06.mp4", "clip_07.mp4"}), open(d + "/meta3.json", "w"))
json.dump(pick({"clip_07.mp4"}), open(d + "/meta1.json", "w"))
PY

# ---------------------------------------------------------------- runs
# Every run first (two at a time), then the checks, grouped by option.
section "runs"
python3 - "$vae" "$tmp/vae_extra.safetensors" <<'PY'
import json, struct, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]; head = json.loads(f.read(n)); body = f.read()
head["zz_extra.weight"] = {"dtype": "F32", "shape": [1], "data_offsets": [len(body), len(body) + 4]}
h = json.dumps(head).encode(); h += b" " * (-len(h) % 8)
open(dst, "wb").write(struct.pack("<Q", len(h)) + h + body + b"\0" * 4)
PY
# References: `base` (S = 128, 5 frames) and `fast` (S = 48, 1 frame), 2 steps each.
spawn base --max_train_steps 2
spawn fast "${fast[@]}" --max_train_steps 2
spawn fast_again "${fast[@]}" --max_train_steps 2
spawn seed8 "${fast[@]}" --max_train_steps 2 --seed 8
# Model and VAE.
spawn c64 "${fast[@]}" --max_train_steps 1 --config_path "$tmp/model64.yaml"
spawn pre_sub "${fast[@]}" --max_train_steps 1 --vae_path "" --config_path "$tmp/model_sub.yaml" \
  --pretrained_model_name_or_path "$tmp/pre_sub"
spawn pre_pth "${fast[@]}" --max_train_steps 1 --vae_path "" --config_path "$tmp/model_pth.yaml" \
  --pretrained_model_name_or_path "$tmp/pre_pth"
spawn vae_over "${fast[@]}" --max_train_steps 1 --pretrained_model_name_or_path "$tmp/empty"
spawn ws_src "${fast[@]}" --max_train_steps 6 --lr_scheduler constant --learning_rate 3e-3
# Data and sizes.
spawn meta1 "${fast[@]}" --max_train_steps 2 --train_data_meta "$tmp/data/meta1.json"
spawn s192 --video_sample_n_frames 1 --video_sample_size 192 --max_train_steps 1
spawn nobucket --video_sample_n_frames 1 --max_train_steps 2 --enable_bucket=false
spawn stride3 --video_sample_size 48 --video_sample_stride 3 --max_train_steps 3
spawn n9 --video_sample_size 48 --video_sample_n_frames 9 --max_train_steps 3
spawn hw_on --video_sample_size 768 --video_sample_n_frames 1 --max_train_steps 1
spawn hw_off --video_sample_size 768 --video_sample_n_frames 1 --max_train_steps 1 --random_hw_adapt=false
# Batches, loader, degradation.
spawn b2 "${fast[@]}" --max_train_steps 2 --train_batch_size 2 --vae_mini_batch 1
spawn b2m2 "${fast[@]}" --max_train_steps 2 --train_batch_size 2 --vae_mini_batch 2
spawn ov_off "${fast[@]}" --max_train_steps 2 --overlap_vae_encode=false
spawn wg_off "${fast[@]}" --max_train_steps 2 --winograd_convs=false
spawn acc2 --max_train_steps 1 --gradient_accumulation_steps 2
spawn deg "${fast[@]}" --max_train_steps 3 --enable_degradation --dataloader_num_workers 0
spawn deg_w2 "${fast[@]}" --max_train_steps 3 --enable_degradation --dataloader_num_workers 2
spawn deg55 "${fast[@]}" --max_train_steps 2 --enable_degradation --degradation_ops_range 5 5
# Steps, epochs, checkpoints.
spawn ep "${fast[@]}" "${meta3[@]}" --num_train_epochs 2
spawn ep_max "${fast[@]}" "${meta3[@]}" --num_train_epochs 1 --max_train_steps 4
spawn ep_acc "${fast[@]}" "${meta3[@]}" --num_train_epochs 2 --gradient_accumulation_steps 2 --train_batch_size 1
spawn ck "${fast[@]}" --max_train_steps 5 --checkpointing_steps 2
spawn ck_lim "${fast[@]}" --max_train_steps 5 --checkpointing_steps 1 --checkpoints_total_limit 2
spawn r1 "${fast[@]}" --max_train_steps 4 --checkpointing_steps 2
# Learning rate and optimizer.
for s in constant constant_with_warmup linear cosine cosine_with_restarts polynomial; do
  spawn "lr_$s" "${fast[@]}" "${meta3[@]}" --learning_rate 3e-3 --lr_scheduler $s --lr_warmup_steps 2 --max_train_steps 6
done
spawn lr_w0 "${fast[@]}" --max_train_steps 1 --lr_warmup_steps 0
spawn scale "${fast[@]}" --max_train_steps 1 --lr_scheduler constant --scale_lr --train_batch_size 2 --gradient_accumulation_steps 2
adam=("adam_beta1 0.5" "adam_beta2 0.9" "adam_weight_decay 0.5" "adam_epsilon 1e-2")
for o in "${adam[@]}"; do
  read -r k v <<<"$o"
  spawn "$k" "${fast[@]}" --max_train_steps 2 --"$k" "$v"
done
# With adam_epsilon 1 the AdamW update is about lr·g, so the clipping scale reaches the weights.
spawn clip_def "${fast[@]}" --max_train_steps 2 --adam_epsilon 1
spawn clip_big "${fast[@]}" --max_train_steps 2 --adam_epsilon 1 --max_grad_norm 1e9
spawn clip_off "${fast[@]}" --max_train_steps 2 --adam_epsilon 1 --max_grad_norm 0
spawn clip_null "${fast[@]}" --max_train_steps 2 --adam_epsilon 1 --max_grad_norm null
spawn abn "${fast[@]}" --max_train_steps 6 --max_grad_norm 0.01 --abnormal_norm_clip_start 3 --initial_grad_norm_ratio 3
spawn t0 "${fast[@]}" --max_train_steps 1  # lr 0 on update 1: the initial weights
spawn tm "${fast[@]}" --max_train_steps 1 --lr_scheduler constant --trainable_modules final_conv \
  --trainable_modules_low_learning_rate initial_conv
spawn ema "${fast[@]}" --max_train_steps 3 --use_ema
# Validation: 3-step epochs.
spawn val "${fast[@]}" "${meta3[@]}" --max_train_steps 7 --validation_steps 4 --validation_epochs 1 \
  --validation_paths "$tmp/data/videos/clip_00.mp4" "$tmp/missing.mp4"
spawn val_e2 "${fast[@]}" "${meta3[@]}" --max_train_steps 7 --validation_epochs 2 --validation_paths "$tmp/data/videos/clip_00.mp4"
# Noise: one step each, compared by first-step loss.
N=(--max_train_steps 1 --enable_noisy_training)
spawn nz_off "${fast[@]}" --max_train_steps 1 --noise_sample_mode uniform --noise_sigma_min 0.9 --noise_sigma_max 1.0
spawn nz_hi "${fast[@]}" "${N[@]}" --noise_sample_mode uniform --noise_sigma_min 0.9 --noise_sigma_max 1.0
spawn nz_lo "${fast[@]}" "${N[@]}" --noise_sample_mode uniform --noise_sigma_min 0 --noise_sigma_max 0.01
spawn nz_s0 "${fast[@]}" "${N[@]}" --noise_step_range 0 1
spawn nz_s49 "${fast[@]}" "${N[@]}" --noise_step_range 49 50
spawn nz_k2 "${fast[@]}" "${N[@]}" --noise_num_inference_steps 2 --noise_step_range 1 2
spawn nz_sh "${fast[@]}" "${N[@]}" --noise_step_range 49 50 --noise_shift 100
spawn nz_yaml "${fast[@]}" "${N[@]}" --noise_step_range 49 50 --config_path "$tmp/model_shift.yaml"
# Loss, memory, precision, logging, compatibility.
spawn px "${fast[@]}" --max_train_steps 2 --enable_pixel_loss
spawn px2 "${fast[@]}" --max_train_steps 2 --enable_pixel_loss --pixel_loss_weight 2 --gradient_checkpointing
spawn gc --max_train_steps 2 --gradient_checkpointing --mixed_precision bf16 --low_vram
spawn tb "${fast[@]}" --max_train_steps 1 --report_to tensorboard --logging_dir tbx
inert=(--max_train_samples 5 --video_repeat 2 --random_ratio_crop --revision main --variant fp16 --cache_dir "$tmp/hub"
       --non_ema_revision main --tracker_project_name p --report_model_info --multi_stream --save_state --local_rank 0)
spawn compat "${fast[@]}" --max_train_steps 2 "${inert[@]}" --allow_tf32
hy=()
for a in "${base[@]}" "${fast[@]}"; do [[ $a == --* ]] && hy+=("${a//_/-}") || hy+=("$a"); done
"$engine" train-upsampler "${hy[@]}" --max-train-steps 2 --output-dir "$tmp/hy" >/dev/null 2>"$tmp/hy.err" ||
  fail "hyphen run: $(tail -2 "$tmp/hy.err")"
(cd "$tmp" && "$engine" train-upsampler "${base[@]}" "${fast[@]}" --max_train_steps 1 --train_data_meta elsewhere/meta.json \
   --train_data_dir data --output_dir rel/out >/dev/null 2>"$tmp/rel.err") || fail "relative paths run: $(tail -2 "$tmp/rel.err")"
# Runs that must fail.
train_err pre_missing "${fast[@]}" --vae_path "" --config_path "$tmp/model_sub.yaml" --pretrained_model_name_or_path "$tmp/empty"
train_err vae_strict "${fast[@]}" --vae_path "$tmp/vae_extra.safetensors"
train_err nodir "${fast[@]}" --max_train_steps 1 --train_data_meta "$tmp/elsewhere/meta.json"
train_err vmb0 "${fast[@]}" --vae_mini_batch 0
train_err deg_bad "${fast[@]}" --degradation_ops_range 3 2
train_err poly_bad "${fast[@]}" --lr_scheduler polynomial --learning_rate 1e-8
train_err nz_bad "${fast[@]}" "${N[@]}" --noise_step_range 5 60
train_err fp16 "${fast[@]}" --mixed_precision fp16
train_err compat_err "${fast[@]}" --use_8bit_adam --use_came --use_deepspeed true --use_fsdp=true
train_err report_bad "${fast[@]}" --report_to wandb
train_err tm_none "${fast[@]}" --trainable_modules no_such_module
train_err hw_cache "${fast[@]}" --video_sample_size 768 --cache_latents
train_err px_ov "${fast[@]}" --enable_pixel_loss --overlap_vae_encode
wait_all
# Runs that start from other runs' checkpoints.
spawn ws_dir "${fast[@]}" --max_train_steps 1 --latent_upsampler_path "$tmp/ws_src/checkpoint-6"
spawn ws_file "${fast[@]}" --max_train_steps 1 --latent_upsampler_path "$(wts ws_src)"
spawn ws_mis "${fast[@]}" --max_train_steps 1 --latent_upsampler_path "$tmp/c64/checkpoint-1/latent_upsampler"
spawn r2 "${fast[@]}" --max_train_steps 4 --resume_from_checkpoint "$tmp/r1/checkpoint-2"
wait_all
# By basename: no such folder here, so <output_dir>/checkpoint-2 (r1's own).
"$engine" train-upsampler "${base[@]}" "${fast[@]}" --max_train_steps 3 --output_dir "$tmp/r1" \
  --resume_from_checkpoint elsewhere/checkpoint-2 >/dev/null 2>"$tmp/r3.err" || fail "resume by basename: $(tail -2 "$tmp/r3.err")"

# ---------------------------------------------------------------- checks
section "checks"
# seed
same "$(wts fast)" "$(wts fast_again)" "seed: same seed"
differ "$(wts fast)" "$(wts seed8)" "seed: seeds 7 and 8"
ok 'len(S("base")) == 2 and len(S("fast")) == 2' "reference runs: 2 steps each"
ok 'S("fast")[0]["lr"] == 0 and S("fast")[1]["lr"] > 0' "reference runs: the first update has lr 0"

# config_path, pretrained_model_name_or_path, vae_path
ok 'ST("c64")["parameters"] > ST("fast")["parameters"]' "config_path: mid_channels 64 has more parameters" \
   '(ST("c64")["parameters"], ST("fast")["parameters"])'
ok 'json.load(open(W("c64", sub="latent_upsampler/config.json")))["mid_channels"] == 64' "config_path: saved config"
# The VAE makes the latents, so an identical first loss means the same VAE was loaded.
ok 'L("pre_sub") == L("fast")' "pretrained_model_name_or_path + vae_kwargs.vae_subpath" '(L("pre_sub"), L("fast"))'
ok 'L("pre_pth") == L("fast")' "pretrained_model_name_or_path: default Wan2.2_VAE.pth" '(L("pre_pth"), L("fast"))'
ok 'L("vae_over") == L("fast")' "vae_path replaces the pretrained VAE"
ok 'any("empty/vae/tiny.safetensors" in e for e in ERR("pre_missing"))' "pretrained folder without the VAE" 'ERR("pre_missing")'
ok 'any("zz_extra.weight" in e for e in ERR("vae_strict"))' "vae_path loads strictly (an extra key is an error)" 'ERR("vae_strict")'

# latent_upsampler_path. Update 1 has lr 0: the saved weights are the warm-start weights, bit for bit.
same "$(wts ws_src)" "$(wts ws_dir)" "latent_upsampler_path (checkpoint folder)"
same "$(wts ws_src)" "$(wts ws_file)" "latent_upsampler_path (.safetensors file)"
ok 'L("ws_dir") < 0.9 * L("fast")' "latent_upsampler_path: the warm start begins at a lower loss" '(L("ws_dir"), L("fast"))'
ok 'any("skipped keys" in m for m in LOGS("ws_mis", "warning"))' "latent_upsampler_path: mismatched shapes are reported" 'LOGS("ws_mis")'

# train_data_meta, train_data_dir, output_dir
ok 'S("rel/out")[0]["clips"][0]["file"].startswith(T + "/data/")' "train_data_dir: file_path resolves under it" 'S("rel/out")[0]["clips"]'
ok 'ST("rel/out")["config"]["output_dir"] == T + "/rel/out"' "output_dir: relative to the cwd" 'ST("rel/out")["config"]["output_dir"]'
ok 'any("no usable rows" in e for e in ERR("nodir"))' "without train_data_dir the rows resolve next to the metadata" 'ERR("nodir")'
ok 'ST("meta1")["dataset_rows"] == 1 and all(c["file"].endswith("clip_07.mp4") for s in S("meta1") for c in s["clips"])' \
   "train_data_meta: only the one row" 'S("meta1")'
[ -s "$tmp/base/events.jsonl" ] && [ -s "$tmp/base/run.yaml" ] || bad "output_dir: events.jsonl and run.yaml"

# video_sample_size, _stride, _n_frames, enable_bucket, random_hw_adapt
ok 'square_steps("base") and square_steps("s192") and all(s["size_hr"] == [square_edge(S)] * 2 for r, S in (("base", 128), ("s192", 192)) for s in square_steps(r))' \
   "video_sample_size: square clips train at floor(S/48)·48" '[(s["size_hr"], s["clips"][0]["row"]) for s in S("s192") + S("base")]'
ok 'any(s["size_hr"][0] != s["size_hr"][1] for s in S("base"))' "buckets on: the reference run has a non-square batch" '[s["size_hr"] for s in S("base")]'
ok 'all(s["size_hr"] == [96, 96] and s["size_lr"] == [64, 64] for s in S("nobucket"))' "enable_bucket off: one square bucket" '[s["size_hr"] for s in S("nobucket")]'
ok '[c["row"] for s in S("nobucket") for c in s["clips"]] == [c["row"] for s in S("base") for c in s["clips"]]' "enable_bucket: same clips"
ok 'video_clips("stride3") and all(c["stride"] == 3 for c in video_clips("stride3")) and all(c["stride"] == 2 for c in video_clips("base"))' \
   "video_sample_stride" 'video_clips("stride3")'
ok 'any(c["frames_in_clip"] == 9 for c in video_clips("n9")) and all(c["frames_in_clip"] <= 9 for c in video_clips("n9")) and all(c["frames_in_clip"] == 5 for c in video_clips("base"))' \
   "video_sample_n_frames" 'video_clips("n9")'
ok 'any(s["frames"] == 9 for s in S("n9"))' "video_sample_n_frames: 9-frame batches" '[s["frames"] for s in S("n9")]'
ok 'all(s["hw_ratio"] == 1 for s in S("base") + S("s192"))' "random_hw_adapt: no effect below S = 768"
# S = 768: seed 7's first batch draws r = 1.25 (the batch stream is keyed, docs/design/upsampler-training.md §4.6); off, r is 1.
ok 'S("hw_on")[0]["hw_ratio"] in (1.25, 1.5) and S("hw_on")[0]["size_hr"][0] < 768' "random_hw_adapt at S = 768" 'S("hw_on")[0]'
ok 'S("hw_off")[0]["hw_ratio"] == 1 and S("hw_off")[0]["size_hr"] == [768, 768]' "random_hw_adapt off" 'S("hw_off")[0]'
ok 'any("random_hw_adapt" in e for e in ERR("hw_cache"))' "random_hw_adapt at S = 768 rules out cache_latents" 'ERR("hw_cache")'

# train_batch_size, gradient_accumulation_steps, vae_mini_batch, dataloader_num_workers
ok 'all(len(s["clips"]) == 2 for s in S("b2"))' "train_batch_size 2: two clips per step" 'S("b2")'
ok 'all(close(a["loss"], b["loss"], 1e-4) for a, b in zip(S("b2"), S("b2m2")))' "vae_mini_batch 1 vs 2: same losses" \
   '[(a["loss"], b["loss"]) for a, b in zip(S("b2"), S("b2m2"))]'
ok 'all(s["vae_encode_calls"] == 4 for s in S("b2")) and all(s["vae_encode_calls"] == 2 for s in S("b2m2"))' \
   "vae_mini_batch: 2 clips take 2 VAE calls each for x_hr and x_lr at 1, one each at 2" '[(s["vae_encode_calls"]) for s in S("b2") + S("b2m2")]'
ok 'any("vae_mini_batch" in e for e in ERR("vmb0"))' "vae_mini_batch 0 is an error"
# overlap_vae_encode (on by default): every batch after the first was taken and encoded during the
# step before, and the weights are those of encoding in the step. The pixel loss never overlaps,
# and asking for both is an error.
ok '[s["encoded_ahead"] for s in S("ws_src")] == [False] + [True] * 5' "overlap_vae_encode: batches 2.. encoded ahead" \
   '[s["encoded_ahead"] for s in S("ws_src")]'
ok 'not any(s["encoded_ahead"] for s in S("ov_off") + S("px"))' "overlap_vae_encode false (and the pixel loss): nothing ahead" \
   '[s["encoded_ahead"] for s in S("ov_off") + S("px")]'
ok 'TS(W("ov_off")) == TS(W("fast"))' "overlap_vae_encode: the same weights as encoding in the step"
ok 'any("overlap_vae_encode" in e and "enable_pixel_loss" in e for e in ERR("px_ov"))' "overlap with the pixel loss is an error" 'ERR("px_ov")'
# winograd_convs (on by default): on a CPU with AVX-512 every conv (mid 32, 48 latent channels: all
# multiples of 16) runs on Winograd; off, none does, and the losses agree to the rounding of the
# two algorithms.
if grep -q avx512f /proc/cpuinfo; then
  ok 'ST("fast")["winograd_convs"] == ST("fast")["packed_convs"] > 0' \
     "winograd_convs: every conv on Winograd" '(ST("fast")["winograd_convs"], ST("fast")["packed_convs"])'
fi
ok 'ST("wg_off")["winograd_convs"] == 0 and ST("wg_off")["packed_convs"] == ST("fast")["packed_convs"]' \
   "winograd_convs false: packed, none on Winograd" '(ST("wg_off")["winograd_convs"], ST("wg_off")["packed_convs"])'
ok 'all(close(a["loss"], b["loss"], 1e-4) for a, b in zip(S("wg_off"), S("fast")))' "winograd_convs false: the same losses" \
   '[(a["loss"], b["loss"]) for a, b in zip(S("wg_off"), S("fast"))]'
# Update 1 of `base` has lr 0, so its second batch met the initial weights too: accumulating
# both batches gives the mean of base's first two losses.
ok 'close(L("acc2"), (L("base", 0) + L("base", 1)) / 2, 1e-5)' "gradient_accumulation_steps 2: loss of two micro-batches" \
   '(L("acc2"), L("base", 0), L("base", 1))'
ok 'S("acc2")[0]["clips"] == S("base")[1]["clips"]' "gradient_accumulation_steps: the update ends on the second batch"
same "$(wts deg)" "$(wts deg_w2)" "dataloader_num_workers 0 vs 2"
ok '[s["clips"] for s in S("deg")] == [s["clips"] for s in S("deg_w2")]' "dataloader_num_workers: same clips and degradations"
ok 'all(s["decode_workers"] == 2 for s in S("deg_w2")) and all(s["decode_workers"] == 0 for s in S("deg"))' \
   "dataloader_num_workers: the loader runs that many decode threads" '[s["decode_workers"] for s in S("deg") + S("deg_w2")]'


# enable_degradation, degradation_ops_range
ok 'all(1 <= len(c["degradation"]) <= 4 for s in S("deg") for c in s["clips"])' "enable_degradation: 1–4 ops per clip" '[c.get("degradation") for s in S("deg") for c in s["clips"]]'
ok 'not any("degradation" in c for s in S("fast") for c in s["clips"])' "degradation off: no ops"
ok 'all(len(set(c["degradation"])) == 5 for s in S("deg55") for c in s["clips"])' "degradation_ops_range 5 5: all five ops" '[c.get("degradation") for s in S("deg55") for c in s["clips"]]'
ok 'any("degradation_ops_range" in e for e in ERR("deg_bad"))' "degradation_ops_range 3 2 is an error"

# num_train_epochs, max_train_steps, checkpointing_steps, checkpoints_total_limit
ok 'ST("ep")["max_train_steps"] == 6 and ST("ep")["num_train_epochs"] == 2' "num_train_epochs 2 × 3 rows: 6 steps" 'ST("ep")["max_train_steps"]'
ok '[s["epoch"] for s in S("ep")] == [0, 0, 0, 1, 1, 1]' "num_train_epochs: two epochs" '[s["epoch"] for s in S("ep")]'
ok 'ST("ep_max")["max_train_steps"] == 4 and ST("ep_max")["num_train_epochs"] == 2 and len(S("ep_max")) == 4' \
   "max_train_steps overrides num_train_epochs" '(ST("ep_max")["max_train_steps"], ST("ep_max")["num_train_epochs"])'
ok 'ST("ep_acc")["max_train_steps"] == 4' "steps per epoch = ceil(3 batches / 2 accumulation) = 2" 'ST("ep_acc")["max_train_steps"]'
ok 'CK("ck") == [2, 4, 5]' "checkpointing_steps 2" 'CK("ck")'
ok 'CK("ck_lim") == [4, 5]' "checkpoints_total_limit 2" 'CK("ck_lim")'

# learning_rate, lr_scheduler, lr_warmup_steps, scale_lr
for s in constant constant_with_warmup linear cosine cosine_with_restarts polynomial; do
  ok "len(S('lr_$s')) == 6 and all(close(e['lr'], LR * lr_factor('$s', k, 2, 6), 1e-9) or e['lr'] == LR * lr_factor('$s', k, 2, 6) for k, e in enumerate(S('lr_$s')))" \
     "lr_scheduler $s (learning_rate 3e-3, lr_warmup_steps 2)" "[(e['lr'], LR * lr_factor('$s', k, 2, 6)) for k, e in enumerate(S('lr_$s'))]"
done
ok 'S("lr_w0")[0]["lr"] == 1e-3' "lr_warmup_steps 0: full lr on the first update" 'S("lr_w0")[0]["lr"]'
ok 'close(S("scale")[0]["lr"], 4e-3)' "scale_lr: lr × batch 2 × accumulation 2" 'S("scale")[0]["lr"]'
ok 'any("polynomial" in e for e in ERR("poly_bad"))' "polynomial with lr ≤ lr_end is an error"

# adam_beta1, adam_beta2, adam_weight_decay, adam_epsilon
for o in "${adam[@]}"; do
  read -r k v <<<"$o"
  differ "$(wts fast)" "$(wts "$k")" "$k $v"
done

# max_grad_norm, abnormal_norm_clip_start, initial_grad_norm_ratio
ok 'close(S("clip_def")[0]["grad_clip"], 0.25) and close(S("clip_def")[1]["grad_clip"], 0.25 - 0.2 / 1000)' \
   "max_grad_norm 0.05: threshold 5 × 0.05 decaying" '[e["grad_clip"] for e in S("clip_def")]'
ok 'close(S("clip_big")[0]["grad_clip"], 5e9)' "max_grad_norm 1e9" '[e["grad_clip"] for e in S("clip_big")]'
ok 'all(e["grad_clip"] == 0 and e["grad_norm"] > 0 for e in S("clip_off") + S("clip_null"))' "max_grad_norm ≤ 0 / null: no clipping, grad_norm still logged" \
   '[(e["grad_clip"], e["grad_norm"]) for e in S("clip_off") + S("clip_null")]'
ok 'S("clip_def")[0]["grad_norm"] > 0.25' "the tiny model's gradient norm is above the clip threshold" 'S("clip_def")[0]["grad_norm"]'
same "$(wts clip_big)" "$(wts clip_off)" "max_grad_norm 0 = no clipping"
same "$(wts clip_big)" "$(wts clip_null)" "max_grad_norm null = no clipping"
differ "$(wts clip_big)" "$(wts clip_def)" "max_grad_norm 0.05 clips"
# docs/design/upsampler-training.md §9.4 with S = 3, ratio 3, max 0.01: m decays 0.03 → 0.01 over 3 updates; after update 3 a
# gradient norm above 5·m is clipped to m / min(g/m, 10).
expect='[(lambda m: m / min(e["grad_norm"] / m, 10) if e["grad_norm"] / m > 5 and k > 3 else m)(0.03 + (0.01 - 0.03) / 3 * k if k < 3 else 0.01) for k, e in enumerate(S("abn"))]'
ok "len(S('abn')) == 6 and all(close(e['grad_clip'], x) for e, x in zip(S('abn'), $expect)) and any(x < 0.01 for x in $expect)" \
   "abnormal_norm_clip_start 3 / initial_grad_norm_ratio 3" "[(e['grad_clip'], x) for e, x in zip(S('abn'), $expect)]"

# trainable_modules, trainable_modules_low_learning_rate
ok 'changed(W("t0"), W("tm")) == ["final_conv.bias", "final_conv.weight", "initial_conv.bias", "initial_conv.weight"]' \
   "trainable_modules final_conv + low-LR initial_conv: only those change" 'changed(W("t0"), W("tm"))'
# AdamW's first step moves every element by about lr (|m̂/√v̂| ≈ 1): lr/2 in the low-LR group.
ok '0.4 < step_size(W("t0"), W("tm"), "initial_conv.weight") / step_size(W("t0"), W("tm"), "final_conv.weight") < 0.6' \
   "trainable_modules_low_learning_rate: about half the step (lr / 2)" \
   '(step_size(W("t0"), W("tm"), "initial_conv.weight"), step_size(W("t0"), W("tm"), "final_conv.weight"))'

ok 'any("trainable_modules" in e for e in ERR("tm_none"))' "trainable_modules matching nothing is an error" 'ERR("tm_none")'

# use_ema, resume_from_checkpoint
ok 'all(close(e["ema_decay"], d) or e["ema_decay"] == d for e, d in zip(S("ema"), [0, 2 / 11, 3 / 12]))' "use_ema: decay min(0.9999, n/(n+9)), 0 at n = 1" '[e.get("ema_decay") for e in S("ema")]'
ok 'not any("ema_decay" in e for e in S("fast")) and not os.path.exists(W("fast", sub="latent_upsampler_ema"))' "no EMA without use_ema"
ok 'TS(W("ema")) == TS(W("ema", sub="latent_upsampler_ema/diffusion_pytorch_model.safetensors"))' "use_ema: the final latent_upsampler holds the EMA weights"
ok 'TS(W("ema")) != TS(W("ema", sub="trainer_state/online_weights.safetensors"))' "use_ema: EMA weights differ from the online ones"
ok 'ST("r2")["resume_step"] == 2 and [e["step"] for e in S("r2")] == [3, 4]' "resume_from_checkpoint: a checkpoint folder by path" '(ST("r2")["resume_step"], [e["step"] for e in S("r2")])'
same "$(wts r1 4)" "$(wts r2 4)" "resume_from_checkpoint (path): same weights as straight"
ok 'ST("r1")["resume_step"] == 2 and S("r1")[-1]["step"] == 3' "resume_from_checkpoint: a missing path falls back to <output_dir>/<basename>"

# validation_paths, validation_steps, validation_epochs
# Epochs of 3 steps: epoch ends at 3 and 6 (validation_epochs 1), plus step 4 (validation_steps 4).
ok '[v["step"] for v in VAL("val")] == [3, 4, 6] and all(v["index"] == 0 for v in VAL("val"))' "validation steps and epochs" '[(v["step"], v["index"]) for v in VAL("val")]'
ok '[v["step"] for v in VAL("val_e2")] == [3]' "validation_epochs 2: epoch 0 only" '[v["step"] for v in VAL("val_e2")]'
ok 'any("missing.mp4" in m for m in LOGS("val", "warning"))' "validation_paths: a missing video is a warning"
[ -s "$tmp/val/sample/step4_val0_upsampled.mp4" ] || bad "validation_paths: no sample/step4_val0_upsampled.mp4"

# Noisy training: first-step losses (the same batch); σ adds a floor of about σ² (docs/design/upsampler-training.md §7.3).
ok 'L("nz_off") == L("fast")' "noise options without enable_noisy_training change nothing"
ok 'L("nz_hi") > 3 * L("fast")' "enable_noisy_training, uniform σ in [0.9, 1]" '(L("nz_hi"), L("fast"))'
ok 'close(L("nz_lo"), L("fast"), 0.02)' "noise_sample_mode uniform, noise_sigma_min/max [0, 0.01]: about the clean loss" '(L("nz_lo"), L("fast"))'
ok 'L("nz_s0") > 3 * L("fast")' "noise_step_range 0 1: σ = 1" '(L("nz_s0"), L("fast"))'
ok 'close(L("nz_s49"), L("fast"), 0.1)' "noise_step_range 49 50: σ ≈ 0.024" '(L("nz_s49"), L("fast"))'
ok 'close(L("nz_k2"), L("fast"), 0.1)' "noise_num_inference_steps 2: pool[1] is the small σ (with 50 it is 0.996)" '(L("nz_k2"), L("fast"))'
ok 'L("nz_sh") > 3 * L("fast")' "noise_shift 100: the last σ is about 0.91" '(L("nz_sh"), L("fast"))'
ok 'L("nz_yaml") == L("nz_sh")' "noise_shift defaults to the model YAML's scheduler_kwargs.shift" '(L("nz_yaml"), L("nz_sh"))'
ok 'any("noise_step_range" in e for e in ERR("nz_bad"))' "noise_step_range beyond the pool is an error"

# enable_pixel_loss, pixel_loss_weight, gradient_checkpointing, mixed_precision, low_vram
ok 'not close(L("px"), L("fast"), 0.1)' "enable_pixel_loss: a different loss" '(L("px"), L("fast"))'
ok 'close(L("px2"), 2 * L("px"), 1e-5)' "pixel_loss_weight 2 doubles the loss" '(L("px2"), L("px"))'
differ "$(wts px)" "$(wts fast)" "enable_pixel_loss trains differently"
same "$(wts gc)" "$(wts base)" "gradient_checkpointing: same weights as without"
ok 'any("recomputed in backward" in m for m in LOGS("gc")) and not any("recomputed" in m for m in LOGS("base"))' "gradient_checkpointing: blocks are recomputed in backward (and only with it)" 'LOGS("gc")'

ok 'any("bf16" in m for m in LOGS("gc", "warning")) and not any("bf16" in m for m in LOGS("base"))' "mixed_precision bf16: CPU warning" 'LOGS("gc")'
ok 'any("low_vram" in m for m in LOGS("gc", "warning")) and not any("low_vram" in m for m in LOGS("base"))' "low_vram: CPU warning" 'LOGS("gc")'
ok 'any("mixed_precision" in e and "fp16" in e for e in ERR("fp16"))' "mixed_precision fp16 is a config error" 'ERR("fp16")'

# logging_dir, report_to
ls "$tmp"/tb/tbx/events.out.tfevents.* >/dev/null 2>&1 || bad "logging_dir: no tfevents in tbx/"
ls "$tmp"/tb/logs/events.out.tfevents.* >/dev/null 2>&1 && bad "logging_dir: TensorBoard files in logs/ anyway"
[ -n "$(find "$tmp/base" -name 'events.out.tfevents*')" ] && bad "report_to none wrote TensorBoard files"
ok 'any("report_to" in e for e in ERR("report_bad"))' "report_to wandb is an error" 'ERR("report_bad")'

# Compatibility flags (docs/design/upsampler-training.md §2.1)
same "$(wts compat)" "$(wts fast)" "compatibility flags change nothing"
ok '(lambda w: len(w) == 1 and all(k in w[0] for k in ("max_train_samples", "video_repeat", "random_ratio_crop", "revision",
     "variant", "cache_dir", "non_ema_revision", "tracker_project_name", "report_model_info", "multi_stream", "save_state",
     "local_rank")))([m for m in LOGS("compat", "warning") if "no effect" in m])' "compatibility flags: one warning naming them all" 'LOGS("compat")'
grep -q 'allow_tf32 has no effect' "$tmp/compat/logs/engine.log" || bad "allow_tf32: not reported as no effect on the CPU"
ok 'all(any(k in e and "not supported" in e for e in ERR("compat_err")) for k in ("use_8bit_adam", "use_came", "use_deepspeed", "use_fsdp"))' \
   "use_8bit_adam / use_came / use_deepspeed / use_fsdp true are errors" 'ERR("compat_err")'

# Flags spelled with hyphens.
same "$(wts hy)" "$(wts fast)" "hyphenated flags"
# Every option of the schema, hyphenated, with a valid value: none is unknown; the run stops at
# the one deliberate config error.
mapfile -t all < <("$engine" schema train-upsampler | python3 -c '
import json, sys
T = sys.argv[1]
given = {"config_path": T + "/model.yaml", "vae_path": sys.argv[2], "train_data_meta": T + "/data/metadata.json",
         "demo_data": "auto", "resume_from_checkpoint": "latest", "use_8bit_adam": "true", "output_dir": T + "/hy_all"}
for o in json.load(sys.stdin)["options"]:
    n, d = o["name"], o["default"]
    print("--" + n.replace("_", "-"))
    if n in given: print(given[n])
    elif o["list"]: [print(x) for x in d or []]
    elif d is None: print("" if o["type"] == "path" else "null" if o["type"] in ("int", "float") else "x")
    elif isinstance(d, bool): print("true" if d else "false")
    else: print(d)
' "$tmp" "$vae")
[ ${#all[@]} -gt 100 ] || bad "schema: too few options (${#all[@]} arguments)"
"$engine" train-upsampler "${all[@]}" >"$tmp/hy_all.out" 2>/dev/null; rc=$?
[ $rc -eq 1 ] || bad "all options hyphenated: exit $rc"
errs=$(grep '"type":"error"' "$tmp/hy_all.out")
[ "$(wc -l <<<"$errs")" -eq 1 ] && grep -q 'use_8bit_adam' <<<"$errs" || bad "all options hyphenated: $errs"

python3 "$tmp/q.py" "$tmp/checks" || nbad=$((nbad + 1))
[ $nbad -eq 0 ] || fail "see the failures above"
section "done"
echo ok
