#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# encode-text and train-experts from captions, with the parity fixtures' tiny UMT5 (dim 32) and
# tokenizer: one file per distinct caption plus the negative prompt's, a re-run that skips what is
# there (and continues after a kill), files train-experts reads unchanged, train-experts encoding
# the missing captions itself, and bad inputs that end in one clear line.
source "$(dirname "$0")/lib/common.sh"
t5=(--text_encoder_path "$data/t5/t5_dev_weights.pth" --tokenizer_path "$data/t5/t5_dev_tokenizer.model")

"$engine" demo-data "$tmp/data" >/dev/null 2>&1 || fail "demo-data"
distinct=$(python3 -c 'import json,sys; print(len({r.get("text","") for r in json.load(open(sys.argv[1]))}))' "$tmp/data/metadata.json")

# 1. Every distinct caption and the negative prompt; progress events, then `finished completed`.
"$engine" encode-text --metadata "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/emb" "${t5[@]}" \
  >"$tmp/e1.out" 2>"$tmp/e1.err" || fail "encode-text exited $?: $(tail -3 "$tmp/e1.err")"
n=$(ls "$tmp/emb" | wc -l)
[ "$n" -eq $((distinct + 1)) ] || fail "$n files for $distinct captions + the negative prompt"
[ -f "$tmp/emb/ce96e0324e4b54ce4b6e867f669ca520952e1a34cc116543516b1897f0d3c47e.safetensors" ] || fail "no negative prompt file"
[ "$(grep -c '"type":"progress"' "$tmp/e1.out")" -eq $((n + 1)) ] || fail "progress events: $(grep -c progress "$tmp/e1.out")"
tail -1 "$tmp/e1.out" | grep -q '"status":"completed"' || fail "no completed finish"
"$engine" inspect "$(ls "$tmp"/emb/*.safetensors | head -1)" | grep -q 'context  F32   \[[0-9]*,32\]' || fail "not a [L, 32] context"

# 2. A re-run loads no encoder; after a kill (one file missing, a temporary left) one caption is encoded.
"$engine" encode-text --metadata "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/emb" "${t5[@]}" \
  >"$tmp/e2.out" 2>"$tmp/e2.err" || fail "re-run exited $?"
