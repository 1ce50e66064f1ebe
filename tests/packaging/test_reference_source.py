#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""packaging/reference_source.py without the network: a snapshot whose files are not the pinned
ones is refused and leaves nothing in the cache; a named checkout that differs is reported."""
import io
import os
import subprocess
import sys
import tarfile
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
packaging = os.path.join(here, "..", "..", "packaging")
sys.path.insert(0, packaging)
import reference_source as rs  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    # A codeload-shaped tarball (one top folder) with a model.py that is not the pinned one.
    archive = os.path.join(tmp, "snap.tar.gz")
    with tarfile.open(archive, "w:gz") as t:
        for rel in rs.SHA256:
            data = b"# not the reference\n"
            info = tarfile.TarInfo(f"Wan2.2-{rs.PIN}/{rel}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, WANSTUDIO_REFERENCE_CACHE=cache, WANSTUDIO_REFERENCE_URL=f"file://{archive}")
    r = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {packaging!r});"
                        "import reference_source as rs; rs.wan22_checkout()"], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "does not match the pinned files" in r.stderr, (r.returncode, r.stderr)
    assert os.listdir(cache) == [], os.listdir(cache)  # no snapshot, no half-unpacked folder
    # A named checkout is used as it is, and said to differ.
    checkout = os.path.join(tmp, "checkout")
    os.makedirs(os.path.join(checkout, "wan", "modules"))
    open(os.path.join(checkout, "wan", "modules", "model.py"), "w").write("# a local edit\n")
    folder, pinned = rs.wan22_checkout(checkout)
    assert folder == checkout and not pinned
    assert "wan/modules/model.py" in rs.differing_files(checkout)
print("reference_source: ok")
