#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: set up a fresh Debian machine, build, run every test.
# Exits non-zero on any failure.
#   packaging/test.sh --gpu   the same on the CUDA LibTorch 2.x build (build-gpu/, packaging/build.sh --gpu);
#                             without a GPU here, checks that need one are reported as skipped

set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/build.sh" "$@"
default_build=$root/build
[ "${1:-}" = "--gpu" ] && default_build=$root/build-gpu
build=${WANSTUDIO_BUILD_DIR:-$default_build}
# LibTorch 1.13 on Debian starts with one thread; tests set their own where it matters.
export QT_QPA_PLATFORM=offscreen
cd "$build"
# Tests run side by side (one per core); each is bounded by its own TIMEOUT property, and this
# is the ceiling for any that has none.
ctest --output-on-failure -j "${WANSTUDIO_JOBS:-$(nproc)}" --timeout 900
