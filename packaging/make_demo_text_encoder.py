#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the demo's text encoder (run once; the outputs are committed):
  configs/demo/umt5_demo_spiece.model  a SentencePiece unigram model trained with Debian's spm_train on
                                       captions like the demo dataset's (the role of google/umt5-xxl)
  configs/demo/umt5_demo.safetensors   a UMT5 encoder of the released structure at demo size (dim 32 =
                                       the demo experts' text_dim, 4 heads, 2 layers, 32 buckets), seeded
                                       weights at the fixtures' scales
The encoder is untrained: it turns each caption into a fixed, caption-specific [L, 32] context, which is
what the demo experts need to learn caption-conditioned denoising. Deterministic: running it again
writes the same bytes."""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = os.path.join(root, "configs", "demo")

# Captions in the demo generator's vocabulary (engine/data/synthetic.cpp), every word many times.
colors = ["red", "orange", "yellow", "green", "teal", "blue", "purple", "pink", "white", "black"]
grounds = ["navy", "sky blue", "sand", "forest green", "slate grey", "maroon", "cream", "violet"]
shapes = ["circle", "square", "rectangle"]
moves = ["up", "down", "left", "right", "down and to the right", "up and to the left", "down and to the left",
         "up and to the right"]
cams = ["static camera", "the camera panning up", "the camera panning down", "the camera panning left",
        "the camera panning right", "the camera panning down and to the right", "the camera panning up and to the left"]
r = random.Random(7)
lines = []
for _ in range(4000):
    n = r.randint(1, 3)
    parts = ["a %s %s moving %s" % (r.choice(colors), r.choice(shapes), r.choice(moves)) for _ in range(n)]
    subject = parts[0] if n == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    bg = r.choice(["a soft %s to %s gradient", "a cloudy %s and %s noise texture"]) % (r.choice(grounds), r.choice(grounds))
    verb = "bounces" if n == 1 else "bounce"
    lines.append("%s %s around over %s, %s." % (subject[0].upper() + subject[1:], verb, bg, r.choice(cams)))

with tempfile.TemporaryDirectory() as tmp:
    # Relative names: the model records them, and a temporary folder's name would change its bytes.
    open(os.path.join(tmp, "corpus.txt"), "w").write("\n".join(lines) + "\n")
    subprocess.run(["spm_train", "--input=corpus.txt", "--model_prefix=spiece", "--model_type=unigram",
                    "--vocab_size=92", "--character_coverage=1.0", "--pad_id=0", "--eos_id=1", "--unk_id=2",
                    "--bos_id=-1", "--byte_fallback=false", "--normalization_rule_name=nmt_nfkc", "--num_threads=1",
                    "--input_sentence_size=0", "--shuffle_input_sentence=false", "--random_seed=7", "--minloglevel=2"],
                   check=True, cwd=tmp)
    model = open(os.path.join(tmp, "spiece.model"), "rb").read()
open(os.path.join(out, "umt5_demo_spiece.model"), "wb").write(model)

# The encoder: vocab covers the 92 pieces (every piece this corpus allows); the fixtures' weight scales (tests/data/t5/README.md).
cfg = {"vocab": 96, "dim": 32, "dim_attn": 32, "dim_ffn": 64, "num_heads": 4, "num_layers": 2, "num_buckets": 32,
       "shared_pos": False, "max_dist": 128, "eps": 1e-6}
g = random.Random(1001)
d, da, df, h, nb = cfg["dim"], cfg["dim_attn"], cfg["dim_ffn"], cfg["num_heads"], cfg["num_buckets"]
hd = da // h


def normal(shape, std, mean=0.0):
    n = 1
    for s in shape:
        n *= s
    return shape, [mean + std * g.gauss(0.0, 1.0) for _ in range(n)]


tensors = {"token_embedding.weight": normal([cfg["vocab"], d], 1.0)}
for i in range(cfg["num_layers"]):
    b = "blocks.%d." % i
    tensors[b + "norm1.weight"] = normal([d], 0.1, 1.0)
    tensors[b + "attn.q.weight"] = normal([da, d], 2.0 * (d * hd) ** -0.5)
    tensors[b + "attn.k.weight"] = normal([da, d], d ** -0.5)
    tensors[b + "attn.v.weight"] = normal([da, d], d ** -0.5)
    tensors[b + "attn.o.weight"] = normal([d, da], da ** -0.5)
    tensors[b + "pos_embedding.embedding.weight"] = normal([nb, h], 1.0)
    tensors[b + "norm2.weight"] = normal([d], 0.1, 1.0)
    tensors[b + "ffn.gate.0.weight"] = normal([df, d], d ** -0.5)
    tensors[b + "ffn.fc1.weight"] = normal([df, d], d ** -0.5)
    tensors[b + "ffn.fc2.weight"] = normal([d, df], df ** -0.5)
tensors["norm.weight"] = normal([d], 0.1, 1.0)

header, blobs, off = {}, [], 0
for name in sorted(tensors):
    shape, vals = tensors[name]
    blob = struct.pack("<%df" % len(vals), *vals)
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [off, off + len(blob)]}
    blobs.append(blob)
    off += len(blob)
header["__metadata__"] = {"config": json.dumps(cfg, sort_keys=True), "note": "Wan Studio demo text encoder (untrained)"}
h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open(os.path.join(out, "umt5_demo.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
print("wrote", os.path.join(out, "umt5_demo_spiece.model"), "and", os.path.join(out, "umt5_demo.safetensors"))
