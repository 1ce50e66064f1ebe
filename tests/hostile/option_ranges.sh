#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every numeric option of every verb declares its range, and the real worker refuses NaN, inf,
# -1, 0 and 1e308 wherever the declaration does not admit them: exit 1, an `error:` line naming
# the option, nothing written. The walk starts from `schema` (the verbs, then each verb's options),
# so an option added tomorrow is covered without anyone writing a case for it.
source "$(dirname "$0")/../cli/lib/common.sh"
command -v python3 >/dev/null || fail "python3 is needed (packaging/deps.sh installs it)"
mkdir "$tmp/cwd"
python3 - "$engine" "$tmp/cwd" <<'PY' || exit 1
import concurrent.futures, json, math, os, subprocess, sys

engine, cwd = os.path.abspath(sys.argv[1]), sys.argv[2]
VALUES = ["nan", "inf", "-1", "0", "1e308"]


def schema(*words):
    out = subprocess.run([engine, "schema", *words], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"FAIL: schema {' '.join(words)} exited {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def admitted(opt, text):
    """Whether the option's declared rule takes this text (then it is not a hostile case)."""
    if opt["type"] == "enum":
        return text in opt.get("choices", [])
    try:
        v = float(text)
    except ValueError:
        return False
    if not math.isfinite(v):
        return False
    if opt["type"] == "int":
        if text.lower() != text or "e" in text or "." in text:
            return False
        if opt.get("multiple_of") and (int(v) - opt.get("remainder", 0)) % opt["multiple_of"]:
            return False
    return opt["min"] <= v <= opt["max"]


commands, problems = [], []
options = 0
for verb in schema()["verbs"]:
    s = schema(verb)
    subs = [[sub] for sub in s["subverbs"]] if "subverbs" in s else [[]]
    for sub in subs:
        opts = schema(verb, *sub)["options"] if sub else s["options"]
        cases = {}  # value -> options that must refuse it
        for o in opts:
            where = " ".join([verb, *sub]) + " --" + o["name"]
            if o["type"] in ("int", "float"):
                if "min" not in o or "max" not in o:
                    problems.append(f"{where}: a number without a declared range (min and max)")
                    continue
                values = VALUES
            elif o["type"] == "enum":
                values = ["nan"]
            else:
                continue
            options += 1
            for v in values:
                if not admitted(o, v):
                    cases.setdefault(v, []).append(o["name"])
        # One call per value and up to 15 options that must refuse it, each with an error line of
        # its own (the training verbs show their first 20 problems).
        for v, names in cases.items():
            for k in range(0, len(names), 15):
                cmd = [engine, verb, *sub]
                for n in names[k:k + 15]:
                    cmd += ["--" + n, v]
                commands.append((" ".join([verb, *sub]), v, names[k:k + 15], cmd))


def run(case):
    where, value, names, cmd = case
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=cwd, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [f"{where} (all options {value}): no answer in 60 s"]
    if r.returncode != 1:
        return [f"{where} (all options {value}): exit {r.returncode}, expected 1 (stderr: {r.stderr.strip()[:200]})"]
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    return [f"{where} --{n} {value}: no error line naming it and the value (stderr: {r.stderr.strip()[:300]})"
            for n in names if not any(f"--{n}:" in l and "got" in l for l in errors)]


with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for found in pool.map(run, commands):
        problems += found
left = os.listdir(cwd)
if left:
    problems.append(f"refused runs wrote into their folder: {left}")
for p in problems:
    print("FAIL:", p)
checked = sum(len(c[2]) for c in commands)
print(f"{checked} hostile values over {options} options in {len(commands)} calls; {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
echo ok
