#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer harnesses (clang, ASan, UBSan) into build-fuzz/ and runs each for
# FUZZ_SECONDS (default 600) on a scratch copy of its committed corpus; prints executions and
# findings per harness. Crashes land in build-fuzz/findings/<harness>/: add them to
# tests/fuzz/corpus/<harness>/ once fixed, so the normal build replays them.
#   packaging/fuzz.sh [harness ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/deps.sh"
command -v clang++ >/dev/null || { echo "error: the fuzz build needs clang (apt-get install clang)" >&2; exit 1; }
build=${WANSTUDIO_FUZZ_BUILD_DIR:-$root/build-fuzz}
secs=${FUZZ_SECONDS:-600}
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${WANSTUDIO_JOBS:-$(nproc)}"
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(fuzz_safetensors fuzz_pth fuzz_metadata fuzz_yaml_config fuzz_tfevents fuzz_events)
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for h in "${harnesses[@]}"; do
  work="$build/corpus/$h" found="$build/findings/$h"
  mkdir -p "$work" "$found"
  cp -n "$root/tests/fuzz/corpus/$h/"* "$work/" 2>/dev/null || true
  log="$build/$h.log"
  # -fork keeps going after a finding; the log's last stats line has the totals.
  (cd "$found" && "$build/$h" -max_total_time="$secs" -rss_limit_mb=4096 -timeout=20 -fork=1 \
     -ignore_crashes=1 -artifact_prefix="$found/" "$work" >"$log" 2>&1) || true
  # -fork's status lines: "#<executions>: cov: <edges> ft: ... corp: <inputs> ...".
  last=$(grep -E '^#[0-9]+: ' "$log" | tail -1)
  execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  crashes=$(find "$found" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  printf '%-18s %10s executions  %6s edges  findings: %s  (log: %s)\n' "$h" "${execs:-?}" "${cov:-?}" "$crashes" "$log"
done
