#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# inspect: the VAE fixture in both formats reports its 486,082 parameters; a garbage file
# is exit 1 with exactly one `error:` line on stderr and nothing on stdout.
set -u
exe=$1 data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for f in vae_dev_weights.pth vae_dev_weights.safetensors; do
  "$exe" inspect "$data/vae/$f" >"$tmp/out" 2>"$tmp/err" || fail "inspect $f exited $?: $(cat "$tmp/err")"
  grep -q '486082 parameters' "$tmp/out" || fail "inspect $f: no '486082 parameters' in: $(tail -1 "$tmp/out")"
  grep -q '^196 tensors' "$tmp/out" || fail "inspect $f: not 196 tensors"
  grep -Eq '^encoder\.downsamples\.1\.downsamples\.2\.time_conv\.weight +F32 +\[' "$tmp/out" ||
    fail "inspect $f: tensor line missing"
  [ -s "$tmp/err" ] && fail "inspect $f wrote to stderr: $(cat "$tmp/err")"
done
# Both formats list the same tensors.
"$exe" inspect "$data/vae/vae_dev_weights.pth" | tail -n +2 >"$tmp/a"
"$exe" inspect "$data/vae/vae_dev_weights.safetensors" | grep -v '^  metadata' | tail -n +2 >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "pth and safetensors listings differ"

"$exe" inspect --json "$data/vae/vae_dev_weights.pth" | grep -q '"parameters":486082' || fail "--json has no parameter count"

check_error() {  # file, what
  "$exe" inspect "$1" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$2: exit $rc, want 1"
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$2: stderr is not one line: $(cat "$tmp/err")"
  grep -q '^error: ' "$tmp/err" || fail "$2: stderr does not start with 'error:'"
  [ -s "$tmp/out" ] && fail "$2: wrote to stdout"
  return 0
}
head -c 4096 /dev/urandom >"$tmp/garbage.bin"
check_error "$tmp/garbage.bin" "garbage file"
printf 'not a checkpoint' >"$tmp/garbage.pth"
check_error "$tmp/garbage.pth" "garbage .pth"
head -c 100000 "$data/vae/vae_dev_weights.pth" >"$tmp/cut.pth"
check_error "$tmp/cut.pth" "truncated .pth"
head -c 3000 "$data/vae/vae_dev_weights.safetensors" >"$tmp/cut.safetensors"
check_error "$tmp/cut.safetensors" "truncated .safetensors"
check_error "$tmp/does-not-exist.safetensors" "missing file"
echo "inspect: ok"
