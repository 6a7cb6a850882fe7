#!/usr/bin/env python3
"""Onyx's latency per graph-optimization level (`onyx perf --opt-level`), per model.

Levels run in rotating order within each round (disabled, basic, extended, all; then basic,
extended, all, disabled; ...) so machine noise spreads over all of them; each cell is the median
of the per-round medians. Inputs are the benchmark inputs bench/compare uses. Writes a markdown
table to bench/LEVELS.md (or --out).

  bench/levels.py [--models a,b] [--threads 1] [--rounds 3] [--runs 5]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench", "compare"))
import compare  # noqa: E402  (model set and inputs shared with the side-by-side benchmark)

LEVELS = ["disabled", "basic", "extended", "all"]


def perf(onyx, path, specs, level, threads, runs):
    cmd = [onyx, "perf", path, "--threads", str(threads), "--opt-level", level, "--warmup", "1", "--runs", str(runs),
           "--json"]
    for spec in specs:
        cmd += ["--input", spec]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    result = json.loads(out)
    return result["latency_ms"]["median"], result["session_creation_ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(compare.BENCH_MODELS + list(compare.REAL_MODELS)))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--onyx", default=os.path.join(REPO, "build", "release", "tools", "onyx", "onyx"))
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "LEVELS.md"))
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, feeds in compare.model_cases(args.models.split(",")):
            specs = []
            for i, (input_name, array) in enumerate(feeds.items()):
                file = os.path.join(tmp, f"{name}_in{i}.npy")
                np.save(file, array)
                specs.append(f"{input_name}={file}")
            medians = {level: [] for level in LEVELS}
            for r in range(args.rounds):
                for level in LEVELS[r % 4:] + LEVELS[:r % 4]:
                    medians[level].append(perf(args.onyx, path, specs, level, args.threads, args.runs)[0])
            cells = {level: statistics.median(v) for level, v in medians.items()}
            rows.append((name, cells))
            print(name, " ".join(f"{level} {cells[level]:.2f}" for level in LEVELS), flush=True)

    lines = [f"# Onyx latency per optimization level ({datetime.date.today()})", "",
             f"CPU: {compare.cpu_name()}; "
             f"{args.threads} thread(s); median of {args.rounds} rounds x {args.runs} runs, levels in rotating order. "
             "Command: `bench/levels.py " + " ".join(sys.argv[1:]) + "`", "",
             "| model | disabled (ms) | basic (ms) | extended (ms) | all (ms) | disabled / all |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, c in rows:
        lines.append(f"| {name} | {c['disabled']:.2f} | {c['basic']:.2f} | {c['extended']:.2f} | {c['all']:.2f} | "
                     f"{c['disabled'] / c['all']:.2f} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
