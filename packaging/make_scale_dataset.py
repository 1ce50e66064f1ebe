#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A metadata.json of N rows (default 100,000) over the clips of a small dataset, for measuring
# how the studio's dataset page scales: every row names one of the clips (so thumbnails repeat
# and the disk cache is exercised), with an ordinary caption, size, frames and fps.
#   python3 packaging/make_scale_dataset.py out/demo/data/metadata.json /tmp/big/metadata.json 100000
#   wanstudio --dataset /tmp/big/metadata.json --tab dataset
# Standard library only.
import json
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: make_scale_dataset.py SOURCE_METADATA.json OUT_METADATA.json [ROWS]")
    source, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    with open(source, encoding="utf-8") as f:
        rows = [r for r in json.load(f) if r.get("type", "video") == "video"]
    if not rows:
        sys.exit(f"{source}: no video rows")
    base = os.path.dirname(os.path.abspath(source))
    made = []
    for i in range(n):
        r = dict(rows[i % len(rows)])
        path = r["file_path"]
        r["file_path"] = path if os.path.isabs(path) else os.path.join(base, path)
        r["text"] = f"row {i}: " + (r.get("text") or "a clip")
        made.append(r)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(made, f, indent=1)
    os.replace(tmp, out)
    print(f"{out}: {n} rows over {len(rows)} clips")


if __name__ == "__main__":
    main()
