#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `schema train-upsampler` is the GUI's source of truth: valid JSON holding the reference flags
# with Wan Studio's defaults; an unknown verb is a one-line error and exit 1.
set -u
engine=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$("$engine" schema train-upsampler) || fail "exit $?"
python3 - "$out" <<'PY' || exit 1
import json, sys
s = json.loads(sys.argv[1])
opts = {o["name"]: o for o in s["options"]}
assert s["job"] == "upsampler"
for name in ["train_data_meta", "video_sample_n_frames", "lr_scheduler", "max_grad_norm", "use_ema",
             "resume_from_checkpoint", "enable_noisy_training", "noise_step_range", "validation_paths",
             "use_8bit_adam", "report_to", "local_rank"]:
    assert name in opts, name
assert opts["learning_rate"]["default"] == 2e-5
assert opts["lr_scheduler"]["type"] == "enum" and "cosine_with_restarts" in opts["lr_scheduler"]["choices"]
assert opts["train_data_meta"]["required"] is True
assert opts["validation_paths"]["list"] is True and opts["validation_paths"]["type"] == "path"
print("schema ok:", len(opts), "options")
PY
err=$("$engine" schema train-nothing 2>&1 >/dev/null) && fail "unknown verb accepted"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "error is not one line: $err"
grep -q '^error:' <<<"$err" || fail "no error: prefix"
echo ok
