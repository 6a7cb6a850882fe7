#!/usr/bin/env python3
"""Side-by-side benchmark of Onyx and ONNX Runtime 1.30 (onnxruntime-node).

For each model and thread count both engines load the model in their own worker process
(bench/compare/onyx_worker.cc, tools/ort_reference/ort_worker.js), their outputs on the same
inputs are checked against each other, and then they run alternately, one run each per round
(A B B A ...), so machine noise hits both alike. Reports medians, the ORT/Onyx ratio, p90s,
session-creation times and peak memory, and writes the table to bench/RESULTS.md. Where the
outputs disagree, both engines are also measured against the model evaluated in float64
(float64_reference.py), the nearest thing to the exact answer.

  bench/compare/compare.py [--models a,b] [--threads 1,2] [--rounds 20] [--warmup 3] [--no-float64]
"""
import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
import onyx_harness  # noqa: E402
import float64_reference  # noqa: E402  (beside this file, so on sys.path when run as a script)

REAL_MODELS = {
    "ppocr_det": ("ch_PP-OCRv4_det_infer.onnx", lambda rng: {"x": rng.standard_normal((1, 3, 640, 640), np.float32)}),
    "ppocr_rec": ("ch_PP-OCRv4_rec_infer.onnx", lambda rng: {"x": rng.standard_normal((1, 3, 48, 320), np.float32)}),
    "ppocr_cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx",
                  lambda rng: {"x": rng.standard_normal((1, 3, 48, 192), np.float32)}),
    "silero_vad": ("silero_vad_v5.onnx", lambda rng: {
        "input": rng.uniform(-0.5, 0.5, (1, 512)).astype(np.float32),
        "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}),
}
BENCH_MODELS = ["resnet50", "mobilenetv2", "efficientnet_b0", "bert_base", "bert_tiny", "gpt2_small", "vit_tiny",
                "yolo_like"]


class Worker:
    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.create_ms = float(self._expect("ready"))

    def _expect(self, word):
        line = self.proc.stdout.readline().strip()
        if not line.startswith(word):
            self.proc.kill()
            raise RuntimeError(f"worker said: {line or '(nothing)'}")
        return line[len(word):].strip()

    def ask(self, command, answer):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._expect(answer)

    def run(self):
        return float(self.ask("run", "ms"))

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def model_cases(names):
    cases = []
    for name in names:
        if name in REAL_MODELS:
            file, make = REAL_MODELS[name]
            path = onyx_harness.require_shared("models", "real", file)
            cases.append((name, path, make(np.random.default_rng(0))))
        else:
            folder, manifest = onyx_harness.bench_manifest()
            entry = manifest[name]
            cases.append((name, os.path.join(folder, entry["file"]), onyx_harness.bench_feeds(entry)))
    return cases


def outputs_off(dir_a, dir_b):
    """(elements outside rtol 1e-3 / atol 1e-4, elements in all, max abs diff, first file off)."""
    off = total = 0
    worst, first = 0.0, ""
    for f in sorted(f for f in os.listdir(dir_a) if f.endswith(".npy")):
        a, b = np.load(os.path.join(dir_a, f)), np.load(os.path.join(dir_b, f))
        if a.shape != b.shape:
            return a.size, a.size, math.inf, f
        total += a.size
        if a.dtype.kind not in "fc":
            n = int(np.count_nonzero(a != b))
        else:
            diff = np.abs(a.astype(np.float64) - b)
            n = int(np.count_nonzero(~(diff <= 1e-4 + 1e-3 * np.abs(a))))
            worst = max(worst, float(np.max(diff))) if a.size else worst
        off += n
        if n and not first:
            first = f
    return off, total, worst, first


def saved_outputs(folder):
    """The outputs a worker saved as <i>_<name>.npy, in model order."""
    files = sorted((f for f in os.listdir(folder) if f.endswith(".npy")), key=lambda f: int(f.split("_", 1)[0]))
    return [np.load(os.path.join(folder, f)) for f in files]


def float64_note(onyx_outputs, ort_outputs, reference, reason=None):
    """How far each engine is from the float64 evaluation (values off by the same rule, mean abs
    error), or why there is no such evaluation."""
    if reference is None:
        return f"; no float64 reference: {reason}".replace("|", "/")
    onyx_off, onyx_err = float64_reference.deviation(onyx_outputs, reference)
    ort_off, ort_err = float64_reference.deviation(ort_outputs, reference)
    return f"; vs float64: Onyx {onyx_off} off (mean err {onyx_err:.1e}), ORT {ort_off} off (mean err {ort_err:.1e})"


def compare_outputs(ort_dir, onyx_dir, ort_unoptimized_dir=None, float64=None):
    """Whether Onyx's outputs are within rtol 1e-3 / atol 1e-4 of ORT's, and a note. Where they are
    not, the note puts the count beside how far ORT's own outputs move when ORT runs the same
    model with its graph optimizations disabled (ort_unoptimized_dir), i.e. float rounding that
    depends on how the model is evaluated, and, given float64 = (outputs or None, reason), how
    far each engine is from the model evaluated in float64."""
    off, total, worst, first = outputs_off(ort_dir, onyx_dir)
    if not off:
        return True, f"max abs diff {worst:.2e}"
    note = f"{first}: {off} of {total} values off, max abs diff {worst:.2e}"
    if ort_unoptimized_dir is not None:
        own_off, _, own_worst, _ = outputs_off(ort_dir, ort_unoptimized_dir)
        note += f"; ORT unoptimized vs ORT: {own_off} off, max {own_worst:.2e}"
    if float64 is not None:
        note += float64_note(saved_outputs(onyx_dir), saved_outputs(ort_dir), *float64)
    return False, note


def float64_outputs(name, path, feeds, threads, args, tmp):
    """(outputs, None) or (None, reason) of the model evaluated in float64; computed once per
    model (it does not depend on the thread count) and not at all with --no-float64."""
    if args.no_float64:
        return None
    if name not in args.float64_cache:
        folder = os.path.join(tmp, name + "_float64")
        os.makedirs(folder, exist_ok=True)
        args.float64_cache[name] = float64_reference.run_float64(path, feeds, folder, args.onyx, threads)
    return args.float64_cache[name]


def measure(name, path, feeds, threads, args, tmp):
    specs = []
    for i, (input_name, array) in enumerate(feeds.items()):
        file = os.path.join(tmp, f"{name}_in{i}.npy")
        np.save(file, array)
        specs.append(f"{input_name}={file}")
    # The engine made first pays alone for what the first load of a model costs the machine
    # (reading the file, first touches of fresh memory): which one goes first alternates by row.
    make_onyx = lambda: Worker([args.worker, path, str(threads), args.opt_level] + specs)
    make_ort = lambda: Worker(["node", os.path.join(REPO, "tools", "ort_reference", "ort_worker.js"), args.ort_dir,
                               path, str(threads), args.opt_level] + specs)
    args.rows_measured = getattr(args, "rows_measured", 0) + 1
    first, second = (make_onyx, make_ort) if args.rows_measured % 2 == 1 else (make_ort, make_onyx)
    made_first = first()
    try:
        made_second = second()
    except Exception:
        made_first.close()
        raise
    onyx, ort = (made_first, made_second) if first is make_onyx else (made_second, made_first)
    try:
        a_dir, b_dir = os.path.join(tmp, name + "_onyx"), os.path.join(tmp, name + "_ort")
        onyx.ask(f"save {a_dir}", "saved")
        ort.ask(f"save {b_dir}", "saved")
        agree, detail = compare_outputs(b_dir, a_dir)
        if not agree:
            c_dir = os.path.join(tmp, name + "_ort_unoptimized")
            unoptimized = Worker(["node", os.path.join(REPO, "tools", "ort_reference", "ort_worker.js"), args.ort_dir,
                                  path, str(threads), "disabled"] + specs)
            try:
                unoptimized.ask(f"save {c_dir}", "saved")
            finally:
                unoptimized.close()
            agree, detail = compare_outputs(b_dir, a_dir, c_dir, float64_outputs(name, path, feeds, threads, args, tmp))
        for _ in range(args.warmup):
            onyx.run()
            ort.run()
        t_onyx, t_ort = [], []
        for r in range(args.rounds):
            order = (onyx, ort) if r % 2 == 0 else (ort, onyx)
            for w in order:
                # The other engine's pool may still be spinning from its run (ONNX Runtime's
                # workers measured busy for 20-30 ms after one); let it go to sleep so it does
                # not take a core from this one.
                time.sleep(args.gap_ms / 1000.0)
                (t_onyx if w is onyx else t_ort).append(w.run())
        return {
            "model": name, "threads": threads, "agree": agree, "agree_detail": detail,
            "onyx_median": statistics.median(t_onyx), "ort_median": statistics.median(t_ort),
            "onyx_p90": float(np.percentile(t_onyx, 90)), "ort_p90": float(np.percentile(t_ort, 90)),
            "onyx_create_ms": onyx.create_ms, "ort_create_ms": ort.create_ms,
            "onyx_rss_mb": float(onyx.ask("stats", "rss_mb")), "ort_rss_mb": float(ort.ask("stats", "rss_mb")),
        }
    finally:
        onyx.close()
        ort.close()


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def table(results, args):
    lines = [
        f"# Onyx vs ONNX Runtime 1.30 (CPU)",
        "",
        f"Date: {datetime.date.today().isoformat()}; CPU: {cpu_name()}, {os.cpu_count()} logical cores; "
        f"optimization level {args.opt_level}; {args.rounds} alternating rounds after {args.warmup} warm-ups; "
        "times in ms (wall time of one Run inside each engine's worker; ORT's includes onnxruntime-node copying "
        "outputs into JS). Peak RSS is the whole worker process (Node's own runtime included for ORT). "
        "Session creation: the engine created first alternates from row to row (Onyx on the first).",
        f"Command: `bench/compare/compare.py --threads {args.threads} --rounds {args.rounds}` "
        f"({args.gap_ms:g} ms idle before each run, so neither engine's spinning threads take a core from the other)",
        "",
        "| model | threads | Onyx median | ORT median | ORT/Onyx | Onyx p90 | ORT p90 | Onyx create | ORT create "
        "| Onyx RSS MB | ORT RSS MB | outputs agree |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    ratios = []
    for r in results:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['threads']} | error: {r['error']} |||||||||| |")
            continue
        ratio = r["ort_median"] / r["onyx_median"]
        ratios.append(ratio)
        lines.append(
            f"| {r['model']} | {r['threads']} | {r['onyx_median']:.2f} | {r['ort_median']:.2f} | {ratio:.2f} | "
            f"{r['onyx_p90']:.2f} | {r['ort_p90']:.2f} | {r['onyx_create_ms']:.0f} | {r['ort_create_ms']:.0f} | "
            f"{r['onyx_rss_mb']:.0f} | {r['ort_rss_mb']:.0f} | {'yes' if r['agree'] else 'NO'} ({r['agree_detail']}) |")
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        # Three decimals: the targets are thresholds (1.3, 1.0) that two would round across.
        lines += ["", f"Geometric mean of ORT/Onyx over {len(ratios)} rows: **{geo:.3f}**; "
                      f"lowest {min(ratios):.3f}."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(BENCH_MODELS + list(REAL_MODELS)))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--opt-level", default="all")
    ap.add_argument("--gap-ms", type=float, default=50.0,
                    help="idle time before each run, so the other engine's spinning threads sleep")
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "RESULTS.md"))
    ap.add_argument("--json", default="", help="also write the raw results here")
    ap.add_argument("--no-float64", action="store_true",
                    help="where outputs disagree, skip measuring both engines against the model evaluated in "
                         "float64 by Onyx's unoptimized double kernels (one extra, slow run per such model)")
    args = ap.parse_args()
    args.worker = os.path.join(args.build, "bench", "onyx_bench_worker")
    args.ort_dir = os.path.join(args.build, "ort-cache")
    args.onyx = os.path.join(args.build, "tools", "onyx", "onyx")
    args.float64_cache = {}
    os.environ.setdefault("ONYX_WORK_DIR", os.path.join(args.build, "test-work"))
    onyx_harness.WORK_ROOT = os.environ["ONYX_WORK_DIR"]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, feeds in model_cases(args.models.split(",")):
            for threads in [int(t) for t in args.threads.split(",")]:
                try:
                    r = measure(name, path, feeds, threads, args, tmp)
                except Exception as e:  # a model Onyx cannot run yet still gets a row
                    r = {"model": name, "threads": threads, "error": str(e).splitlines()[0][:120]}
                results.append(r)
                print(json.dumps(r), flush=True)
    text = table(results, args)
    print(text)
    with open(args.out, "w") as f:
        f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
