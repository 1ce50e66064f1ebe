#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile and careless inputs through the real worker: each one gets a clear one-line error (or
# a refusal) instead of a crash, a hang, a write outside its folder or lost data. Every check
# here failed on the worker before it was fixed (issue 13's reproductions).
source "$(dirname "$0")/../cli/lib/common.sh"
command -v python3 >/dev/null || fail "python3 is needed (packaging/deps.sh installs it)"
# A hang must fail the test, not stall it: every call gets a bound.
run() { timeout 120 "$engine" "$@"; }

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
write_tiny_upsampler "$tmp/model.yaml"
TR=(train-upsampler --config_path "$tmp/model.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
    --train_data_meta "$tmp/data/metadata.json" --train_data_dir "$tmp/data" --video_sample_size 128
    --video_sample_n_frames 5 --dataloader_num_workers 1 --gradient_checkpointing=false --validation_steps 1000)

# --- F3: JSON nested 100k deep (a safetensors header, a metadata.json) is refused, not a segfault.
python3 - "$tmp" <<'PY'
import json, struct, sys
t = sys.argv[1]
deep = "[" * 100000 + "]" * 100000
hdr = ('{"__metadata__": {"x": "y"}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "z": ' + deep + '}}').encode()
open(f"{t}/deep.safetensors", "wb").write(struct.pack("<Q", len(hdr)) + hdr + b"\0" * 4)
open(f"{t}/deep.json", "w").write('[{"file_path": "a.mp4", "text": "x", "extra": ' + deep + '}]')
PY
out=$(run inspect "$tmp/deep.safetensors" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "inspect of a 100k-deep header exited $rc: ${out:0:200}"
grep -q "nested deeper than" <<<"$out" || fail "deep header: ${out:0:200}"
out=$(run probe "$tmp/deep.json" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "probe of a 100k-deep metadata.json exited $rc"
grep -q "deep.json: JSON nested deeper than" <<<"$out" || fail "deep metadata: ${out:0:200}"

# --- F11: a FIFO as weights, metadata or model YAML is refused at once (it used to block forever).
mkfifo "$tmp/fifo.safetensors" "$tmp/fifo.json" "$tmp/fifo.yaml"
out=$(run inspect "$tmp/fifo.safetensors" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "inspect on a FIFO exited $rc (124 = hung)"
grep -q "not a regular file" <<<"$out" || fail "FIFO weights: $out"
out=$(run probe "$tmp/fifo.json" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "probe on a FIFO exited $rc (124 = hung)"
out=$(run "${TR[@]}" --config_path "$tmp/fifo.yaml" --output_dir "$tmp/f11" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "a FIFO as config_path exited $rc (124 = hung)"
cp "$tmp/data/metadata.json" "$tmp/fiforow.json"
sed -i '0,/"file_path": "[^"]*"/s//"file_path": "'"${tmp//\//\\/}"'\/fifo.safetensors"/' "$tmp/fiforow.json"
out=$(run probe "$tmp/fiforow.json" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "probe with a FIFO row exited $rc (124 = hung)"
grep -q "not a regular file" <<<"$out" || fail "FIFO row not reported: ${out:0:300}"

# --- F5: a sharded index naming ../ or absolute shards is refused without reading the target.
mkdir -p "$tmp/idx" "$tmp/secret"
printf 'SECRETBYTESxxxxxxxxxxxxxxxx' > "$tmp/secret/s.safetensors"
n=0
for shard in "../secret/s.safetensors" "$tmp/secret/s.safetensors"; do
  n=$((n + 1))
  printf '{"weight_map": {"a": "%s"}}' "$shard" > "$tmp/idx/model.safetensors.index.json"
  out=$(run inspect "$tmp/idx/model.safetensors.index.json" 2>&1)
  grep -q "SECRETBY" <<<"$out" && fail "inspect printed the shard target's bytes: $out"
  grep -q "is not a file name in the index's folder" <<<"$out" || fail "inspect followed $shard: $out"
  out=$(run "${TR[@]}" --vae_path "$tmp/idx/model.safetensors.index.json" --output_dir "$tmp/f5_$n" 2>&1)
  grep -q "SECRETBY" <<<"$out" && fail "train-upsampler printed the shard target's bytes"
  grep -q "is not a file name in the index's folder" <<<"$out" || fail "--vae_path index followed $shard: ${out:0:300}"
done

# --- F12/F13: control bytes in names are escaped; a NUL in file_path is refused.
python3 - "$tmp" <<'PY'
import json, struct, sys
t = sys.argv[1]
name = "evil\x1b[2J\x1b]0;pwned\x07name"
hdr = json.dumps({name: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
open(f"{t}/esc.safetensors", "wb").write(struct.pack("<Q", len(hdr)) + hdr + b"\0" * 4)
rows = json.load(open(f"{t}/data/metadata.json"))
rows[0]["file_path"] = rows[0]["file_path"] + "\u0000../../etc/passwd"
rows[1]["file_path"] = "clip\u001b[31mred.mp4"
json.dump(rows, open(f"{t}/nul.json", "w"))
PY
out=$(run inspect "$tmp/esc.safetensors" 2>&1) || fail "inspect of an escape-named tensor: $out"
grep -q $'\x1b' <<<"$out" && fail "inspect printed a raw escape byte"
grep -q 'evil\\x1b\[2J' <<<"$out" || fail "escaped name not shown: $out"
out=$(run probe "$tmp/nul.json" --train_data_dir "$tmp/data" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "probe with a NUL in file_path exited $rc"
grep -q 'contains a NUL character' <<<"$out" || fail "NUL not reported: ${out:0:400}"
grep -q $'\x1b' <<<"$out" && fail "probe printed a raw escape byte"

# --- F14: a number too large for a double names the file.
printf '[{"file_path": "a.mp4", "text": "x", "width": 1e999, "height": 2}]' > "$tmp/big.json"
out=$(run probe "$tmp/big.json" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "probe 1e999 exited $rc"
grep -q "big.json" <<<"$out" || fail "1e999 error without the file name: $out"

# --- No arguments / a typo: no folder left behind, one human line per problem on stderr.
mkdir -p "$tmp/cwd" && cd "$tmp/cwd"
"$engine" train-upsampler >"$tmp/noargs.out" 2>"$tmp/noargs.err" && fail "train-upsampler without arguments succeeded"
[ -z "$(ls -A "$tmp/cwd")" ] || fail "train-upsampler without arguments left $(ls -A "$tmp/cwd")"
grep -q '^error: .*train_data_meta' "$tmp/noargs.err" || fail "no human error line on stderr: $(cat "$tmp/noargs.err")"
grep -q '"type":"finished"' "$tmp/noargs.out" || fail "the events no longer reach stdout"
"$engine" "${TR[@]}" --output_dir "$tmp/typo" --learnin_rate 1 >/dev/null 2>"$tmp/typo.err" && fail "a typo was accepted"
[ -e "$tmp/typo" ] && fail "a config error created the output folder"
grep -q "^error: .*learnin_rate" "$tmp/typo.err" || fail "typo not on stderr: $(cat "$tmp/typo.err")"
cd - >/dev/null
# A mistyped key does not hide the other problems of the same config.
out=$("$engine" "${TR[@]}" --output_dir "$tmp/typo" --learnin_rate 1 --vae_path "$tmp/nope.pth" 2>/dev/null)
grep -q 'learnin_rate' <<<"$out" && grep -q 'nope.pth' <<<"$out" || fail "one problem hid another: $out"

# --- F8/F9/F2: out-of-range sizes are config errors before anything starts.
for bad in "--max_train_steps 9223372036854775000" "--video_sample_size 100000" "--dataloader_num_workers 100000" \
           "--train_batch_size 1000000" "--num_train_epochs 9223372036854775000"; do
  out=$(run "${TR[@]}" $bad --output_dir "$tmp/range" 2>/dev/null); rc=$?
  [ $rc -eq 1 ] || fail "$bad exited $rc"
  grep -q '"started"' <<<"$out" && fail "$bad started a run"
  name=${bad%% *}
  grep -q "${name#--}" <<<"$out" || fail "$bad: no error naming it: ${out:0:300}"
done
# A batch larger than the dataset (within the bound) is refused against the data.
out=$(run "${TR[@]}" --train_batch_size 500 --output_dir "$tmp/range" 2>/dev/null)
grep -q 'is more than the [0-9]* rows of' <<<"$out" || fail "batch vs rows: ${out:0:300}"
# One bad list of 50 000 items: a few lines, not 50 000.
python3 -c "print('validation_paths: [' + ', '.join(['[1]'] * 50000) + ']')" > "$tmp/list.yaml"
out=$(run "${TR[@]}" --config "$tmp/list.yaml" --output_dir "$tmp/list" 2>/dev/null)
n=$(grep -c '"type":"error"' <<<"$out")
[ "$n" -le 25 ] || fail "a bad list gave $n error lines"
grep -q 'more problems like these' <<<"$out" || fail "no summary of the remaining problems"

# --- Billion laughs in a model YAML given as config_path: refused quickly.
python3 - "$tmp/laughs.yaml" <<'PY'
import sys
lines = ["a: &a [l, l, l, l, l, l, l, l, l]"]
for p, n in zip("abcdefgh", "bcdefghi"):
    lines.append(f"{n}: &{n} [" + ", ".join(["*" + p] * 9) + "]")
lines.append("latent_upsampler_kwargs: {mid_channels: 32, num_blocks_per_stage: 1}")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
out=$(run "${TR[@]}" --config_path "$tmp/laughs.yaml" --output_dir "$tmp/laughs" 2>/dev/null); rc=$?
[ $rc -eq 1 ] || fail "billion laughs as config_path exited $rc (124 = hung)"
grep -q "aliases are expanded" <<<"$out" || fail "billion laughs: ${out:0:300}"

# --- A new run into a folder holding another run is refused; resume and overwrite are the ways on.
run "${TR[@]}" --max_train_steps 2 --checkpointing_steps 1 --checkpoints_total_limit 1 --output_dir "$tmp/r1" \
  >/dev/null 2>"$tmp/r1.err" || fail "first run: $(tail -3 "$tmp/r1.err")"
[ -d "$tmp/r1/checkpoint-2" ] || fail "first run left no checkpoint-2"
cp "$tmp/r1/events.jsonl" "$tmp/r1.events"
out=$(run "${TR[@]}" --max_train_steps 1 --checkpointing_steps 1 --checkpoints_total_limit 1 --output_dir "$tmp/r1" 2>"$tmp/r2.err"); rc=$?
[ $rc -eq 1 ] || fail "a second run into the same folder exited $rc"
grep -q 'already holds a run (latest checkpoint-2).*resume_from_checkpoint latest' <<<"$out" || fail "refusal: ${out:0:300}"
grep -q '^error: .*already holds a run' "$tmp/r2.err" || fail "refusal not on stderr"
[ -d "$tmp/r1/checkpoint-2" ] || fail "the refused run pruned checkpoint-2"
cmp -s "$tmp/r1.events" "$tmp/r1/events.jsonl" || fail "the refused run touched events.jsonl"
run "${TR[@]}" --max_train_steps 1 --checkpointing_steps 1 --checkpoints_total_limit 1 --output_dir "$tmp/r1" \
  --overwrite_output_dir >/dev/null 2>"$tmp/r3.err" || fail "overwrite run: $(tail -3 "$tmp/r3.err")"
[ -d "$tmp/r1/checkpoint-1" ] && [ ! -d "$tmp/r1/checkpoint-2" ] || fail "overwrite: $(ls "$tmp/r1")"
[ "$(grep -c '"type":"started"' "$tmp/r1/events.jsonl")" -eq 1 ] || fail "overwrite kept the old events"

# --- F15: events.jsonl on a full disk: the worker says so on stderr (and stdout keeps the events).
mkdir -p "$tmp/full"
ln -s /dev/full "$tmp/full/events.jsonl"
out=$(run "${TR[@]}" --max_train_steps 1 --checkpointing_steps 100 --output_dir "$tmp/full" \
      --resume_from_checkpoint latest 2>"$tmp/full.err")
grep -q 'events.jsonl: cannot append events (disk full)' "$tmp/full.err" || fail "full disk not reported: $(tail -3 "$tmp/full.err")"
grep -q '"type":"finished"' <<<"$out" || fail "stdout lost the events on a full disk"

# --- F7: demo_data auto never writes a row's text embedding outside text_embeddings_dir.
write_tiny_dit "$tmp/dit.yaml"
mkdir -p "$tmp/f7/data"
cp "$tmp/data/metadata.json" "$tmp/f7/meta.json"
python3 - "$tmp/f7/meta.json" "$tmp/escape" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
rows[0]["text_embedding_path"] = sys.argv[2] + "/abs/emb.safetensors"
rows[1]["text_embedding_path"] = "../escape_rel/emb.safetensors"  # against train_data_dir $tmp/data
json.dump(rows, open(sys.argv[1], "w"))
PY
run train-experts --transformer_config "$tmp/dit.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors" \
  --train_data_meta "$tmp/f7/meta.json" --train_data_dir "$tmp/data" --text_embeddings_dir "$tmp/f7/text" \
  --demo_data auto --video_sample_size 64 --video_sample_n_frames 5 --max_train_steps 1 \
  --output_dir "$tmp/f7/run" >"$tmp/f7.out" 2>&1
[ -e "$tmp/escape" ] && fail "demo_data auto wrote outside its folder: $(find "$tmp/escape")"
[ -e "$tmp/escape_rel" ] && fail "demo_data auto followed ../ in text_embedding_path"
grep -q 'outside text_embeddings_dir' "$tmp/f7.out" || fail "no error for the outside paths: $(tail -3 "$tmp/f7.out")"

# --- Friendlier errors: an experts checkpoint folder, buckets on an experts config.
mkdir -p "$tmp/ck/checkpoint-5/high_noise_transformer" "$tmp/ck/checkpoint-5/low_noise_transformer"
for e in high low; do
  cp "$data/vae/vae_dev_weights.safetensors" "$tmp/ck/checkpoint-5/${e}_noise_transformer/diffusion_pytorch_model.safetensors"
done
out=$(run inspect "$tmp/ck/checkpoint-5" 2>&1)
grep -q 'high_noise_transformer/, low_noise_transformer/' <<<"$out" || fail "inspect of a checkpoint folder: $out"
printf 'job: experts\ntrain_data_meta: %s\n' "$tmp/data/metadata.json" > "$tmp/experts.yaml"
out=$(run buckets --config "$tmp/experts.yaml" 2>&1)
grep -q 'train-upsampler configs only' <<<"$out" || fail "buckets on an experts config: $out"
# The released-width model YAML the README points at is shipped and readable.
out=$(run buckets --config_path "$data/../../configs/wan2.2/upsampler_2.2vae.yaml" --train_data_meta "$tmp/data/metadata.json" \
      --video_sample_size 480 --video_sample_n_frames 5 2>&1) || fail "buckets with configs/wan2.2/upsampler_2.2vae.yaml: $out"
grep -q '"latent_lr"' <<<"$out" || fail "no bucket report from the released model YAML: ${out:0:300}"
# --- Round 2 (issue 40): no temporary name another user can guess. A link planted where an atomic
# write once put its temporary file (<file>.tmp.<pid>; exec keeps the pid) is not written through.
mkdir -p "$tmp/planted"
echo precious > "$tmp/precious.txt"
bash -c 'ln -s "$1" "$2/metadata.json.tmp.$$"; exec timeout 120 "$3" demo-data "$2"' _ "$tmp/precious.txt" \
  "$tmp/planted" "$engine" >/dev/null 2>&1 || fail "demo-data beside a planted link"
[ "$(cat "$tmp/precious.txt")" = precious ] || fail "the planted link's target was overwritten"
[ -f "$tmp/planted/metadata.json" ] && [ ! -L "$tmp/planted/metadata.json" ] || fail "metadata.json is not a plain file"
# A FIFO as estimate's run file: a one-line error, no hang.
out=$(run estimate --config "$tmp/fifo.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] || fail "estimate --config FIFO exited $rc: ${out:0:200}"
grep -q "regular file" <<<"$out" || fail "estimate --config FIFO: ${out:0:200}"
# Non-finite numbers: refused on the command line before anything loads, and weights that went
# NaN in training are never written (the run fails naming the tensor; exit 1, not 0).
out=$(run merge-lora --model "$tmp/none" --lora "$tmp/none.safetensors" --scale nan --out "$tmp/merged" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q -- "--scale: expected a number from -100 to 100, got .nan." <<<"$out" || fail "merge-lora --scale nan: $rc ${out:0:200}"
for v in inf -inf nan 1e999; do
  out=$(run sample --model "$tmp/none" --prompt x --sample_guide_scale "$v" 2>&1); rc=$?
  [ $rc -eq 1 ] && grep -q -- "--sample_guide_scale: expected a" <<<"$out" || fail "sample --sample_guide_scale $v: $rc ${out:0:200}"
done
# A run that diverges skips each update with NaN/inf gradients (a warning event naming the step and
# the expert) and stops after max_nonfinite_steps of them in a row: exit 1, an error event, no
# checkpoint of NaN weights. (A learning rate of 1e30 no longer gets that far: it is past the option's
# declared range.) Warm-started from weights scaled to 1e30, the activations overflow at once.
run "${TR[@]}" --output_dir "$tmp/seedrun" --max_train_steps 1 --checkpointing_steps 1 >/dev/null 2>&1 \
  || fail "the one-step run that gives the weights to scale"
python3 - "$tmp/seedrun/checkpoint-1/latent_upsampler/diffusion_pytorch_model.safetensors" "$tmp/huge.safetensors" <<'PY'
import array, json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header, data = json.loads(raw[8:8 + n]), bytearray(raw[8 + n:])
for name, t in header.items():
    if name == "__metadata__" or t["dtype"] != "F32":
        continue
    a, b = t["data_offsets"]
    v = array.array("f", bytes(data[a:b]))
    data[a:b] = array.array("f", [max(-3e38, min(3e38, x * 1e30)) for x in v]).tobytes()
open(sys.argv[2], "wb").write(raw[:8 + n] + bytes(data))
PY
out=$(run "${TR[@]}" --output_dir "$tmp/nanrun" --max_train_steps 6 --checkpointing_steps 6 \
      --latent_upsampler_path "$tmp/huge.safetensors" --max_nonfinite_steps 3 2>/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a run whose weights went NaN exited $rc"
[ "$(grep -c '"level":"warning".*the update is skipped' <<<"$out")" -eq 3 ] || fail "not three skip warnings: ${out:0:400}"
grep -q '3 updates in a row with non-finite gradients.*"type":"error"' <<<"$out" || fail "no error event for the stop"
ls -A "$tmp/nanrun" | grep -q checkpoint && fail "a NaN checkpoint was left: $(ls -A "$tmp/nanrun")"
# --- A Qwen2.5-VL folder for `caption --model_path` with a config claiming a billion layers, or
#     truncated weights, or a broken tokenizer: one line and exit 1, quickly (the layer count used
#     to build a billion expected keys until the kernel killed the worker), metadata untouched.
cp "$tmp/data/metadata.json" "$tmp/meta-before.json"
qwen_case() {  # $1 name; the folder $tmp/$1 is made from the tiny model, then spoiled by the caller
  rm -rf "$tmp/$1" && mkdir -p "$tmp/$1" && cp "$data/qwen_vl/config.json" "$data/qwen_vl/model.safetensors" \
    "$data/qwen_vl/tokenizer.json" "$tmp/$1/"
}
qwen_run() {
  out=$(run caption --metadata "$tmp/data/metadata.json" --model_path "$tmp/$1" --rows 0 --overwrite 2>&1 >/dev/null)
  rc=$?
  [ $rc -eq 1 ] || fail "caption with $1 exited $rc: ${out:0:300}"
  grep -q "$2" <<<"$out" || fail "caption with $1: ${out:0:300}"
}
qwen_case layers
python3 - "$tmp/layers/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["num_hidden_layers"] = 1000000000
json.dump(c, open(sys.argv[1], "w"))
PY
qwen_run layers "1000000000 text layers"
qwen_case depth
python3 - "$tmp/depth/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["vision_config"]["depth"] = 1000000000
c["vision_config"]["fullatt_block_indexes"] = [1]
json.dump(c, open(sys.argv[1], "w"))
PY
qwen_run depth "1000000000 vision blocks"
qwen_case cut && head -c 5000 "$data/qwen_vl/model.safetensors" >"$tmp/cut/model.safetensors"
qwen_run cut "truncated"
qwen_case tok && echo garbage >"$tmp/tok/tokenizer.json"
qwen_run tok "not a HuggingFace tokenizer.json"
cmp -s "$tmp/data/metadata.json" "$tmp/meta-before.json" || fail "a failed caption job changed the metadata"

echo "hostile inputs: ok"
