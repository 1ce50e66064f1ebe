#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Alternates two benchmark commands (the engine's `wanstudio-engine bench ...` and a reference's
`packaging/bench_reference*.py ...`) for --rounds rounds, engine first in odd rounds and second in even
ones, and prints each run's figures, then one JSON line: the medians of both sides' times and peaks and
their ratios (engine / reference), the reference's torch version, and both commands.

  packaging/bench_pairs.py --rounds 3 \\
      --engine "build/engine/wanstudio-engine bench upsampler-train --mid_channels 512 --blocks 4" \\
      --reference ".venv/bin/python packaging/bench_reference.py --kind upsampler-train --mid-channels 512"

Each command prints one JSON object as its last stdout line (both sides do). The time is the first of
ms_per_step_median, ms_per_clip_median, ms_per_sample_median present, or 1000 / samples_per_s."""
import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time


def run(cmd):
    t0 = time.time()
    p = subprocess.run(shlex.split(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_pairs: '{cmd}' exited {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        sys.exit(f"bench_pairs: '{cmd}' printed no JSON line")
    out = json.loads(lines[-1])
    out["_wall_s"] = time.time() - t0
    return out


def ms(fig):
    for k in ("ms_per_step_median", "ms_per_clip_median", "ms_per_sample_median"):
        if k in fig:
            return float(fig[k])
    if "samples_per_s" in fig:
        return 1000.0 / float(fig["samples_per_s"])
    sys.exit(f"bench_pairs: no time in {fig}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    figs = {"engine": [], "reference": []}
    for r in range(a.rounds):
        order = ["engine", "reference"] if r % 2 == 0 else ["reference", "engine"]
        for side in order:
            f = run(a.engine if side == "engine" else a.reference)
            figs[side].append(f)
            print(f"round {r + 1} {side}: {ms(f):.1f} ms, peak {f.get('peak_rss_mb', 0):.0f} MB "
                  f"({f['_wall_s']:.0f} s)", file=sys.stderr, flush=True)
    med = {s: statistics.median(ms(f) for f in v) for s, v in figs.items()}
    peak = {s: statistics.median(f.get("peak_rss_mb", 0) for f in v) for s, v in figs.items()}
    pair_ratios = [ms(e) / ms(r) for e, r in zip(figs["engine"], figs["reference"])]
    print(json.dumps({"label": a.label, "rounds": a.rounds,
                      "engine_ms": [round(ms(f), 1) for f in figs["engine"]],
                      "reference_ms": [round(ms(f), 1) for f in figs["reference"]],
                      "engine_peak_mb": [round(f.get("peak_rss_mb", 0)) for f in figs["engine"]],
                      "reference_peak_mb": [round(f.get("peak_rss_mb", 0)) for f in figs["reference"]],
                      "time_ratio_median": round(med["engine"] / med["reference"], 3),
                      "pair_time_ratios": [round(x, 3) for x in pair_ratios],
                      "peak_ratio_median": round(peak["engine"] / peak["reference"], 3) if peak["reference"] else None,
                      "reference_torch": figs["reference"][0].get("torch", "?"),
                      # --breakdown on both sides: the last round's parts of the step.
                      "engine_breakdown": figs["engine"][-1].get("breakdown"),
                      "reference_breakdown": figs["reference"][-1].get("breakdown"),
                      "engine_cmd": a.engine, "reference_cmd": a.reference}))


if __name__ == "__main__":
    main()
