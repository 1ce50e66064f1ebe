# SPDX-License-Identifier: Apache-2.0
# Sourced by the CLI tests (tests/cli/*.sh, which get ENGINE and DATA as $1 $2): a scratch folder
# removed at exit with every background job, one-thread OpenMP, `fail`, and the tiny experts.
set -u
engine=$1 data=$2
fail() { echo "FAIL: $*"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/wait.sh"
tmp=$(mktemp -d); trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
export OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1

# A tiny 48-channel WanModel config (both experts of the tests) at $1; $2 text_dim (16), $3 text_len (8).
write_tiny_dit() {
  cat > "$1" <<YAML
in_dim: 48
out_dim: 48
dim: 32
ffn_dim: 64
num_heads: 2
num_layers: 1
text_dim: ${2:-16}
text_len: ${3:-8}
YAML
}

# A tiny latent upsampler model YAML (the upsampler tests' model) at $1.
write_tiny_upsampler() {
  cat > "$1" <<YAML
latent_upsampler_kwargs:
  mid_channels: 32
  num_blocks_per_stage: 1
YAML
}

# Whether two .safetensors files hold the same tensors bit for bit (names, dtypes, shapes, bytes),
# whatever their metadata says.
same_tensors() {
  python3 - "$1" "$2" <<'PY'
import json, struct, sys
def tensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        data = f.read()
    head.pop("__metadata__", None)
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]]) for k, v in head.items()}
sys.exit(0 if tensors(sys.argv[1]) == tensors(sys.argv[2]) else 1)
PY
}

# Every step event splits its time: data_wait_s, vae_s and model_s are non-negative parts of step_s,
# and the VAE and the model take some of it.
check_step_times() {
  python3 - "$1" <<'PY' || fail "step time split in $1"
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1]) if '"type":"step"' in l]
assert steps, "no step events"
for e in steps:
    parts = [e[k] for k in ("data_wait_s", "vae_s", "model_s")]
    assert min(parts) >= 0 and e["step_s"] > 0, e
    assert sum(parts) <= e["step_s"] * 1.01 + 1e-3, (parts, e["step_s"])
    assert e["vae_s"] > 0 and e["model_s"] > 0, e
PY
}

# The demo dataset in $tmp/data for the caption tests: rows 1 and 3 without a caption, row 2's a
# person's; a copy in $tmp/original.json. Sets meta.
caption_demo_data() {
  "$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
  meta=$tmp/data/metadata.json
  python3 - "$meta" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
rows[1]["text"] = ""
del rows[3]["text"]
rows[2]["text"] = "A person typed this."
json.dump(rows, open(sys.argv[1], "w"), indent=2)
PY
  cp "$meta" "$tmp/original.json"
}
