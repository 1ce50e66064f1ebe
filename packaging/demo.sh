#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's demo command: set up a fresh Debian machine, build, and train a small latent
# upsampler headless on the built-in demo data:
#   1. buckets: which bucket, sizes and frames each demo row trains at -> out/demo/buckets.json
#      (the demo dataset itself is written on first use: `demo_data: auto` in the config)
#   2. `wanstudio --batch configs/demo-upsampler.yaml`: 500 steps against the demo's tiny Wan2.2
#      VAE, with checkpoints and validation videos (low-res / upsampled / high-res) -> out/demo/run/
#   3. a summary: loss at the start and the end, validation PSNR, where everything is.
# A previous demo run in out/demo/run is replaced.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/build.sh"
build="${WANSTUDIO_BUILD_DIR:-$root/build}"
engine="$build/engine/wanstudio-engine"
app="$build/app/wanstudio"
cd "$root"
export OMP_WAIT_POLICY=PASSIVE  # idle OpenMP threads sleep instead of spinning on a busy machine
out="$root/out/demo"
mkdir -p "$out"

echo "== buckets -> $out/buckets.json"
"$engine" buckets --config configs/demo-upsampler.yaml > "$out/buckets.json"
python3 - "$out/buckets.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["counts"]
print(f"{c.get('rows', 0)} rows in the metadata: {c.get('ok', 0)} train at the full clip length, "
      f"{c.get('short', 0)} are shorter and train at fewer frames, {c.get('dropped', 0)} are dropped "
      "(the training log's 'usable rows' counts the first two)")
print("rows per bucket (type and aspect ratio):", ", ".join(f"{k}: {v}" for k, v in r["buckets"].items()))
PY

echo "== training (configs/demo-upsampler.yaml) -> $out/run"
rm -rf "$out/run"
if [ -x "$app" ]; then
  "$app" --batch configs/demo-upsampler.yaml
else
  "$engine" train-upsampler --config configs/demo-upsampler.yaml > /dev/null
fi

python3 - "$out/run" <<'PY'
import json, os, sys
run = sys.argv[1]
ev = [json.loads(l) for l in open(os.path.join(run, "events.jsonl")) if l.strip().startswith("{")]
steps = [e for e in ev if e["type"] == "step"]
vals = [e for e in ev if e["type"] == "validation"]
fin = [e for e in ev if e["type"] == "finished"]
def mean(xs): return sum(xs) / max(1, len(xs))
print("== summary")
print(f"steps {len(steps)}, status {fin[-1]['status'] if fin else '?'}")
if steps:
    print(f"loss: first 20 steps {mean([s['loss'] for s in steps[:20]]):.4f}, last 20 steps {mean([s['loss'] for s in steps[-20:]]):.4f}")
    print(f"clips/s (last 10 steps): {steps[-1]['samples_per_s']:.2f}")
# Per validation clip: how the upsampled decode moved towards the high-res decode during training,
# then the three figures against the source clip, where the high-res decode is the ceiling.
for i in sorted({v['index'] for v in vals}):
    vs = [v for v in vals if v['index'] == i]
    a, b = vs[0], vs[-1]
    print(f"validation #{i} ({os.path.basename(b.get('source', ''))}):")
    print(f"  vs the high-res decode: upsampled {a['psnr']:.2f} dB at step {a['step']} -> {b['psnr']:.2f} dB at step {b['step']} "
          f"(latent MSE {a['latent_mse']:.3f} -> {b['latent_mse']:.3f}); bilinear baseline {b['psnr_lowres']:.2f} dB")
    if 'psnr_ceiling' in b:
        room = b['psnr_ceiling'] - b['psnr_lowres_source']
        print(f"  vs the source clip:     upsampled {b['psnr_source']:.2f} dB, bilinear {b['psnr_lowres_source']:.2f} dB, "
              f"ceiling {b['psnr_ceiling']:.2f} dB (the high-res decode: the VAE's own loss)")
        print(f"  -> the demo's tiny VAE leaves {room:.2f} dB between bilinear and its ceiling: no upsampler can gain "
              "more here (a VAE that reconstructs better leaves more room)")
    print(f"  videos: {b['upsampled']}")
cks = sorted(d for d in os.listdir(run) if d.startswith("checkpoint-") and d[11:].isdigit())
print("checkpoints:", ", ".join(os.path.join(run, c) for c in cks))
print("samples:    ", os.path.join(run, "sample"))
print("tensorboard: tensorboard --logdir", os.path.join(run, "logs"))
print("studio:      wanstudio --open", run, "(Validation tab: side-by-side player)")
PY
