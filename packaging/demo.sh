#!/usr/bin/env bash
# The README's demo command: set up a fresh Debian machine, build, and run the engine on the
# built-in demo data. Results land in out/demo/.
#
# What it runs today (the upsampler trainer is not wired yet; see README "Status"):
#   1. demo-data: the synthetic dataset (procedural moving textures and shapes, several aspect
#      ratios and lengths, two images, captions) -> out/demo/data/
#   2. probe: every row checked against its file (size, frames, fps)
#   3. buckets: the bucket, sizes and frames each row trains at -> out/demo/buckets.json
#   4. parity: the VAE, the latent upsampler and its training loop against the reference cases
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/build.sh"
engine="${WANSTUDIO_BUILD_DIR:-$root/build}/engine/wanstudio-engine"
out="$root/out/demo"
mkdir -p "$out"
cd "$root"

echo "== demo data -> $out/data"
"$engine" demo-data "$out/data"
echo "== probe"
"$engine" probe "$out/data/metadata.json"
echo "== buckets -> $out/buckets.json"
"$engine" buckets --config configs/demo-upsampler.yaml > "$out/buckets.json"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('rows', r['counts']); print('buckets', r['buckets'])" "$out/buckets.json"
echo "== parity"
kinds=$("$engine" parity --help | sed -n '/^kinds:/,/^$/p' | awk 'NF {print $1}' | grep -v '^kinds:')
for kind in $kinds; do
  case $kind in *-train) dir=tests/data/train ;; *) dir=tests/data/$kind ;; esac
  "$engine" parity "$kind" "$dir"
done
echo "== done: results in $out"
