#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every GPU figure in one run and one table, for the lent device machine (CUDA LibTorch inside
# PyTorch; no Qt, FFmpeg, yaml-cpp, spdlog, fmt or nlohmann-json there, and no package registry).
#   here:  packaging/device_check.sh prepare   downloads those libraries' .deb files into .device/
#   there: packaging/device_check.sh run       (carry .device) unpacks them, builds the engine alone
#          (no GUI, no video) against PyTorch's LibTorch, runs the checks at the released sizes in
#          bf16 and prints the table (also $OUT/table.md, with each check's log beside it)
#   here:  packaging/device_check.sh cpu       the same checks with this machine's build (build/) at
#          small sizes in fp32: the script runs end to end where no GPU is lent
# Rows: parity of every model kind against the fixtures; the released Wan2.2 and Wan2.1 VAEs'
# encode and decode (frames/s, peak memory, the decode's peak at two clip lengths); the upsampler's
# training step at the released width; dit-train MFU at the 1.3B, 5B and A14B widths with and
# without gradient checkpointing, and the A14B LoRA step with block swap and offloaded inputs; a
# sampling step; train-experts from latent files (full fine-tuning
# with low_vram, then LoRA on that base with fp8 and low_vram); on the CPU also train-e2e.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dev=$root/.device
mode=${1:-}
case "$mode" in
prepare)
  mkdir -p "$dev/debs"
  (cd "$dev/debs" && apt-get download libyaml-cpp-dev libyaml-cpp0.7 libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 \
     nlohmann-json3-dev libsentencepiece-dev libsentencepiece0 libprotobuf-lite32)
  ls "$dev/debs"
  exit 0
  ;;
