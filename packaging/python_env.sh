#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The project's own Python: a virtual environment in .venv/ (never the system Python) holding the
# pinned PyPI packages. Installs only what is missing; prints the environment's python.
#   packaging/python_env.sh              PyTorch (packaging/python/torch.txt), for build.sh --gpu
#   packaging/python_env.sh --reference  also the reference code's packages (reference.txt)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${WANSTUDIO_VENV:-$root/.venv}
req=$root/packaging/python/torch.txt
[ "${1:-}" = "--reference" ] && req=$root/packaging/python/reference.txt
if [ ! -x "$venv/bin/python3" ]; then
  # Debian's python3 needs python3-venv for this; deps.sh installs it.
  python3 -m venv "$venv" >&2
fi
# pip's own check is slow on a 5 GB environment: skip it when every pin is already met.
if ! "$venv/bin/python3" - "$req" <<'PY' >/dev/null 2>&1
import importlib.metadata as md, re, sys
def pins(path):
    for line in open(path):
        line = line.split("#")[0].strip()
        if line.startswith("-r "):
            yield from pins(__import__("os").path.join(__import__("os").path.dirname(path), line[3:].strip()))
        elif "==" in line:
            yield line.split("==")
for name, version in pins(sys.argv[1]):
    if md.version(name) != version:
        sys.exit(1)
PY
then
  echo "python_env.sh: installing $(grep -hv '^#' "$req" | tr '\n' ' ') into $venv" >&2
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check -r "$req" >&2
fi
echo "$venv/bin/python3"
