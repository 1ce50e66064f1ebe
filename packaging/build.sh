#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs missing packages, configures and builds Wan Studio into build/ (Release, Ninja).
# Extra arguments go to CMake (e.g. -DWANSTUDIO_GUI=OFF).
#   packaging/build.sh --gpu [cmake args]   builds against PyTorch's CUDA LibTorch instead of Debian's
#       CPU one, into build-gpu/: the pinned wheel (packaging/python/torch.txt) in the project's
#       .venv/ by default, or TORCH_PREFIX=/path/to/libtorch (a standalone LibTorch, or the torch
#       folder of an installed PyTorch; a CMake list may add other prefixes). The README's
#       "GPU build" says which versions are verified.
# Compiles go through ccache when it is installed, with one cache for every clone of this user
# (paths inside the tree are hashed relative to it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
gpu=0
if [ "${1:-}" = "--gpu" ]; then
  gpu=1
  shift
fi
# WANSTUDIO_NO_DEPS=1: install nothing (a machine without a package registry, such as a lent GPU).
[ "${WANSTUDIO_NO_DEPS:-0}" = 1 ] || "$root/packaging/deps.sh"
jobs=${WANSTUDIO_JOBS:-$(nproc)}
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
if command -v ccache >/dev/null && [ "${WANSTUDIO_CCACHE:-1}" != 0 ]; then
  export CCACHE_BASEDIR=$root
  # The precompiled headers: ccache must hash them by content and accept the -include they come in.
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [ "$gpu" = 1 ]; then
  if [ -n "${TORCH_PREFIX:-}" ]; then
    prefix=$TORCH_PREFIX
    python=$(command -v python3)
  else
    python=$("$root/packaging/python_env.sh")
    torch_root=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
    # The torch folder itself first, so its lib/ wins over Debian's libtorch.so (which CMake's
    # system paths would otherwise find first: 1.13 libraries under 2.x headers).
    prefix="$torch_root;$torch_root/share/cmake"
    # PyPI's torch runs on the CUDA and NCCL libraries of its nvidia-* wheels (CUDA 13.2, NCCL 2.30),
    # newer than the toolkit's (13.0) this machine compiles with: link and run against the wheels'
    # (the runtime and NVRTC torch's config would otherwise take from the toolkit; the rest through
    # -rpath-link, as libtorch_cuda's own RUNPATH finds them at run time).
    nv=$(dirname "$torch_root")/nvidia
    if [ -f "$nv/cu13/lib/libcudart.so.13" ]; then
      libs=$(printf '%s:' "$nv"/*/lib)
      args+=(-DCUDA_CUDART="$nv/cu13/lib/libcudart.so.13" -DCUDA_CUDART_LIBRARY="$nv/cu13/lib/libcudart.so.13" -DCUDA_cudart_LIBRARY="$nv/cu13/lib/libcudart.so.13"
             -DCUDA_NVRTC_LIB="$nv/cu13/lib/libnvrtc.so.13" -DCUDA_nvrtc_LIBRARY="$nv/cu13/lib/libnvrtc.so.13"
             "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,${libs%:}" "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath-link,${libs%:}"
             "-DCMAKE_BUILD_RPATH=$(printf '%s;' "$nv"/*/lib)")
    fi
  fi
  build=${WANSTUDIO_BUILD_DIR:-$root/build-gpu}
  # The Debian build's worker, for the test that resumes each build's checkpoints on the other
  # (tests/cross; skipped, and said so, until build/ has one).
  other=${WANSTUDIO_OTHER_ENGINE-$root/build/engine/wanstudio-engine}
  cmake -S "$root" -B "$build" "${args[@]}" -DCMAKE_PREFIX_PATH="$prefix" -DPython3_EXECUTABLE="$python" \
    -DWANSTUDIO_OTHER_ENGINE="$other" "$@"
else
  build=${WANSTUDIO_BUILD_DIR:-$root/build}
  cmake -S "$root" -B "$build" "${args[@]}" "$@"
fi
# WANSTUDIO_BUILD_ARGS: arguments for the build tool (e.g. "-k 0" to list every broken file).
cmake --build "$build" -j "$jobs" ${WANSTUDIO_BUILD_ARGS:+-- $WANSTUDIO_BUILD_ARGS}
