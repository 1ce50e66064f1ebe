#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `estimate`: the memory of a run file by formula, part by part, following the options (EMA,
# gradient checkpointing, frames, ZeRO over P ranks, LoRA); two real steps timed with their
# measured peak; bad input as one-line errors; and the benches' estimates within 15 % of their
# measured peaks where the model's state dominates.
source "$(dirname "$0")/lib/common.sh"
configs=$(cd "$(dirname "$0")/../.." && pwd)/configs

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
up=(--config "$configs/demo-upsampler.yaml" --train_data_dir "$tmp/data" --train_data_meta "$tmp/data/metadata.json"
    --output_dir "$tmp/run" --video_sample_size 128 --video_sample_n_frames 9)
est() { "$engine" estimate "$@" 2>"$tmp/est.err" | tail -1; }
# part NAME: its bytes in the JSON on stdin (0 when absent).
part() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(sum(p["bytes"] for p in r["estimate"]["parts"] if p["name"]==sys.argv[1]))' "$1"; }

# 1. The demo upsampler: every part, a total, and whether it fits this machine.
out=$(est "${up[@]}") || fail "estimate upsampler: $(cat "$tmp/est.err")"
python3 - "$out" <<'EOF' || fail "estimate upsampler: $out"
import json, sys
r = json.loads(sys.argv[1])
names = [p["name"] for p in r["estimate"]["parts"]]
for n in ("runtime", "weights", "gradients", "optimizer", "vae weights", "vae activations", "activations", "conv backward", "data"):
    assert n in names, (n, names)
w = {p["name"]: p["bytes"] for p in r["estimate"]["parts"]}
assert w["gradients"] == w["weights"] and w["optimizer"] == 2 * w["weights"], w
assert abs(r["total_bytes"] - sum(w.values())) < 1, r
assert r["fits"] is True and r["machine_bytes"] > r["total_bytes"], r
assert r["job"] == "upsampler" and r["shape"]["latent_high"] == [3, 8, 8], r["shape"]
EOF
grep -q 'fits: the run needs about' "$tmp/est.err" || fail "no human summary: $(cat "$tmp/est.err")"
# The options move the parts they should.
ema=$(est "${up[@]}" --use_ema | part ema); weights=$(est "${up[@]}" | part weights)
[ "$ema" = "$weights" ] || fail "use_ema: ema part $ema, weights $weights"
[ "$(est "${up[@]}" --use_ema=false | part ema)" = 0 ] || fail "an ema part without use_ema"

a=$(est "${up[@]}" --gradient_checkpointing=false | part activations)
c=$(est "${up[@]}" --gradient_checkpointing | part activations)
long=$(est "${up[@]}" --gradient_checkpointing=false --video_sample_n_frames 17 | part activations)
python3 -c "import sys; a,c,l=map(float,sys.argv[1:]); assert c < a < l, (a, c, l)" "$a" "$c" "$long" \
  || fail "activations: plain $a, checkpointed $c, 17 frames $long"

# 2. Experts: both experts' state; ZeRO-2 over 2 ranks halves the moments; LoRA trains adapters only.
ex=(--config "$configs/demo-experts.yaml" --train_data_dir "$tmp/data" --train_data_meta "$tmp/data/metadata.json"
    --eval_data_meta "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/text" --latent_cache_dir "$tmp/lat"
    --output_dir "$tmp/erun" --video_sample_size 64 --video_sample_n_frames 5)
out=$(est "${ex[@]}") || fail "estimate experts: $(cat "$tmp/est.err")"
python3 - "$out" <<'EOF' || fail "estimate experts: $out"
import json, sys
r = json.loads(sys.argv[1])
w = {p["name"]: p["bytes"] for p in r["estimate"]["parts"]}
for e in ("high", "low"):
    for n in ("weights", "gradients", "optimizer"):
        assert w[f"{e}: {n}"] > 0, (e, n, w)
assert r["shape"]["tokens"] == 2 * 2 * 2, r["shape"]
EOF
one=$(est "${ex[@]}" --zero_stage 2 | part "high: optimizer")
two=$(est "${ex[@]}" --zero_stage 2 --nproc 2 | part "high: optimizer")
python3 -c "import sys; a,b=map(float,sys.argv[1:]); assert abs(a - 2*b) < 1, (a, b)" "$one" "$two" || fail "zero_stage 2: $one vs $two"
lora=$(est "${ex[@]}" --lora --lora_rank 4)
python3 - "$lora" <<'EOF' || fail "estimate lora: $lora"
import json, sys
w = {p["name"]: p["bytes"] for p in json.loads(sys.argv[1])["estimate"]["parts"]}
assert w["high: adapters"] > 0 and w["high: gradients"] == w["high: adapters"], w
EOF

