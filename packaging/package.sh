#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Debian package: packaging/package.sh [OUT_DIR]  ->  OUT_DIR/wanstudio_<version>_amd64.deb
# (default out/package/). Installs what is missing and builds build/ first (packaging/build.sh),
# then packs its install tree with CPack and checks the package with lintian (errors fail).
# Install it with: sudo apt install ./out/package/wanstudio_*_amd64.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "${1:-$root/out/package}")
build=${WANSTUDIO_BUILD_DIR:-$root/build}
"$root/packaging/build.sh"
mkdir -p "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
deb=$(ls -t "$out"/wanstudio_*_amd64.deb | head -1)
if command -v lintian >/dev/null; then
  lintian --fail-on error "$deb"
else
  echo "package.sh: lintian not found, the package is not checked (packaging/deps.sh installs it)" >&2
fi
echo "$deb"
