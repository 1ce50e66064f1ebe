#!/usr/bin/env bash
# Installs missing packages, configures and builds Wan Studio into build/ (Release, Ninja).
# Extra arguments go to CMake (e.g. -DWANSTUDIO_GUI=OFF).
#   packaging/build.sh --gpu [cmake args]   builds against a CUDA LibTorch instead of Debian's CPU one,
#       into build-gpu/: TORCH_PREFIX=/path/to/libtorch (the standalone LibTorch) or, by default,
#       the LibTorch inside the `python3` PyTorch (torch.utils.cmake_prefix_path). See the README's
#       "GPU build".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=0
if [ "${1:-}" = "--gpu" ]; then
  gpu=1
  shift
fi
"$root/packaging/deps.sh"
jobs=${WANSTUDIO_JOBS:-$(nproc)}
if [ "$gpu" = 1 ]; then
  prefix=${TORCH_PREFIX:-$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)}
  [ -n "$prefix" ] || { echo "build.sh --gpu: set TORCH_PREFIX to a CUDA LibTorch, or install PyTorch with CUDA for python3" >&2; exit 1; }
  build=${WANSTUDIO_BUILD_DIR:-$root/build-gpu}
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "$@"
else
  build=${WANSTUDIO_BUILD_DIR:-$root/build}
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build "$build" -j "$jobs"
