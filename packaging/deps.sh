#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages Wan Studio builds and runs with; skips what is present.
#   packaging/deps.sh           what the build, the demo and the tests need
#   packaging/deps.sh --bench   also PyTorch and OpenCV, for the side-by-side benchmarks
#                               (packaging/bench_reference.py, bench_reference_e2e.py; opencv-doc ships real clips)
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libopenblas0-pthread libdnnl-dev
  qt6-base-dev libqcustomplot-dev
  libyaml-cpp-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev
  libgloo-dev libopencv-video-dev xvfb xauth
  libsentencepiece-dev sentencepiece
  help2man lintian clang-format ccache
  python3
)
[ "${1:-}" = "--bench" ] && pkgs+=(python3-torch python3-opencv opencv-doc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
