# SPDX-License-Identifier: Apache-2.0
"""Where the reference benches find the official Wan 2.2 code: a pinned snapshot of
github.com/Wan-Video/Wan2.2, fetched at run time into a cache (never vendored in this project), or a
checkout the user names. The files the benches run are checked against the pinned snapshot's
SHA-256, so two machines compare against the same code.

  snapshot:  ~/.cache/wanstudio/reference/Wan2.2-<PIN>   ($WANSTUDIO_REFERENCE_CACHE overrides the folder)
  source:    https://codeload.github.com/Wan-Video/Wan2.2/tar.gz/<PIN>
             ($WANSTUDIO_REFERENCE_URL overrides: a mirror, or a file:// tarball for machines offline)
"""
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request

PIN = "42bf4cfaa384bc21833865abc2f9e6c0e67233dc"  # Wan-Video/Wan2.2, 2026-03-17
# The files the benches execute, as in the pinned snapshot.
SHA256 = {
    "wan/modules/model.py": "8b39115298ca7322806c19b3165b3f435a94fe4a58f0624aec24f8e7f4997432",
    "wan/modules/attention.py": "23fe7c6f6e4065242d95e5e188cb2d1a16bd283f05dca7e7e878977158fcfdbc",
    "wan/modules/vae2_1.py": "d0dfe9eccd0cdbcb37ffde9887579be58f4c1bb6fc2dbb1b72e8916e170df180",
    "wan/modules/vae2_2.py": "eab5ce4aa1ce03af2978f2a8e8364c419f5fbb8535d265ac86b0b02ddcf0c1f6",
    "wan/utils/fm_solvers_unipc.py": "0dec8c7ed17f6f2049275c6848113314da6ccec1c8db5bdc89df43c05c6038d9",
}


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def differing_files(repo):
    """The pinned files that are missing from `repo` or differ from the snapshot."""
    return [rel for rel, want in SHA256.items()
            if not os.path.isfile(os.path.join(repo, rel)) or _sha256(os.path.join(repo, rel)) != want]


def _fetch(dest):
    url = os.environ.get("WANSTUDIO_REFERENCE_URL", f"https://codeload.github.com/Wan-Video/Wan2.2/tar.gz/{PIN}")
    print(f"reference: fetching Wan2.2 {PIN[:12]} from {url}", file=sys.stderr)
    parent = os.path.dirname(dest)
    os.makedirs(parent, exist_ok=True)
    # Unpacked beside the cache under a unique name and renamed into place when complete: an
    # interrupted fetch leaves no half snapshot behind.
    work = tempfile.mkdtemp(prefix=".Wan2.2-", dir=parent)
    try:
        archive = os.path.join(work, "snapshot.tar.gz")
        with urllib.request.urlopen(url, timeout=120) as r, open(archive, "wb") as f:
            shutil.copyfileobj(r, f)
        with tarfile.open(archive) as t:
            # Only the Python package: the snapshot's wan/ folder, regular files, no links.
            members = [m for m in t.getmembers()
                       if (m.isfile() or m.isdir()) and "/wan/" in f"/{m.name}/" and ".." not in m.name.split("/")]
            for m in members:
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                if not rel.startswith("wan/") and rel != "wan":
                    continue
                target = os.path.join(work, "tree", rel)
                if m.isdir():
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with t.extractfile(m) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
        bad = differing_files(os.path.join(work, "tree"))
        if bad:
            sys.exit(f"reference: the fetched snapshot does not match the pinned files: {', '.join(bad)}")
        os.replace(os.path.join(work, "tree"), dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def wan22_checkout(repo=None):
    """The folder to import the reference from: `repo` when given (a warning when its files are not
    the pinned ones), else the pinned snapshot, fetched once. Returns (folder, matches_pin)."""
    if repo:
        bad = differing_files(repo)
        if bad:
            print(f"reference: {repo} differs from the pinned Wan2.2 {PIN[:12]} in {', '.join(bad)}",
                  file=sys.stderr)
        return repo, not bad
    cache = os.environ.get("WANSTUDIO_REFERENCE_CACHE",
                           os.path.join(os.path.expanduser("~"), ".cache", "wanstudio", "reference"))
    dest = os.path.join(cache, f"Wan2.2-{PIN}")
    if not os.path.isdir(dest) or differing_files(dest):
        shutil.rmtree(dest, ignore_errors=True)
        _fetch(dest)
    return dest, True