# A GPU's memory (--device cuda, from any build): bf16 activations with mixed precision, and with
# low_vram the idle expert's state in host memory instead of on the device.
gpu=$(est "${ex[@]}" --device cuda --device_memory 80 --mixed_precision bf16 --low_vram) || fail "estimate --device cuda: $(cat "$tmp/est.err")"
fp32=$(est "${ex[@]}" --device cuda --device_memory 80 --low_vram=false --mixed_precision no)
python3 - "$gpu" "$fp32" <<'EOF' || fail "estimate --device cuda: $gpu"
import json, sys
g, f = json.loads(sys.argv[1]), json.loads(sys.argv[2])
gw = {p["name"]: p["bytes"] for p in g["estimate"]["parts"]}
fw = {p["name"]: p["bytes"] for p in f["estimate"]["parts"]}
hw = {p["name"]: p["bytes"] for p in g["host"]["parts"]}
assert g["device"] == "cuda" and g["machine_bytes"] == 80 * 2**30 and g["fits"] is True, g
assert "low: weights" not in gw and hw["low: weights"] == fw["low: weights"], (gw, hw)
assert abs(gw["activations"] * 2 - fw["activations"]) < 1, (gw["activations"], fw["activations"])
assert "host" not in f and "low: weights" in fw, f
assert "batch ahead" not in gw and "batch ahead" not in fw, (gw, fw)  # overlap_vae_encode is off by default
EOF
[ "$(est "${ex[@]}" --device cuda --device_memory 80 --low_vram --overlap_vae_encode | part 'batch ahead')" != 0 ] \
  && [ "$(est "${ex[@]}" --overlap_vae_encode | part 'batch ahead')" != 0 ] && [ "$(est "${ex[@]}" | part 'batch ahead')" = 0 ] \
  || fail "estimate experts: the batch ahead does not follow overlap_vae_encode"
"$engine" estimate "${ex[@]}" --device cuda --time_steps 2 >/dev/null 2>"$tmp/e0" && fail "--time_steps with --device cuda accepted"

# The released T2V-A14B (model folders holding only their config.json: the estimate reads no
# weights) with the README's 24 GB recipe: LoRA on an fp8 base, the idle expert, the swapped
# blocks and the blocks' inputs in host memory, 81 frames at the 640 bucket. It fits 24 GiB;
# without swap the estimate names the smallest blocks_to_swap that fits; without fp8 it swaps
# more; without the offload it turns it on; at a 960 bucket it adds the part-wise recompute and
# fewer frames; an 80 GB card needs neither swap nor offload.
for e in high low; do
  mkdir -p "$tmp/A14B/${e}_noise_model"
  cat >"$tmp/A14B/${e}_noise_model/config.json" <<'JSON'
{"model_type": "t2v", "patch_size": [1, 2, 2], "text_len": 512, "in_dim": 16, "dim": 5120, "ffn_dim": 13824,
 "freq_dim": 256, "text_dim": 4096, "out_dim": 16, "num_heads": 40, "num_layers": 40, "window_size": [-1, -1],
 "qk_norm": true, "cross_attn_norm": true, "eps": 1e-06}
JSON
done
mkdir -p "$tmp/lat"
echo '[{"file_path": "c.mp4", "text": "a fox in snow", "type": "video", "latent_path": "latents/row0.safetensors"}]' \
  >"$tmp/lat/metadata.json"
a14b=(--config "$configs/a14b-t2v-lora-24gb.yaml" --pretrained_model_name_or_path "$tmp/A14B"
      --train_data_meta "$tmp/lat/metadata.json" --text_embeddings_dir "$tmp/a14b_text" --demo_data auto --device cuda)
fit=$(est "${a14b[@]}" --device_memory 24GiB) || fail "A14B estimate: $(cat "$tmp/est.err")"
grep -q '^fits: the run needs about' "$tmp/est.err" || fail "the recipe does not fit 24 GiB: $(cat "$tmp/est.err")"
noswap=$(est "${a14b[@]}" --device_memory 24GiB --blocks_to_swap 0) || fail "A14B without swap: $(cat "$tmp/est.err")"
grep -q '^fits with blocks_to_swap [0-9]*, gradient_checkpointing true: device' "$tmp/est.err" \
  || fail "no fitting blocks_to_swap named: $(cat "$tmp/est.err")"
