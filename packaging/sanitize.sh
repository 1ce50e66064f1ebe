#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The studio and its Qt tests under sanitizers (WANSTUDIO_SANITIZE), in build-sanitize/: only the
# studio side is built (no LibTorch library is compiled), then every test labelled `studio` runs;
# any sanitizer report fails it. The worker is not the code under test: the regular build's
# (packaging/build.sh, built first when missing) stands in for it.
#   packaging/sanitize.sh                 AddressSanitizer + UndefinedBehaviorSanitizer
#   packaging/sanitize.sh thread          ThreadSanitizer
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitizers=${1:-address,undefined}
build=${WANSTUDIO_SANITIZE_BUILD_DIR:-$root/build-sanitize${1:+-$1}}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWANSTUDIO_SANITIZE="$sanitizers" \
  -DWANSTUDIO_APP_TESTS_NEED_ENGINE=OFF -DCMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)" >/dev/null
regular=${WANSTUDIO_BUILD_DIR:-$root/build}/engine/wanstudio-engine
[ -x "$regular" ] || "$root/packaging/build.sh"
mkdir -p "$build/engine"
ln -sfn "$regular" "$build/engine/wanstudio-engine"
mapfile -t tests < <(cd "$root/tests/app" && ls test_*.cpp | sed 's/\.cpp$//')
ninja -C "$build" wanstudio "${tests[@]}"
export QT_QPA_PLATFORM=offscreen
# Leaks are not failures here (Qt and fontconfig keep caches until exit); every other report is.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
cd "$build"
ctest -L studio --output-on-failure -j "${WANSTUDIO_JOBS:-$(nproc)}" --timeout 900
