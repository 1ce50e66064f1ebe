#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of the fuzz harnesses (tests/fuzz/corpus/<harness>/): small valid files
of each format and a few known-hostile ones, so the fuzzer starts from real structure and the
normal build replays them. Run again after changing it; the output is deterministic."""
import io, json, os, struct, zipfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "corpus")

def put(harness, name, data):
    d = os.path.join(root, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

# safetensors: valid, metadata, bad offsets, deep nesting, huge shape.
def st(header, payload=b""):
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + payload
put("fuzz_safetensors", "valid", st({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                                      "b": {"dtype": "BF16", "shape": [3], "data_offsets": [16, 22]}}, bytes(range(22))))
put("fuzz_safetensors", "metadata", st({"__metadata__": {"format": "pt", "config": "{\"dim\": 4}"},
                                         "x": {"dtype": "I64", "shape": [], "data_offsets": [0, 8]}}, b"\1" * 8))
put("fuzz_safetensors", "offsets_past_end", st({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1600]}}, b"\0" * 16))
put("fuzz_safetensors", "overlap", st({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
                                        "b": {"dtype": "F16", "shape": [2], "data_offsets": [2, 6]}}, b"\0" * 6))
put("fuzz_safetensors", "huge_shape", st({"a": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 4]}}, b"\0" * 4))
put("fuzz_safetensors", "deep", struct.pack("<Q", 2 * 200 + 8) + b'{"a":' + b"[" * 200 + b"]" * 200 + b"}  ")
put("fuzz_safetensors", "short", b"\x10\0\0")

# .pth: a torch.save zip with a protocol-2 pickle of an OrderedDict of tensors.
def p_str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b
def p_int(v):
    return b"J" + struct.pack("<i", v)
def glob(m, n):
    return b"c" + m.encode() + b"\n" + n.encode() + b"\n"
def tup(items):
    return b"(" + b"".join(items) + b"t"
ordered = glob("collections", "OrderedDict") + b")R"
def tensor(key, numel, size, stride, offset=0, stype="FloatStorage"):
    pid = tup([p_str("storage"), glob("torch", stype), p_str(key), p_str("cpu"), p_int(numel)]) + b"Q"
    return glob("torch._utils", "_rebuild_tensor_v2") + tup([pid, p_int(offset), tup([p_int(s) for s in size]),
                                                            tup([p_int(s) for s in stride]), b"\x89", ordered]) + b"R"
def pth(items, storages):
    pkl = b"\x80\x02" + ordered + b"(" + b"".join(p_str(k) + v for k, v in items) + b"u."
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        for k, v in storages.items():
            z.writestr("archive/data/" + k, v)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()
f32 = struct.pack("<8f", *range(8))
put("fuzz_pth", "valid", pth([("w", tensor("0", 8, [2, 3], [3, 1])), ("wt", tensor("0", 8, [3, 2], [1, 3], 2))], {"0": f32}))
put("fuzz_pth", "zero_stride", pth([("b", tensor("0", 1, [4], [0]))], {"0": struct.pack("<f", 2.5)}))
put("fuzz_pth", "past_storage", pth([("w", tensor("0", 8, [4, 4], [4, 1]))], {"0": f32}))
put("fuzz_pth", "missing_storage", pth([("w", tensor("7", 8, [8], [1]))], {"0": f32}))
put("fuzz_pth", "foreign_global", pth([("w", glob("os", "system") + tup([p_str("true")]) + b"R")], {}))
put("fuzz_pth", "legacy", b"\x80\x02\x8a\x0a")

# metadata.json
rows = [{"file_path": "videos/a.mp4", "text": "a red ball", "type": "video", "width": 384, "height": 216},
        {"file_path": "images/b.png", "text": "a cat", "type": "image"},
        {"file_path": "c.mp4", "text": "x", "latent_path": "lat/c.safetensors", "text_embedding_path": "t/c.safetensors"}]
put("fuzz_metadata", "valid", json.dumps(rows, indent=2))
put("fuzz_metadata", "problems", json.dumps([{"file_path": 3}, {"text": None}, [], {"file_path": "a\u0000b", "width": "w",
                                             "height": 1.5}, {"file_path": "", "type": "audio"}]))
put("fuzz_metadata", "big_number", '[{"file_path": "a.mp4", "width": 1e999, "height": 2}]')
put("fuzz_metadata", "deep", "[" * 100 + "]" * 100)
put("fuzz_metadata", "not_a_list", '{"file_path": "a.mp4"}')

# Run configs.
put("fuzz_yaml_config", "demo", open(os.path.join(here, "..", "..", "configs", "demo-upsampler.yaml")).read())
put("fuzz_yaml_config", "types", "video_sample_size: big\nvalidation_paths: [[1], {a: b}]\nseed: 1e999\n"
                                 "learning_rate: .inf\nenable_bucket: 1\nnoise_shift: None\n")
put("fuzz_yaml_config", "aliases", "a: &a [l, l, l]\nb: &b [*a, *a, *a]\nvalidation_paths: *b\n")
put("fuzz_yaml_config", "two_docs", "seed: 1\n---\nseed: 2\n")
put("fuzz_yaml_config", "dup_keys", "seed: 1\nseed: 2\njob: experts\n")

# tfevents (the harness also uses the bytes as [len][tag][f32][i64] records for its round trip).
def rec(tag, value, step):
    t = tag.encode()
    return bytes([len(t)]) + t + struct.pack("<fq", value, step)
put("fuzz_tfevents", "scalars", rec("train/loss", 0.5, 1) + rec("lr", 1e-4, 1) + rec("", float("nan"), -3))
put("fuzz_tfevents", "garbage", b"\x20\0\0\0\0\0\0\0" + b"\xff" * 40)

# events.jsonl as the worker writes it, with a torn line and junk.
ev = [{"type": "started", "time": 1.0, "job": "experts", "resume_step": 0, "max_train_steps": 4, "world_size": 1, "config": {}},
      {"type": "step", "time": 2.0, "step": 1, "expert": "high", "expert_step": 1, "loss": 0.5, "lr": 0.0, "grad_norm": 1.0,
       "samples_per_s": 2.0, "eta_s": 3.0},
      {"type": "eval", "time": 3.0, "step": 1, "expert": "all", "loss": 0.4, "loss_high": 0.5, "loss_low": 0.3,
       "loss_by_t": {"100": 0.3}},
      {"type": "started", "time": 4.0, "job": "experts", "resume_step": 0, "max_train_steps": 4},
      {"type": "finished", "time": 5.0, "status": "failed", "step": 1, "supervisor": True}]
put("fuzz_events", "run", "\n".join(json.dumps(e) for e in ev) + "\n{\"type\":\"step\",\"ti")
put("fuzz_events", "junk", "not json\n{}\n[]\n{\"type\": 3}\n{\"type\":\"step\",\"step\":\"x\",\"loss\":null}\n")