bf16=$(est "${a14b[@]}" --device_memory 24GiB --blocks_to_swap 0 --fp8 none)
fp8=$(est "${a14b[@]}" --device_memory 24GiB --blocks_to_swap 0)
plain=(--gradient_checkpointing_offload false)
big=$(est "${a14b[@]}" --device_memory 24GiB "${plain[@]}")
huge=$(est "${a14b[@]}" --device_memory 24GiB --video_sample_size 960)
h80=$(est "${a14b[@]}" --device_memory 80GB --blocks_to_swap 0 "${plain[@]}")
python3 - "$fit" "$noswap" "$bf16" "$big" "$h80" "$fp8" "$huge" <<'EOF' || fail "A14B estimates"
import json, sys
fit, noswap, bf16, big, h80, fp8, huge = (json.loads(a) for a in sys.argv[1:])
d = {p["name"]: p["bytes"] for p in fit["estimate"]["parts"]}
h = {p["name"]: p["bytes"] for p in fit["host"]["parts"]}
assert fit["fits"] and fit["machine_bytes"] == 24 * 2**30 and "to_fit" not in fit, fit
assert d["high: swap buffers"] > 0 and h["high: weights"] > d["high: weights"] and h["low: weights"] > 0, (d, h)
# The inputs of 40 blocks (33 600 tokens × 5120 in bf16) wait in host memory.
assert h["activations"] == 40 * 33600 * 5120 * 2, h
last = big["to_fit"][-1]
assert not big["fits"] and last["fits"] and last["changes"]["gradient_checkpointing_offload"], big["to_fit"]
assert "gradient_checkpointing_parts" not in last["changes"] and "video_sample_n_frames" not in last["changes"], last
assert last["device_bytes"] < big["to_fit"][0]["device_bytes"] and last["host_bytes"] > big["to_fit"][0]["host_bytes"]
# Parts take less device memory than whole blocks at the same swap (the way before fewer frames).
parts = [w for w in huge["to_fit"] if w["changes"].get("gradient_checkpointing_parts")]
assert parts and parts[0]["device_bytes"] < huge["to_fit"][0]["device_bytes"], huge["to_fit"]
ways = noswap["to_fit"]
assert not noswap["fits"] and ways[-1]["fits"] and 0 < ways[-1]["changes"]["blocks_to_swap"] <= 40, ways
assert ways[-1]["device_bytes"] <= 24 * 2**30 < noswap["total_bytes"], ways
w, w8 = bf16["to_fit"][-1], fp8["to_fit"][-1]
assert w["fits"] and w8["fits"] and w["changes"]["blocks_to_swap"] > w8["changes"]["blocks_to_swap"], (w, w8)
assert huge["to_fit"][-1]["fits"] and huge["to_fit"][-1]["changes"]["video_sample_n_frames"] < 81, huge["to_fit"]
assert h80["fits"] and h80["machine_bytes"] == 80e9 and "to_fit" not in h80, h80
EOF
"$engine" estimate "${a14b[@]}" --device_memory 24XB >/dev/null 2>"$tmp/e3" && fail "--device_memory 24XB accepted"
grep -q "device_memory: a size from 1 to 65536 GiB" "$tmp/e3" || fail "device_memory message: $(cat "$tmp/e3")"

# 3. Two real steps: their time and the measured peak. A run this small is mostly the worker's own
#    runtime, of which the estimate sees only what its process has (about 30-50 MB less), hence
#    the wider bound here; the 15 % holds where the models' state dominates (5.).
# The timed steps' scratch folder is new and private (mkdtemp): a link planted at the name it once
# had ($TMPDIR/wanstudio-estimate-<pid>; exec keeps the pid) does not turn another run's folder into
# the scratch run, and nothing is left in $TMPDIR afterwards.
mkdir -p "$tmp/scratch" "$tmp/victim/checkpoint-2"
echo keep > "$tmp/victim/checkpoint-2/weights"
TMPDIR="$tmp/scratch" bash -c 'ln -s "$1" "$TMPDIR/wanstudio-estimate-$$"; exec "$2" estimate "${@:3}" --time_steps 1' \
  _ "$tmp/victim" "$engine" "${up[@]}" >/dev/null 2>"$tmp/planted.err" || fail "estimate beside a planted link: $(cat "$tmp/planted.err")"
