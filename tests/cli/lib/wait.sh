# SPDX-License-Identifier: Apache-2.0
# Sourced by the CLI tests: wait for the event a test needs, never for a fixed time.
# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds; after SECONDS
# (a generous bound for a loaded machine) the test fails naming WHAT.
wait_for() {
  local what=$1 secs=$2
  shift 2
  local end=$((SECONDS + secs))
  until "$@" 2>/dev/null; do
    if [ "$SECONDS" -ge "$end" ]; then echo "FAIL: waited ${secs} s for $what"; exit 1; fi
    sleep 0.1
  done
}
has_event() { grep -q "\"type\":\"$1\"" "$2"; }  # has_event TYPE FILE
# has_checkpoint DIR: a complete checkpoint-<N> exists (any N: with a small checkpoints_total_limit a
# given one may live for only a few fast steps, too briefly to be seen by polling).
has_checkpoint() { compgen -G "$1/checkpoint-[0-9]*" >/dev/null; }
