#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: set up a fresh Debian machine, build, run every test.
# Exits non-zero on any failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/build.sh" "$@"
build=${WANSTUDIO_BUILD_DIR:-$root/build}
# LibTorch 1.13 on Debian starts with one thread; tests set their own where it matters.
export QT_QPA_PLATFORM=offscreen
cd "$build"
ctest --output-on-failure --timeout 1200
