#!/usr/bin/env bash
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
)
declare -A unit=([dit-train]=step [loader]=batch [upsampler-forward]=step [upsampler-train]=step
                 [vae-encode]=clip [vae-decode]=clip [t5-encode]=batch [sample-step]=step)
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
# dit-train with LoRA trains only the adapters, and the memory per rank follows the options:
# adapters of rank 4 on the tiny width, full fine-tuning with ZeRO-2 over 4 ranks.
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --lora_rank 4 \
  >"$tmp/lora.out" 2>/dev/null || fail "bench dit-train --lora_rank"
"$engine" bench dit-train --config "$tmp/dit.yaml" --tokens 16 --steps 1 --warmup 0 --threads 1 --zero_ranks 4 \
  >"$tmp/zero.out" 2>/dev/null || fail "bench dit-train --zero_ranks"
python3 - "$tmp/lora.out" "$tmp/zero.out" "$tmp/dit-train.out" <<'PY' || fail "dit-train memory figures"
import json, sys
last = lambda p: json.loads(open(p).read().strip().splitlines()[-1])
lora, zero, plain = last(sys.argv[1]), last(sys.argv[2]), last(sys.argv[3])
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
echo "bench: ${#args[@]} kinds ok"