[ "$(cat "$tmp/victim/checkpoint-2/weights")" = keep ] && [ "$(ls "$tmp/victim")" = checkpoint-2 ] \
  || fail "the planted link's folder was touched"
[ "$(ls -A "$tmp/scratch" | wc -l)" -eq 1 ] && [ -L "$(echo "$tmp/scratch"/wanstudio-estimate-*)" ] \
  || fail "scratch left behind, or the planted link gone: $(ls -A "$tmp/scratch")"
out=$(est "${up[@]}" --time_steps 2) || fail "estimate --time_steps: $(cat "$tmp/est.err")"
python3 - "$out" <<'EOF' || fail "timed estimate: $out"
import json, sys
r = json.loads(sys.argv[1])
t = r["timed"]
assert t["steps"] == 2 and len(t["step_seconds"]) == 2 and t["seconds_per_step"] > 0, t
assert t["measured_peak_bytes"] > 0 and abs(t["estimate_error"]) <= 0.3, t
EOF
[ -e "$tmp/run" ] && fail "the estimate wrote into the run's output_dir"
ls -d /tmp/wanstudio-estimate-* 2>/dev/null | grep -q . && fail "the timed steps left their scratch folder"

# 4. Bad input: one line, exit 1.
"$engine" estimate >/dev/null 2>"$tmp/e1" && fail "no --config accepted"
grep -q 'error: estimate needs --config' "$tmp/e1" || fail "no usage error: $(cat "$tmp/e1")"
printf 'job: vae\n' >"$tmp/vae.yaml"
"$engine" estimate --config "$tmp/vae.yaml" >/dev/null 2>"$tmp/e2" && fail "job vae accepted"
grep -q "not 'vae'" "$tmp/e2" || fail "job vae: $(cat "$tmp/e2")"
out=$("$engine" estimate "${up[@]}" --config_path "$tmp/none.yaml" 2>/dev/null) && fail "a missing model config accepted"
grep -q 'config_path' <<<"$out" || fail "no error naming config_path: $out"

# 5. The benches state the same estimate beside their measured peak: within 15 % where the
#    model's state is most of the memory.
"$engine" bench upsampler-train --mid_channels 256 --blocks 2 --latent 2,8,8 --reps 1 --warmup 0 --threads 1 \
  >"$tmp/bu.out" 2>/dev/null || fail "bench upsampler-train"
printf 'dim: 512\nffn_dim: 1536\nnum_heads: 8\nnum_layers: 4\nin_dim: 48\nout_dim: 48\ntext_dim: 64\ntext_len: 16\nfreq_dim: 256\n' >"$tmp/mid.yaml"
"$engine" bench dit-train --config "$tmp/mid.yaml" --tokens 256 --steps 1 --warmup 0 --threads 1 \
  >"$tmp/bd.out" 2>"$tmp/bd.err" || fail "bench dit-train: $(tail -3 "$tmp/bd.err")"
"$engine" bench dit-train --config "$tmp/mid.yaml" --tokens 256 --steps 1 --warmup 0 --threads 1 --blocks_to_swap 2 \
  >"$tmp/bs.out" 2>"$tmp/bs.err" || fail "bench dit-train --blocks_to_swap: $(tail -3 "$tmp/bs.err")"
tail -1 "$tmp/bs.out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["blocks_to_swap"] == 2 and r["gradient_checkpointing"] is True and r["swap_copies_per_step"] == 3, r
' || fail "bench dit-train swap fields: $(tail -1 "$tmp/bs.out" | head -c 600)"
"$engine" bench dit-train --config "$tmp/mid.yaml" --tokens 256 --steps 1 --warmup 0 --threads 1 \
  --gradient_checkpointing_parts --gradient_checkpointing_offload >"$tmp/bp.out" 2>"$tmp/bp.err" \
  || fail "bench dit-train --gradient_checkpointing_parts: $(tail -3 "$tmp/bp.err")"
tail -1 "$tmp/bp.out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["gradient_checkpointing"] and r["gradient_checkpointing_parts"] and r["gradient_checkpointing_offload"], r
' || fail "bench dit-train checkpointing fields: $(tail -1 "$tmp/bp.out" | head -c 600)"
for f in bu bd bs bp; do
  tail -1 "$tmp/$f.out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["estimate_mb"] > 0 and abs(r["estimate_error"]) <= 0.15, (r["bench"], r["estimate_mb"], r["peak_rss_mb"], r["estimate_error"])
' || fail "bench estimate: $(tail -1 "$tmp/$f.out" | head -c 600)"
done
echo ok