grep -q 'loading the text encoder' "$tmp/e2.err" && fail "the re-run loaded the encoder"
victim=$(ls "$tmp"/emb/*.safetensors | head -1)
rm "$victim"
echo partial > "$victim.tmp"
"$engine" encode-text --metadata "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/emb" "${t5[@]}" \
  >/dev/null 2>"$tmp/e3.err" || fail "resume exited $?"
grep -q '1 encoded' "$tmp/e3.err" || fail "resume: $(tail -1 "$tmp/e3.err")"
[ -f "$victim" ] || fail "the missing file was not written"

# 2b. A real kill: 3000 prompts, SIGKILL once some are written; the re-run encodes only the rest,
#     and every file equals a clean run's.
python3 -c 'import sys; [print("prompt number %d of the kill test" % i) for i in range(3000)]' > "$tmp/prompts.txt"
mapfile -t prompts < "$tmp/prompts.txt"
"$engine" encode-text --prompt "${prompts[@]}" --negative_prompt "" --text_embeddings_dir "$tmp/killed" "${t5[@]}" \
  >"$tmp/k1.out" 2>/dev/null &
pid=$!
some_written() { [ "$(grep -c '"type":"progress"' "$tmp/k1.out")" -ge 3 ]; }
wait_for "the first captions of the kill run" 300 some_written
kill -KILL $pid
wait $pid 2>/dev/null
done1=$(ls "$tmp/killed" | grep -c '\.safetensors$')
[ "$done1" -lt 3000 ] || fail "the kill came too late to test a resume ($done1 files)"
"$engine" encode-text --prompt "${prompts[@]}" --negative_prompt "" --text_embeddings_dir "$tmp/killed" "${t5[@]}" \
  >/dev/null 2>"$tmp/k2.err" || fail "the run after the kill: $(tail -2 "$tmp/k2.err")"
grep -q "$((3000 - done1)) encoded, $done1 already there" "$tmp/k2.err" || fail "after the kill: $(tail -1 "$tmp/k2.err")"
"$engine" encode-text --prompt "${prompts[@]}" --negative_prompt "" --text_embeddings_dir "$tmp/clean" "${t5[@]}" \
  >/dev/null 2>&1 || fail "the clean run"
for f in "$tmp"/clean/*.safetensors; do
  cmp -s "$f" "$tmp/killed/$(basename "$f")" || fail "the resumed $(basename "$f") differs from a clean run's"
done

# 3. train-experts reads those files unchanged (experts with text_dim 32 = the encoder's width).
write_tiny_dit "$tmp/dit.yaml" 32 16
common=(--transformer_config "$tmp/dit.yaml" --vae_path "$data/vae/vae_dev_weights.safetensors"
        --train_data_meta "$tmp/data/metadata.json" --video_sample_size 64 --video_sample_n_frames 5
        --seed 3 --dataloader_num_workers 0 --gradient_checkpointing=false --max_train_steps 2 --report_to none)
"$engine" encode-text --metadata "$tmp/data/metadata.json" --text_embeddings_dir "$tmp/emb16" --text_len 16 "${t5[@]}" \
  >/dev/null 2>&1 || fail "encode-text --text_len 16"
"$engine" train-experts "${common[@]}" --text_embeddings_dir "$tmp/emb16" --output_dir "$tmp/run1" \
  >/dev/null 2>"$tmp/r1.err" || fail "train-experts from encode-text's files: $(tail -3 "$tmp/r1.err")"
grep -q '"status":"completed","step":2' "$tmp/run1/events.jsonl" || fail "run 1 did not complete"

# 4. train-experts with the encoder: the missing captions are encoded before the first step.
"$engine" train-experts "${common[@]}" --text_embeddings_dir "$tmp/emb_auto" "${t5[@]}" --output_dir "$tmp/run2" \
  >/dev/null 2>"$tmp/r2.err" || fail "train-experts with text_encoder_path: $(tail -3 "$tmp/r2.err")"
grep -q 'encoded [0-9]* captions' "$tmp/r2.err" || fail "no encoding reported"
[ "$(ls "$tmp/emb_auto" | wc -l)" -eq "$distinct" ] || fail "train-experts wrote $(ls "$tmp/emb_auto" | wc -l) files"
cmp -s "$tmp/emb16/$(basename "$victim")" "$tmp/emb_auto/$(basename "$victim")" 2>/dev/null ||
  python3 - "$tmp/emb16" "$tmp/emb_auto" <<'PY' || fail "train-experts' embeddings differ from encode-text's"
import json, os, struct, sys
a, b = sys.argv[1], sys.argv[2]
for f in os.listdir(b):
    def body(p):
        d = open(p, "rb").read(); n = struct.unpack("<Q", d[:8])[0]; return d[8 + n:]
    assert body(os.path.join(a, f)) == body(os.path.join(b, f)), f
PY
grep -q '"status":"completed","step":2' "$tmp/run2/events.jsonl" || fail "run 2 did not complete"

# 5. Bad inputs: one clear line, exit 1.
out=$("$engine" encode-text --prompt hello --text_embeddings_dir "$tmp/x" --text_encoder_path "$data/t5/t5_dev_weights.pth" \
      --tokenizer_path "$tmp/nope.model" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "missing tokenizer: exit $rc"
[ "$(grep -c '^error: ' <<<"$out")" -eq 1 ] && grep -q 'nope.model' <<<"$out" || fail "missing tokenizer: $out"
python3 - "$tmp/evil.pth" <<'PY' || fail "could not write the hostile .pth"
import pickle, sys, zipfile
class Evil:
    def __reduce__(self): return (eval, ("1",))
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("evil/data.pkl", pickle.dumps({"token_embedding.weight": Evil()}, protocol=2))
    z.writestr("evil/version", "3\n")
PY
out=$("$engine" encode-text --prompt hello --text_embeddings_dir "$tmp/x" --text_encoder_path "$tmp/evil.pth" \
      --tokenizer_path "$data/t5/t5_dev_tokenizer.model" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "foreign pickle global: exit $rc"
[ "$(grep -c '^error: ' <<<"$out")" -eq 1 ] && grep -q "refused: the pickle references global .*eval" <<<"$out" || fail "foreign pickle global: $out"
long=$(python3 -c 'print("a fox runs " * 10000)')
out=$("$engine" encode-text --prompt "$long" --text_embeddings_dir "$tmp/long" "${t5[@]}" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] || fail "a 100 000-character caption: exit $rc"
[ "$(grep -c '^error: ' <<<"$out")" -eq 1 ] && grep -q 'prompt 0: a caption of [0-9]* bytes; more than 20000' <<<"$out" || fail "100 000 characters: $out"
# A long caption (about 4,000 characters) is cut to text_len with a warning; an empty one is EOS alone.
longish=$(python3 -c 'print("a fox runs " * 400)')
"$engine" encode-text --prompt "$longish" "" --negative_prompt "" --text_embeddings_dir "$tmp/long" "${t5[@]}" \
  >/dev/null 2>"$tmp/long.err" || fail "a long caption: $(tail -2 "$tmp/long.err")"
grep -q 'prompt 0: the caption has [0-9]* tokens; the first 511 are used' "$tmp/long.err" || fail "no truncation warning: $(cat "$tmp/long.err")"
grep -q 'prompt 1: empty caption' "$tmp/long.err" || fail "no empty-caption warning"
"$engine" inspect "$tmp/long/e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.safetensors" |
  grep -q 'context  F32   \[1,32\]' || fail "the empty caption is not EOS alone"
# 6. The experts demo as shipped starts from its captions (its own tiny encoder and tokenizer);
#    only the folders move into the test's.
root=$(cd "$(dirname "$0")/../.." && pwd)
"$engine" train-experts --config "$root/configs/demo-experts.yaml" --train_data_dir "$tmp/data" \
  --train_data_meta "$tmp/data/metadata.json" --eval_data_meta "$tmp/data/metadata.json" \
  --text_embeddings_dir "$tmp/demo_text" --latent_cache_dir "$tmp/demo_latents" --output_dir "$tmp/demo_run" \
  --max_train_steps 2 --eval_steps 2 >/dev/null 2>"$tmp/demo.err" || fail "the experts demo: $(tail -3 "$tmp/demo.err")"
grep -q "encoded $distinct captions with .*umt5_demo.safetensors" "$tmp/demo.err" || fail "the demo did not encode its captions"
grep -q '"status":"completed","step":2' "$tmp/demo_run/events.jsonl" || fail "the demo run did not complete"
echo "encode_text: ok"
