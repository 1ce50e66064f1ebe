#!/usr/bin/env bash
# Installs missing packages, configures and builds Wan Studio into build/ (Release, Ninja).
# Extra arguments go to CMake (e.g. -DWANSTUDIO_GUI=OFF).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/packaging/deps.sh"
build=${WANSTUDIO_BUILD_DIR:-$root/build}
jobs=${WANSTUDIO_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" -j "$jobs"
