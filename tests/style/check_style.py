#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The house rules a reviewer should not have to repeat, checked on every source of the tree:

  1. every source file (C++, CMake, shell, Python) names its licence in an SPDX line near the top;
  2. no non-test C++ source is over 500 lines (split it along what the code does);
  3. every C++ file is formatted as .clang-format says (skipped, with a note, when clang-format
     is not installed; packaging/deps.sh installs it).

check_style.py ROOT     checks the tree and lists each breach on a line of its own
check_style.py --selftest   plants one breach of each kind in a scratch tree and requires it reported
"""
import os
import shutil
import subprocess
import sys
import tempfile

SPDX = "SPDX-License-Identifier: Apache-2.0"
MAX_LINES = 500
CXX = (".cpp", ".h", ".hpp")
SCRIPTS = (".sh", ".py", ".cmake")
SKIP_DIRS = {".git", ".venv", ".device", "out", "__pycache__"}
SKIP_PATHS = {os.path.join("tests", "data")}  # the reference fixtures, not this project's sources


def sources(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")
                         and os.path.normpath(os.path.join(rel, x)) not in SKIP_PATHS)
        for f in sorted(files):
            if f.endswith(CXX + SCRIPTS) or f == "CMakeLists.txt":
                yield os.path.join(d, f)


def is_test(rel):
    return rel.startswith("tests" + os.sep)


def check(root, clang_format=None):
    problems = []
    cxx = []
    for path in sources(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if not any(SPDX in line for line in lines[:3]):
            problems.append(f"{rel}: no '{SPDX}' line in its first three lines")
        if path.endswith(CXX):
            cxx.append(path)
            n = len(lines) - (1 if lines and lines[-1] == "" else 0)
            if not is_test(rel) and n > MAX_LINES:
                problems.append(f"{rel}: {n} lines, over {MAX_LINES}")
    if clang_format and cxx:
        for i in range(0, len(cxx), 64):
            batch = cxx[i:i + 64]
            r = subprocess.run([clang_format, "--dry-run", "-Werror", "--style=file"] + batch,
                               cwd=root, capture_output=True, text=True)
            for line in r.stderr.splitlines():
                if "error:" in line and line.startswith("/"):
                    rel = os.path.relpath(line.split(":", 1)[0], root)
                    msg = f"{rel}: not formatted as .clang-format says (clang-format -i {rel})"
                    if msg not in problems:
                        problems.append(msg)
    return problems


def selftest():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "engine", "data"))
        os.makedirs(os.path.join(tmp, "tests", "data"))
        here = os.path.dirname(os.path.abspath(__file__))
        shutil.copy(os.path.join(here, "..", "..", ".clang-format"), tmp)
        good = f"// {SPDX}\nint f() {{ return 1; }}\n"
        files = {
            "engine/good.cpp": good,
            "engine/nolicence.cpp": "int g() { return 2; }\n",
            "engine/long.cpp": f"// {SPDX}\n" + "int x;\n" * 520,
            "engine/ugly.cpp": f"// {SPDX}\nint   h( ) {{return 3 ;}}\n",
            "engine/CMakeLists.txt": "add_library(x good.cpp)\n",
            "engine/data/nolicence.h": "int k();\n",  # a folder named data is still source
            "tests/data/fixture.py": "x = 1\n",  # the fixtures are not
        }
        for rel, text in files.items():
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
        cf = shutil.which("clang-format")
        got = "\n".join(check(tmp, cf))
        want = ["engine/nolicence.cpp: no", "engine/long.cpp: 521 lines", "engine/CMakeLists.txt: no",
                "engine/data/nolicence.h: no"]
        if cf:
            want.append("engine/ugly.cpp: not formatted")
        missing = [w for w in want if w not in got]
        wrong = [w for w in ("good.cpp", "fixture.py") if w in got]
        if missing or wrong:
            print("selftest failed; reported:\n" + got + "\nmissing: " + ", ".join(missing + wrong))
            return 1
        print("selftest: every planted breach reported" + ("" if cf else " (no clang-format: format not checked)"))
        return 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    cf = shutil.which("clang-format")
    problems = check(root, cf)
    for p in problems:
        print(p)
    if not cf:
        print("note: clang-format not found, formatting not checked (packaging/deps.sh installs it)")
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
