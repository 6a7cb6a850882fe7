"""How much slower a Run is when the process did something else just before it, for an int8
model and its float32 twin, in one process (docs/quantization.md, "int8 runs after idle").

bench/compare runs each engine after 50 ms of idle and the other engines' runs; back to back
(`onyx perf`) every Run finds the previous one's data in cache. For each model and thread count
this alternates, run by run, Runs that follow:
  b2b      another Run of the same session (warm)
  sleep    --gap-ms of sleep (bench/compare's protocol, less the other engines)
  spin     --gap-ms of a Python busy loop (the core stays busy, nothing of the model's is touched)
  warm     --gap-ms of sleep, then 3 ms of small numpy products (the core is busy again, the
           model's data still cold)
  pollute  a pass over --pollute-mb of memory, no gap (caches evicted, no idle)
and reports the median wall time, the caller thread's CPU time and the page faults per Run, plus
a control without Onyx: a numpy sum over a buffer of --control-mb after each kind of gap.

    PYTHONPATH=<site with the onyx package> .venv/bin/python bench/linalg/int8_after_idle.py \
        --models FLOAT.onnx,INT8.onnx[,...] [--threads 1,2] [--runs 30] [--gap-ms 50] \
        [--modes b2b,sleep,spin,warm,pollute] [--pollute-mb 32] [--control-mb 4]

The first model is the reference of the "first / model" ratios. Inputs: standard normal float32
of each model's first input's shape (symbolic dimensions 1)."""
import argparse
import os
import resource
import statistics
import time

import numpy as np
import onyx


def busy(seconds, step):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        step()


def make_gap(mode, args, junk, small):
    gap = args.gap_ms / 1000.0
    if mode == "sleep":
        return lambda: time.sleep(gap)
    if mode == "spin":
        return lambda: busy(gap, lambda: None)
    if mode == "warm":
        return lambda: (time.sleep(gap), busy(0.003, lambda: small @ small))
    if mode == "pollute":
        return lambda: np.add(junk, 1, out=junk)
    return None  # b2b: the gap is another Run, made by the caller


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="comma-separated .onnx paths; the first is the reference")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--gap-ms", type=float, default=50.0)
    ap.add_argument("--modes", default="b2b,sleep,spin,warm,pollute")
    ap.add_argument("--pollute-mb", type=int, default=32)
    ap.add_argument("--control-mb", type=int, default=4)
    args = ap.parse_args()
    models = args.models.split(",")
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in ("b2b", "sleep", "spin", "warm", "pollute")]
    if unknown:
        ap.error(f"unknown modes {unknown}")
    rng = np.random.default_rng(0)
    junk = np.ones(args.pollute_mb << 18, np.float32)
    small = rng.random((48, 48), dtype=np.float32)
    gaps = {m: make_gap(m, args, junk, small) for m in modes}

    control = np.ones(args.control_mb << 18, np.float32)
    line = []
    for mode in modes:
        times = []
        for _ in range(args.runs):
            control.sum()
            if gaps[mode] is None:
                control.sum()
            else:
                gaps[mode]()
            t0 = time.perf_counter()
            control.sum()
            times.append((time.perf_counter() - t0) * 1e3)
        line.append(f"{mode} {statistics.median(times):.3f}")
    print(f"control (numpy sum over {args.control_mb} MB, ms):", ", ".join(line))

    for threads in map(int, args.threads.split(",")):
        sessions = []
        for path in models:
            so = onyx.SessionOptions()
            so.intra_op_num_threads = threads
            s = onyx.InferenceSession(path, so)
            inp = s.get_inputs()[0]
            shape = [d if isinstance(d, int) and d > 0 else 1 for d in inp.shape]
            sessions.append((os.path.basename(path), s, {inp.name: rng.standard_normal(shape).astype(np.float32)}))
        wall = {(i, m): [] for i in range(len(sessions)) for m in modes}
        cpu = {k: [] for k in wall}
        faults = {k: 0 for k in wall}
        for r in range(args.runs + 2):
            for mode in modes:
                for i, (_, s, feeds) in enumerate(sessions):
                    if gaps[mode] is None:
                        s.run(None, feeds)
                    else:
                        gaps[mode]()
                    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    c0, t0 = time.thread_time(), time.perf_counter()
                    s.run(None, feeds)
                    t1, c1 = time.perf_counter(), time.thread_time()
                    if r >= 2:  # the first two rounds warm up
                        wall[(i, mode)].append((t1 - t0) * 1e3)
                        cpu[(i, mode)].append((c1 - c0) * 1e3)
                        faults[(i, mode)] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
        print(f"\n{threads} thread(s): median ms (wall / caller CPU), page faults per Run")
        print("| model | " + " | ".join(modes) + " |")
        print("|---|" + "---:|" * len(modes))
        for i, (name, _, _) in enumerate(sessions):
            cells = [f"{statistics.median(wall[(i, m)]):.2f} / {statistics.median(cpu[(i, m)]):.2f}"
                     f" ({faults[(i, m)] / args.runs:.0f})" for m in modes]
            print(f"| {name} | " + " | ".join(cells) + " |")
        for i, (name, _, _) in enumerate(sessions[1:], start=1):
            ratios = [statistics.median(wall[(0, m)]) / statistics.median(wall[(i, m)]) for m in modes]
            print(f"| {sessions[0][0]} / {name} | " + " | ".join(f"{x:.2f}" for x in ratios) + " |")


if __name__ == "__main__":
    main()