run)
  out=${OUT:-$root/out/device}
  mkdir -p "$out" "$dev/prefix"
  for f in "$dev"/debs/*.deb; do dpkg -x "$f" "$dev/prefix"; done
  export LD_LIBRARY_PATH=$dev/prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  # The machine's own PyTorch (no registry there), built by the same recipe as build.sh --gpu here.
  torch_root=$(python3 -c "import os, torch; print(os.path.dirname(torch.__file__))")
  build=$root/build-gpu
  # -k 0: a failed build lists every broken file at once (a lent GPU's minutes are few).
  if ! TORCH_PREFIX="$torch_root;$torch_root/share/cmake;$dev/prefix/usr" WANSTUDIO_NO_DEPS=1 WANSTUDIO_CCACHE=0 \
      WANSTUDIO_BUILD_DIR=$build WANSTUDIO_BUILD_ARGS="-k 0" "$root/packaging/build.sh" --gpu -DWANSTUDIO_GUI=OFF -DWANSTUDIO_VIDEO=OFF \
      -DWANSTUDIO_GLOO=OFF -DWANSTUDIO_TESTS=OFF >"$out/build.log" 2>&1; then
    grep -E 'error|FAILED|CMake Error' "$out/build.log" | head -60
    exit 1
  fi
  grep 'Wan Studio:' "$out/build.log" || true
  E=$build/engine/wanstudio-engine
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
  echo "build: $((SECONDS)) s" | tee -a "$out/gpu.txt"
  gpu=1
  ;;
cpu)
  out=${OUT:-$root/out/device-cpu}
  mkdir -p "$out"
  E=${ENGINE:-$root/build/engine/wanstudio-engine}
  [ -x "$E" ] || { echo "no engine at $E: run packaging/build.sh first" >&2; exit 1; }
  echo "CPU fallback: $(nproc) cores, fp32, small sizes" | tee "$out/gpu.txt"
  gpu=0
  ;;
*)
  echo "usage: packaging/device_check.sh prepare|run|cpu" >&2
  exit 2
  ;;
esac

data=$root/tests/data
cfg=$root/configs/wan2.2
# At most 8 files come back from a lent machine: $res gets the table (rewritten after every row, so
# a run cut short still returns what it measured) and one archive of every check's files, which
# live in a private scratch folder.
res=$out
out=$(mktemp -d)
rows=$out/rows.tsv
: >"$rows"
started=$SECONDS
limit=${CHECK_TIMEOUT:-150}  # seconds any one check may take, so one hang cannot eat the lease
row() {
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$rows"
  echo "[$((SECONDS - started)) s] $1: $2" >&2
  {
    echo "| check | result | figures |"
    echo "|---|---|---|"
    while IFS=$'\t' read -r a b c; do echo "| $a | $b | $c |"; done <"$rows"
  } >"$res/table.md"
  tar czf "$res/logs.tar.gz" -C "$out" --exclude='run-*' --exclude=latents --exclude=demo-data . 2>/dev/null || true
}
# A bench's last line (JSON) into $out/<name>.json; its log beside it. The GPU's peak memory comes
# from nvidia-smi, polled while the bench runs (the engine reports the host's peak RSS itself).
bench() {
  local name=$1
  shift
  local poll=
  if [ "$gpu" = 1 ]; then
    (while sleep 0.2; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; done) >"$out/$name.mem" &
    poll=$!
  fi
  if timeout "$limit" "$E" bench "$@" >"$out/$name.out" 2>"$out/$name.log"; then tail -1 "$out/$name.out" >"$out/$name.json"; else echo '{}' >"$out/$name.json"; fi
  if [ -n "$poll" ]; then kill "$poll" 2>/dev/null || true; fi
}
# "peak RSS N MB" and, on the GPU, the GPU's peak.
mem() {
  local m="peak RSS $(field "$1" peak_rss_mb) MB"
  [ "$gpu" = 1 ] && m+=", GPU $([ -s "$out/$1.mem" ] && sort -n "$out/$1.mem" | tail -1 || echo "-") MiB"
  echo "$m"
}
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2].split("."): v=v.get(k) if isinstance(v, dict) else None
print("-" if v is None else (round(v, 1) if isinstance(v, float) else v))' "$out/$1.json" "$2"; }

# 1. Parity against the fixtures (fp32; every case).
for k in vae vae21 upsampler dit t5 sampler; do
  if timeout "$limit" "$E" parity "$k" "$data/$k" >"$out/parity_$k.log" 2>&1; then s=PASS; else s=FAIL; fi
  row "parity $k" "$s" "$(grep -c '^PASS' "$out/parity_$k.log" || true) cases pass, $(grep -c '^FAIL' "$out/parity_$k.log" || true) fail"
done

# 2. The released VAEs: encode and decode; the decode's peak at two clip lengths (it decodes chunk
# by chunk, so the peak should not grow with the frames).
if [ "$gpu" = 1 ]; then size=480,832 f1=81 f2=21 prec=--bf16 reps=2; else size=64,64 f1=9 f2=5 prec= reps=1; fi
for t in wan2.2 wan2.1; do
  bench "vae_encode_$t" vae-encode --vae-type "$t" --frames "$f1" --size "$size" --reps "$reps" --warmup 1 $prec
  bench "vae_decode_$t" vae-decode --vae-type "$t" --frames "$f1" --size "$size" --reps "$reps" --warmup 1 $prec
  bench "vae_decode_short_$t" vae-decode --vae-type "$t" --frames "$f2" --size "$size" --reps 1 --warmup 0 $prec
  for k in encode decode; do
    ms=$(field "vae_${k}_$t" ms_per_clip_median)
    fps=$(python3 -c "print('-' if '$ms' == '-' else round($f1 * 1000 / float('$ms'), 2))")
    extra=
    [ "$k" = decode ] && extra=", ${f2} frames: $(mem "vae_decode_short_$t")"
    row "vae-$k $t ${f1}x${size/,/x}" "$ms ms" "$fps frames/s, $(mem "vae_${k}_$t")$extra"
  done
done
# The same Wan2.2 decode with the convs in NCDHW order: what channels-last gains (GPU only; the
# CPU path runs oneDNN's own layout either way).
if [ "$gpu" = 1 ]; then
  bench vae_decode_ncdhw vae-decode --vae-type wan2.2 --frames "$f1" --size "$size" --reps "$reps" --warmup 1 $prec \
    --no_channels_last
  row "vae-decode wan2.2 ${f1}x${size/,/x}, NCDHW convs" "$(field vae_decode_ncdhw ms_per_clip_median) ms" \
    "against $(field vae_decode_wan2.2 ms_per_clip_median) ms channels-last, $(mem vae_decode_ncdhw)"
fi

# 3. The upsampler's training step at the released width (mid 512, 4 blocks).
if [ "$gpu" = 1 ]; then lat=21,20,34; else lat=2,8,8; fi
bench upsampler_train upsampler-train --mid_channels 512 --blocks 4 --latent "$lat" --reps 3 --warmup 1 $prec
row "upsampler-train 512x4, latent $lat" "$(field upsampler_train ms_per_step_median) ms" \
  "$(mem upsampler_train)"

# 4. dit-train at the released widths: a few blocks at 32k tokens in bf16 (CPU: one block, 256
# tokens, fp32), with and without gradient checkpointing. MFU = model FLOPs (3× the forward's
# matmuls and attention, recomputation not counted) / time / the GPU's dense bf16 peak.
if [ "$gpu" = 1 ]; then layers=2 tokens=32768 text=512 steps=3 dprec=--bf16; else layers=1 tokens=256 text=64 steps=1 dprec=; fi
peak=${PEAK_TFLOPS:-$([ "$gpu" = 1 ] && echo 989 || echo 0)}  # H200 SXM dense bf16
for w in 1.3b:dit_t2v_1.3b.yaml 5b:dit_ti2v_5b.yaml a14b:dit_t2v_a14b_high.yaml; do
  name=${w%%:*} file=$cfg/${w#*:}
  for gc in "" --gradient_checkpointing; do
    b=dit_${name}${gc:+_gc}
    bench "$b" dit-train --config "$file" --layers "$layers" --tokens "$tokens" --text_tokens "$text" --steps "$steps" \
      --warmup 1 $dprec $gc
    mfu=$(python3 - "$out/$b.json" "$peak" "$tokens" "$text" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); peak, T, X = float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if "dim" not in r: print("- (failed)"); sys.exit()
D, F, L, ms = r["dim"], r["ffn_dim"], r["layers"], r["ms_per_step_median"]
linear = 2 * T * (4 * D * D) + 2 * T * 2 * D * D + 2 * X * 2 * D * D + 2 * T * 2 * D * F
attn = 4 * T * T * D + 4 * T * X * D
flops = 3 * L * (linear + attn)
tf = flops / (ms / 1000) / 1e12
rate = f"{tf:.1f} TFLOP/s" if tf >= 1 else f"{tf * 1000:.1f} GFLOP/s"
print(rate + (f", MFU {100 * tf / peak:.1f} %" if peak > 0 else ""))
PY
)
    row "dit-train $name ${layers}L ${tokens} tok${gc:+ +ckpt}" "$(field "$b" ms_per_step_median) ms" \
      "$mfu, attention $(field "$b" attention), $(mem "$b")"
  done
done
# The 1.3B width again with the engine's own chunked attention instead of LibTorch's fused one.
if [ "$gpu" = 1 ]; then
  export WANSTUDIO_SDPA=0
  bench dit_1.3b_chunked dit-train --config "$cfg/dit_t2v_1.3b.yaml" --layers "$layers" --tokens "$tokens" \
    --text_tokens "$text" --steps "$steps" --warmup 1 $dprec
  unset WANSTUDIO_SDPA
  row "dit-train 1.3b ${layers}L ${tokens} tok, chunked attention" "$(field dit_1.3b_chunked ms_per_step_median) ms" \
    "against $(field dit_1.3b ms_per_step_median) ms with $(field dit_1.3b attention), $(mem dit_1.3b_chunked)"
fi

# The A14B width's LoRA step on an fp8 base (Float8_e4m3fn copies; the forward as one scaled fp8
# matmul where the GPU has it) against the same step on the bf16 base.
if [ "$gpu" = 1 ]; then
  for f in "" --fp8; do
    b=dit_a14b_lora${f:+_fp8}
    bench "$b" dit-train --config "$cfg/dit_t2v_a14b_high.yaml" --layers "$layers" --tokens "$tokens" \
      --text_tokens "$text" --steps "$steps" --warmup 1 --bf16 --lora_rank 32 $f
    row "dit-train a14b LoRA 32 ${layers}L ${tokens} tok${f:+, fp8 base}" "$(field "$b" ms_per_step_median) ms" \
      "fp8 matmul $(field "$b" fp8_matmul), $(mem "$b")"
  done
fi

# The same LoRA step with block swap and the blocks' inputs offloaded (the 24 GB recipe in small),
# then with blocks recomputed a part at a time: the copy wait beside the step, the estimate
# beside the peaks (on the GPU the host and device estimates are apart: host_estimate_mb).
if [ "$gpu" = 1 ]; then sl=4 sw=2; else sl=2 sw=1; fi
for v in "" --gradient_checkpointing_parts; do
  b=dit_a14b_swap${v:+_parts}
  bench "$b" dit-train --config "$cfg/dit_t2v_a14b_high.yaml" --layers "$sl" --tokens "$tokens" --text_tokens "$text" \
    --steps "$steps" --warmup 1 $dprec --lora_rank 32 --blocks_to_swap "$sw" --gradient_checkpointing_offload $v
  row "dit-train a14b LoRA 32 ${sl}L, ${sw} swapped, inputs offloaded${v:+, parts}" \
    "$(field "$b" ms_per_step_median) ms" "copy wait $(field "$b" swap_wait_ms_per_step) ms a step, estimate \
$(field "$b" estimate_mb) MB (host $(field "$b" host_estimate_mb) MB), $(mem "$b")"
done

# 5. One sampling step (two forward passes and the solver) at the 5B width.
bench sample_step sample-step --config "$cfg/dit_ti2v_5b.yaml" --layers "$layers" --tokens "$tokens" --text_tokens "$text" \
  --steps 2 --reps 2
row "sample-step 5b ${layers}L ${tokens} tok" "$(field sample_step ms_per_step_median) ms" \
  "$(mem sample_step)"

# 5b. The Qwen2.5-VL captioner (the parity test's tiny model) on the device: its fp32 greedy ids
# equal the CPU's, and bf16 runs.
on=$([ "$gpu" = 1 ] && echo cuda || echo cpu)
bench caption_cpu caption --model_path "$data/qwen_vl" --device cpu --new_tokens 12 --reps 2
bench caption_dev caption --model_path "$data/qwen_vl" --device "$on" --new_tokens 12 --reps 2
bench caption_bf16 caption --model_path "$data/qwen_vl" --device "$on" --dtype bf16 --new_tokens 12 --reps 2
s=FAIL
[ "$(field caption_dev ids)" != - ] && [ "$(field caption_dev ids)" = "$(field caption_cpu ids)" ] && s=PASS
row "caption, tiny Qwen2.5-VL on $on (fp32 ids = the CPU's)" "$s" \
  "first token $(field caption_dev first_token_ms) ms, $(field caption_dev decode_ms_per_token) ms/token; bf16 first token $(field caption_bf16 first_token_ms) ms, ids $(field caption_bf16 ids | cut -c1-40)"

# 6. train-experts from latent files (16-channel latents, the A14B latent space): full fine-tuning
# with low_vram, then LoRA with fp8 on that base (fp8 needs a frozen pretrained base).
lat=$out/latents
if [ "$gpu" = 1 ]; then model=$cfg/dit_t2v_1.3b.yaml shape="16, 5, 30, 52" ctx=4096; else
  model=$out/tiny16.yaml shape="16, 2, 8, 8" ctx=16
  printf 'in_dim: 16\nout_dim: 16\ndim: 32\nffn_dim: 64\nnum_heads: 2\nnum_layers: 2\ntext_dim: 16\ntext_len: 8\n' >"$model"
fi
python3 - "$lat" "$shape" "$ctx" <<'PY'
import json, os, struct, sys, random
d, shape, ctx = sys.argv[1], [int(v) for v in sys.argv[2].split(",")], int(sys.argv[3])
os.makedirs(d, exist_ok=True)
def save(path, name, shape, rnd):  # safetensors by hand: no package needed
    n = 1
    for s in shape: n *= s
    body = struct.pack(f"<{n}f", *(rnd.gauss(0, 1) for _ in range(n)))
    h = json.dumps({name: {"dtype": "F32", "shape": shape, "data_offsets": [0, len(body)]}}).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f: f.write(len(h).to_bytes(8, "little") + h + body)
rnd, rows = random.Random(0), []
for i in range(4):
    save(f"{d}/lat{i}.safetensors", "latents", shape, rnd)
    save(f"{d}/txt{i}.safetensors", "context", [8, ctx], rnd)
    rows.append({"file_path": f"v{i}.mp4", "text": f"clip {i}", "latent_path": f"lat{i}.safetensors",
                 "text_embedding_path": f"txt{i}.safetensors"})
json.dump(rows, open(f"{d}/metadata.json", "w"))
PY
common=(--train_data_meta "$lat/metadata.json" --text_embeddings_dir "$lat" --boundary_ratio 0.5 --learning_rate 1e-5
        --lr_warmup_steps 0 --low_vram=true --seed 1)
[ "$gpu" = 1 ] && common+=(--mixed_precision bf16)
for run in full lora; do
  if [ "$run" = full ]; then
    args=(--transformer_config "$model" --max_train_steps 6 --checkpointing_steps 6 --output_dir "$out/run-full")
  else
    base=$out/run-full/checkpoint-6
    args=(--high_noise_model_path "$base/high_noise_transformer" --low_noise_model_path "$base/low_noise_transformer"
          --lora --lora_rank 16 --fp8 e4m3 --max_train_steps 6 --checkpointing_steps 6 --output_dir "$out/run-lora")
  fi
  rm -rf "$out/run-$run"
  timeout "$limit" "$E" train-experts "${common[@]}" "${args[@]}" >"$out/experts_$run.jsonl" 2>"$out/experts_$run.log" || true
  summary=$(python3 - "$out/experts_$run.jsonl" <<'PY'
import json, sys, statistics
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
steps = [e for e in ev if e.get("type") == "step"]
fin = [e for e in ev if e.get("type") in ("finished", "error")]
st = next((e for e in ev if e.get("type") == "started"), {})
if not steps:
    print("FAIL", "; ".join(str(e.get("message", e.get("status"))) for e in fin)[:200]); sys.exit()
ms = statistics.median(e["step_s"] for e in steps) * 1000
print("PASS" if fin and fin[-1].get("status") == "completed" else "FAIL",
      f"{len(steps)} steps, median {ms:.0f} ms (model {statistics.median(e['model_s'] for e in steps) * 1000:.0f}), "
      f"loss {steps[0]['loss']:.4f} -> {steps[-1]['loss']:.4f}, fp8 {st.get('fp8_bytes_per_expert', 0)} B/expert")
PY
)
  row "train-experts $run (low_vram$([ "$run" = lora ] && echo ", fp8"))" "${summary%% *}" "${summary#* }"
done

# 7. train-e2e needs video decoding, which the GPU build leaves out.
if [ "$gpu" = 0 ]; then
  "$E" demo-data "$out/demo-data" >/dev/null 2>&1 || true
  bench train_e2e train-e2e --meta "$out/demo-data/metadata.json" --size 128 --frames 9 --steps 3 --warmup 1
  row "train-e2e tiny VAE 16/16, 128 px, 9 frames" "$(field train_e2e ms_per_step_median) ms" \
    "$(field train_e2e samples_per_s) samples/s; data $(field train_e2e data_wait_ms_median), VAE $(field train_e2e vae_ms_median), model $(field train_e2e model_ms_median) ms"
fi
# 8. Data parallel's backend in a group of one (WANSTUDIO_DP_BACKEND makes a group even then): NCCL
# on the GPU, Gloo here. Every collective of a training step runs through it.
be=$([ "$gpu" = 1 ] && echo nccl || echo gloo)
rm -rf "$out/run-dp"
WANSTUDIO_DP_BACKEND=$be WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=${DP_PORT:-29631} \
  timeout "$limit" "$E" train-experts "${common[@]}" --transformer_config "$model" --max_train_steps 3 --checkpointing_steps 3 \
  --output_dir "$out/run-dp" >"$out/dp_$be.jsonl" 2>"$out/dp_$be.log" || true
if grep -q "data parallel: rank 0 of 1 over $be" "$out/dp_$be.log" && grep -q '"status":"completed"' "$out/dp_$be.jsonl"; then
  row "data parallel over $be, 1 rank" PASS "3 steps of train-experts, a checkpoint written"
else
  row "data parallel over $be, 1 rank" FAIL "$(grep -m1 -i 'error' "$out/dp_$be.log" | cut -c1-160)"
fi

cat "$res/table.md"
rm -rf "$out"
