#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every `bench` kind runs on a tiny shape and ends with its JSON report: the kind's name under
# "bench", the median/min/all timings of its unit and the peak RSS. (Speed is not asserted: the
# numbers are for the closing notes, measured on a quiet machine.)
source "$(dirname "$0")/lib/common.sh"

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_dit "$tmp/dit.yaml"
declare -A args=(
  [dit-train]="--config $tmp/dit.yaml --tokens 16 --steps 1 --warmup 0 --threads 1"
  [loader]="--meta $tmp/data/metadata.json --size 64 --frames 5 --batches 2 --warmup 0 --workers 1 --threads 1"
  [upsampler-forward]="--mid_channels 32 --blocks 1 --latent 2,4,4 --reps 1 --warmup 0 --threads 1"
  [upsampler-train]="--mid_channels 32 --blocks 1 --latent 2,4,4 --reps 1 --warmup 0 --threads 1"
  [vae-encode]="--dim 4 --dec_dim 6 --frames 5 --size 32,32 --reps 1 --warmup 0 --threads 1"
  [vae-decode]="--dim 4 --dec_dim 6 --frames 5 --size 32,32 --reps 1 --warmup 0 --threads 1"
  [t5-encode]="--config $(cd "$(dirname "$0")/../.." && pwd)/configs/tiny/umt5.yaml --tokens 16 --batch 2 --steps 1 --warmup 0 --threads 1"
  [sample-step]="--config $tmp/dit.yaml --tokens 16 --steps 2 --reps 1 --threads 1"
  [train-e2e]="--meta $tmp/data/metadata.json --size 64 --frames 5 --mid_channels 32 --steps 2 --warmup 1 --workers 1 --threads 1"
  [caption]="--model_path $data/qwen_vl --size 56x84 --new_tokens 2 --reps 1 --warmup 0 --threads 1"
)
declare -A unit=([dit-train]=step [loader]=batch [upsampler-forward]=step [upsampler-train]=step
                 [vae-encode]=clip [vae-decode]=clip [t5-encode]=batch [sample-step]=step [train-e2e]=step
                 [caption]=caption)
# The kinds the worker lists must be exactly the ones checked here: a new kind needs a line above.
listed=$("$engine" bench --help | awk '/^kinds:/{k=1; next} k && NF {print $1}' | sort | tr '\n' ' ')
expected=$(printf '%s\n' "${!args[@]}" | sort | tr '\n' ' ')
[ "$listed" = "$expected" ] || fail "bench kinds: worker lists '$listed', this test checks '$expected'"

for kind in "${!args[@]}"; do
  # shellcheck disable=SC2086
  "$engine" bench "$kind" ${args[$kind]} >"$tmp/$kind.out" 2>"$tmp/$kind.err" \
    || fail "bench $kind exited $?: $(tail -3 "$tmp/$kind.err")"
  tail -1 "$tmp/$kind.out" | python3 -c '
import json, math, sys
kind, unit = sys.argv[1], sys.argv[2]
r = json.loads(sys.stdin.read())
assert r.get("bench") == kind, "bench key %r" % (r.get("bench"),)
for k in (f"ms_per_{unit}_median", f"ms_per_{unit}_min", "peak_rss_mb"):
    assert isinstance(r.get(k), (int, float)) and r[k] > 0 and math.isfinite(r[k]), f"{k} = {r.get(k)!r}"
assert isinstance(r.get(f"ms_per_{unit}"), list) and r[f"ms_per_{unit}"], "no per-rep timings"
assert r[f"ms_per_{unit}_min"] <= r[f"ms_per_{unit}_median"]
' "$kind" "${unit[$kind]}" || fail "bench $kind report: $(tail -1 "$tmp/$kind.out")"
done
# train-e2e: the real trainer's steps, split into data wait, VAE and model time (parts of the step).
tail -1 "$tmp/train-e2e.out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
assert r["steps"] == 2 and len(r["ms_per_step"]) == 2, r
assert r["size_hr"] == [48, 48] and r["size_lr"] == [32, 32], (r["size_hr"], r["size_lr"])
assert r["vae_ms_median"] > 0 and r["model_ms_median"] > 0 and r["data_wait_ms_median"] >= 0, r
assert r["vae_ms_median"] + r["model_ms_median"] <= r["ms_per_step_median"] * 1.01, r
assert abs(r["samples_per_s"] - 2000 / sum(r["ms_per_step"])) < 1e-6 * r["samples_per_s"], r
' || fail "bench train-e2e report: $(tail -1 "$tmp/train-e2e.out")"
# dit-train with LoRA trains only the adapters, and the memory per rank follows the options:
# adapters of rank 4 on the tiny width, full fine-tuning with ZeRO-2 over 4 ranks.
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --lora_rank 4 \
  >"$tmp/lora.out" 2>/dev/null || fail "bench dit-train --lora_rank"
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --zero_ranks 4 \
  >"$tmp/zero.out" 2>/dev/null || fail "bench dit-train --zero_ranks"
