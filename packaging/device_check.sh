#!/usr/bin/env bash
# The GPU checks of both trainers, for the lent device machine (CUDA LibTorch inside PyTorch;
# no Qt, FFmpeg, yaml-cpp, spdlog, fmt or nlohmann-json there, and no package registry).
#   here:  packaging/device_check.sh prepare   downloads those libraries' .deb files into .device/
#   there: packaging/device_check.sh run       (carry .device) unpacks them, builds the engine alone
#          (no GUI, no video) against PyTorch's LibTorch and runs the checks; figures go to $OUT.
# The checks: DiT parity on the GPU build, bench dit-train (fp32 / bf16 / bf16+fp8, 1.3B width),
# and train-experts from latent files with bf16, low_vram (expert swapping) and fp8.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dev=$root/.device
case "${1:-}" in
prepare)
  mkdir -p "$dev/debs"
  (cd "$dev/debs" && apt-get download libyaml-cpp-dev libyaml-cpp0.7 libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 \
     nlohmann-json3-dev)
  ls "$dev/debs"
  ;;
run)
  out=${OUT:-$root/out/device}
  mkdir -p "$out" "$dev/prefix"
  for f in "$dev"/debs/*.deb; do dpkg -x "$f" "$dev/prefix"; done
  export LD_LIBRARY_PATH=$dev/prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  torch_prefix=${TORCH_PREFIX:-$(python3 -c "import torch;print(torch.utils.cmake_prefix_path)")}
  build=$root/build-gpu
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWANSTUDIO_GUI=OFF -DWANSTUDIO_VIDEO=OFF \
    -DWANSTUDIO_GLOO=OFF -DCMAKE_PREFIX_PATH="$torch_prefix;$dev/prefix/usr" 2>&1 | tee "$out/configure.log" | tail -3
  cmake --build "$build" -j "$(nproc)" --target wanstudio-engine 2>&1 | tee "$out/build.log" | tail -3
  E=$build/engine/wanstudio-engine
  nvidia-smi --query-gpu=name,memory.total --format=csv | tee "$out/gpu.txt"
  "$E" parity dit "$root/tests/data/dit" 2>&1 | tail -2 | tee "$out/parity.txt"
  for f in "" "--bf16" "--bf16 --fp8"; do
    echo "1.3B width, 4 layers, 4096 tokens $f: $("$E" bench dit-train --config "$root/configs/wan2.2/dit_t2v_1.3b.yaml" \
      --layers 4 --tokens 4096 --steps 5 --text_tokens 512 --gradient_checkpointing $f 2>/dev/null | tail -1)"
  done | tee "$out/bench.txt"
  # Latent files for 16-channel experts (the official A14B latent space), written with torch.
  data=$root/out/device-data
  python3 - "$data" <<'PY'
import json, os, sys, torch
d = sys.argv[1]; os.makedirs(d, exist_ok=True)
from torch import tensor
def save(path, tensors):  # safetensors by hand: no package needed
    hdr, blobs, off = {}, [], 0
    for k, t in tensors.items():
        b = bytes(t.contiguous().untyped_storage()); hdr[k] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        off += len(b); blobs.append(b)
    h = json.dumps(hdr).encode(); h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f: f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))
g = torch.Generator().manual_seed(0); rows = []
for i in range(8):
    save(f"{d}/lat{i}.safetensors", {"latents": torch.randn(16, 5, 30, 52, generator=g)})
    save(f"{d}/txt{i}.safetensors", {"context": torch.randn(40, 4096, generator=g)})
    rows.append({"file_path": f"v{i}.mp4", "text": f"clip {i}", "latent_path": f"lat{i}.safetensors", "text_embedding_path": f"txt{i}.safetensors"})
json.dump(rows, open(f"{d}/metadata.json", "w"))
PY
  "$E" train-experts --transformer_config "$root/configs/wan2.2/dit_t2v_1.3b.yaml" --train_data_meta "$data/metadata.json" \
    --text_embeddings_dir "$data" --max_train_steps 12 --boundary_ratio 0.5 --mixed_precision bf16 --low_vram=true \
    --fp8 e4m3 --learning_rate 1e-5 --lr_warmup_steps 0 --checkpointing_steps 6 --eval_data_meta "$data/metadata.json" \
    --eval_steps 6 --output_dir "$root/out/device-run" > "$out/experts_events.jsonl" 2> "$out/experts.log" || true
  grep -E '"type":"(finished|eval|error)"' "$out/experts_events.jsonl" | cut -c1-400
  grep '"type":"step"' "$out/experts_events.jsonl" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l); print(e["step"], e["expert"], e["expert_step"], round(e["loss"], 4), e["samples_per_s"])'
  ;;
*)
  echo "usage: packaging/device_check.sh prepare|run" >&2
  exit 2
  ;;
esac
