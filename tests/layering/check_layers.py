#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering rule of docs/engineering.md ("Layers"), checked on the sources.

Every `#include "folder/file.h"` of a source under engine/, contract/, widgets/ or app/ must name a
folder its own folder may use (the table below mirrors the target_link_libraries of the CMake
files), and the toolkit rules hold: LibTorch only in the engine's torch layers, Qt only in the
studio and widgets, neither in the contract.

  check_layers.py [ROOT]       check the tree at ROOT (default: the repository); exit 1 on a violation
  check_layers.py --selftest   plant one violation of each kind in a scratch tree and require
                               that every one is reported (so this test can fail)
"""
import os
import re
import shutil
import sys
import tempfile

# folder -> folders its sources may include (itself always allowed). "widgets" means the flat
# headers of widgets/ ("option_schema.h").
ENGINE = {
    "engine/core": [],
    "engine/runtime": ["core", "contract"],
    "engine/video": ["core"],
    "engine/dataset": ["core", "video"],
    "engine/text": ["core"],
    "engine/caption": ["core"],
    "engine/io": ["core", "contract"],
    "engine/models": ["io", "core", "contract"],
    "engine/sampling": ["models", "io", "core", "contract"],
    "engine/data": ["dataset", "video", "io", "core", "contract"],
    "engine/parallel": ["core"],
    "engine/train": ["models", "sampling", "data", "dataset", "video", "io", "parallel", "runtime", "text", "core", "contract"],
    # Each trainer's room: the shared loop parts below it, never another trainer.
    **{f"engine/train/{t}": ["train", "models", "sampling", "data", "dataset", "video", "io", "parallel", "runtime",
                            "text", "core", "contract"] for t in ("experts", "upsampler", "vae")},
    "engine/cli": ["train/experts", "train/upsampler", "train/vae", "train", "models", "sampling", "data", "dataset",
                   "video", "io", "parallel", "runtime", "text", "caption", "core", "contract"],
}
STUDIO = {
    "contract": [],
    "widgets": ["contract", "video", "core"],
    "app/runfolder": ["contract"],
    "app/config": ["widgets", "contract", "core"],
    "app/jobs": ["runfolder", "config", "widgets", "contract", "core"],
    "app/item_models": ["jobs", "runfolder", "config", "widgets", "dataset", "text", "video", "contract", "core"],
    "app/pages": ["item_models", "jobs", "runfolder", "config", "widgets", "dataset", "video", "contract", "core"],
    "app/docks": ["item_models", "jobs", "runfolder", "widgets", "contract", "core"],
    "app/dialogs": ["jobs", "config", "runfolder", "widgets", "contract", "core"],
    "app": ["pages", "docks", "dialogs", "item_models", "jobs", "runfolder", "config", "widgets", "dataset",
            "video", "contract", "core"],
}
RULES = {**ENGINE, **STUDIO}
TORCH_FREE = {"engine/core", "engine/runtime", "engine/video", "engine/dataset", "engine/text", "engine/caption",
              "contract", "widgets"} | {k for k in STUDIO}
TORCH = re.compile(r"#\s*include\s*<(torch|ATen|c10|caffe2)/")
QT = re.compile(r"#\s*include\s*<(Q[A-Za-z]+|Qt[A-Za-z]*/|qcustomplot)")
QUOTED = re.compile(r'#\s*include\s*"([^"]+)"')


def owner(rel):
    """The rule folder of a source path, e.g. engine/train/x.cpp -> engine/train."""
    parts = rel.split("/")
    for n in (3, 2, 1):
        key = "/".join(parts[:n])
        if key in RULES and len(parts) > n:
            return key
    return None


def check(root, counted=None):
    problems = []
    widget_headers = set(os.listdir(os.path.join(root, "widgets"))) if os.path.isdir(os.path.join(root, "widgets")) else set()
    for top in ("engine", "contract", "widgets", "app"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                folder = owner(rel)
                if folder is None:
                    continue
                # A folder names itself as its includes do: "pages", "train/experts".
                own = folder[len("engine/"):] if folder.startswith("engine/") else folder.split("/")[-1]
                allowed = set(RULES[folder]) | {own}
                if counted is not None:
                    counted.append(rel)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        where = f"{rel}:{lineno}"
                        if TORCH.search(line) and folder in TORCH_FREE:
                            problems.append(f"{where}: {folder} must not include LibTorch ({line.strip()})")
                        if QT.search(line) and (folder.startswith("engine/") or folder == "contract"):
                            problems.append(f"{where}: {folder} must not include Qt ({line.strip()})")
                        m = QUOTED.search(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if "/" not in inc:
                            # A flat header: the folder's own, or one of widgets/.
                            if os.path.exists(os.path.join(dirpath, inc)):
                                continue
                            target = "widgets" if inc in widget_headers else None
                        else:
                            parts = inc.split("/")
                            # "train/experts/x.h" names the library folder train/experts.
                            nested = "/".join(parts[:2])
                            target = nested if len(parts) > 2 and "engine/" + nested in RULES else parts[0]
                        if target is None or target not in allowed:
                            problems.append(f"{where}: {folder} must not include \"{inc}\" "
                                            f"(it may use: {', '.join(sorted(allowed))})")
    return problems


def selftest():
    """Each planted violation must be reported; the clean scratch tree must pass."""
    plants = {
        "engine/train/upward.cpp": '#include "cli/verb.h"\n',
        "engine/io/torch_ok_but_upward.cpp": '#include "train/adamw.h"\n',
        "engine/models/qt.cpp": "#include <QString>\n",
        "contract/qt.cpp": "#include <QtCore/QString>\n",
        "contract/torch.cpp": "#include <torch/torch.h>\n",
        "app/pages/torch.cpp": "#include <ATen/ATen.h>\n",
        "widgets/torch.cpp": "#include <c10/core/Device.h>\n",
        "app/runfolder/upward.cpp": '#include "jobs/worker_job.h"\n',
        "engine/runtime/upward.cpp": '#include "train/lr_schedule.h"\n',
        "engine/train/into_trainer.cpp": '#include "train/experts/experts_options.h"\n',
        "engine/train/upsampler/sideways.cpp": '#include "train/experts/experts_options.h"\n',
    }
    scratch = tempfile.mkdtemp(prefix="ws_layers_")
    try:
        for folder in RULES:
            os.makedirs(os.path.join(scratch, folder), exist_ok=True)
        clean = {"engine/train/ok.cpp": '#include "io/weights.h"\n#include <torch/torch.h>\n',
                 "app/pages/ok.cpp": '#include "runfolder/run_events.h"\n#include <QWidget>\n',
                 "widgets/ok.cpp": '#include "contract/option_values.h"\n'}
        for rel, text in clean.items():
            with open(os.path.join(scratch, rel), "w") as f:
                f.write(text)
        if check(scratch):
            print("selftest: the clean scratch tree was reported:\n  " + "\n  ".join(check(scratch)))
            return 1
        failed = 0
        for rel, text in plants.items():
            path = os.path.join(scratch, rel)
            with open(path, "w") as f:
                f.write(text)
            found = [p for p in check(scratch) if p.startswith(rel + ":")]
            print(f"{'ok  ' if found else 'MISS'} {rel}: {found[0] if found else 'not reported'}")
            failed += not found
            os.remove(path)
        return 1 if failed else 0
    finally:
        shutil.rmtree(scratch)


def main(argv):
    if argv[1:2] == ["--selftest"]:
        return selftest()
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    files = []
    problems = check(os.path.abspath(root), files)
    for p in problems:
        print(p)
    print(f"layering: {len(files)} sources checked, {len(problems)} violation(s)")
    if len(files) < 100:
        print("layering: too few sources found; is ROOT the repository?")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