# With bf16 weights the fp32 masters are sharded too; a LoRA base with fp8 keeps 1-byte weights.
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --zero_ranks 4 \
  --weight_dtype bf16 >"$tmp/zbf.out" 2>/dev/null || fail "bench dit-train --weight_dtype bf16"
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --lora_rank 4 --fp8 \
  >"$tmp/lf8.out" 2>/dev/null || fail "bench dit-train --lora_rank --fp8"
python3 - "$tmp/lora.out" "$tmp/zero.out" "$tmp/dit-train.out" "$tmp/zbf.out" "$tmp/lf8.out" <<'PY' || fail "dit-train memory figures"
import json, sys
last = lambda p: json.loads(open(p).read().strip().splitlines()[-1])
lora, zero, plain, zbf, lf8 = (last(p) for p in sys.argv[1:6])
# dim 32, ffn 64, 1 layer: the block Linears hold 8·(32·32+32) + (32·64+64) + (64·32+32) = 12640
# parameters, 12288 of them weights.
B, Bw = 12640, 12288
g = zbf["memory_at_full_depth"]["full"]
n = zbf["memory_at_full_depth"]["parameters"]
w = 2 * B + 4 * (n - B)
assert g["weight_dtype"] == "bf16" and g["weight_bytes"] == w and g["master_bytes_per_rank"] == 4 * B // 4, g
assert g["bytes_per_rank_between_steps"] == w + (4 * B + 8 * n) // 4, g
assert g["bytes_per_rank_backward_peak"] == 2 * w + (8 * B + 8 * n) // 4, g
# The bench's one step trains through the masters: they count as optimizer state (moments 8 + master 4 per block weight).
assert zbf["optimizer_bytes"] == 8 * n + 4 * B, (zbf["optimizer_bytes"], n, B)
b16, b8 = lora["memory_at_full_depth"]["lora"]["base_bytes"], lf8["memory_at_full_depth"]["lora"]["base_bytes"]
assert b16 - b8 == Bw, (b16, b8)
assert lf8["fp8_bytes"] == Bw, lf8["fp8_bytes"]
# dim 32, ffn 64, 1 layer: rank 4 × (8·(32+32) + 2·(32+64)) = 2816 adapter parameters.
assert lora["trainable_params"] == 2816, lora["trainable_params"]
assert lora["optimizer_bytes"] == 2816 * 8, lora["optimizer_bytes"]
assert plain["trainable_params"] == plain["params"] and plain["optimizer_bytes"] == plain["params"] * 8
m = lora["memory_at_full_depth"]["lora"]
assert m["trainable_parameters"] == 2816 and m["bytes_per_rank"] == m["base_bytes"] + 2816 * 16, m
f = zero["memory_at_full_depth"]["full"]
n = zero["memory_at_full_depth"]["parameters"]
assert f["ranks"] == 4 and f["moment_bytes_per_rank"] == n * 8 // 4 and f["bytes_per_rank_backward_peak"] == n * 4 + n * 4 + n * 2, f
PY
# --breakdown: every part of the step is timed (without the flag there is none), and the
# sample-step bench says whether it kept the text side between steps.
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --breakdown \
  >"$tmp/parts.out" 2>/dev/null || fail "bench dit-train --breakdown"
"$engine" bench sample-step --config "$tmp/dit.yaml" --tokens 16 --steps 2 --reps 1 --threads 1 --recompute_text \
  --glibc_default_allocator \
  >"$tmp/recompute.out" 2>/dev/null || fail "bench sample-step --recompute_text"
python3 - "$tmp/parts.out" "$tmp/dit-train.out" "$tmp/recompute.out" "$tmp/sample-step.out" <<'PY' || fail "dit-train breakdown"
import json, sys
last = lambda p: json.loads(open(p).read().strip().splitlines()[-1])
parts, plain, recompute, cached = (last(p) for p in sys.argv[1:5])
b = parts["breakdown"]
assert set(b["per_block_ms"]) == {"attention", "linears", "norms_modulation", "rope"}, b
assert set(b["whole_model_ms"]) == {"adamw", "clip"}, b
assert all(v > 0 for v in list(b["per_block_ms"].values()) + list(b["whole_model_ms"].values())), b
assert b["step_ms"] == parts["ms_per_step_median"], b
assert plain["breakdown"] is None, plain["breakdown"]
assert recompute["text_cache"] is False and cached["text_cache"] is True, (recompute, cached)
assert recompute["allocator"] == "glibc default" and cached["allocator"] == "freed blocks kept", (recompute, cached)
assert parts["peak_rss_mb"] > 0 and parts["allocator"] == "freed blocks up to 32 MB kept", parts
PY
echo "bench: ${#args[@]} kinds ok"
