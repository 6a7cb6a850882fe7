"""Session creation time, Onyx against ONNX Runtime (issue 18, item 3): for each model and
thread count, `--rounds` creations of each engine in turn (Onyx first, then ORT, repeated; the
model file is in the page cache after the first), medians in milliseconds and ORT / Onyx.

    ONYX_SHARED_DIR=../shared PYTHONPATH=<site with the onyx package>:tests/python \\
        .venv/bin/python bench/creation_time.py [--threads 1,2] [--rounds 7] [--models-dir DIR]

Models: the bench set (--models-dir, else onyx_harness.bench_models_dir(), generated from
../shared/models/bench) and the real models of ../shared/models/real."""
import argparse
import glob
import os
import statistics
import sys
import time
from bench_util import cpu_model

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))


def create_ms(module, path, threads):
    options = module.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    start = time.perf_counter()
    module.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return (time.perf_counter() - start) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--models-dir", default="")
    args = ap.parse_args()
    import onnxruntime
    import onyx
    import onyx_harness
    bench_dir = args.models_dir or onyx_harness.bench_models_dir()
    models = sorted(glob.glob(os.path.join(bench_dir, "*.onnx")))
    models += sorted(glob.glob(os.path.join(onyx_harness.require_shared("models", "real"), "*.onnx")))
    print(f"CPU: {cpu_model()}; {args.rounds} creations of each engine in turn, medians in ms\n")
    print("| model | threads | Onyx | ORT | ORT / Onyx |")
    print("|---|---:|---:|---:|---:|")
    for path in models:
        for threads in (int(t) for t in args.threads.split(",")):
            times = {"onyx": [], "ort": []}
            for _ in range(args.rounds):
                times["onyx"].append(create_ms(onyx, path, threads))
                times["ort"].append(create_ms(onnxruntime, path, threads))
            onyx_ms, ort_ms = statistics.median(times["onyx"]), statistics.median(times["ort"])
            print(f"| {os.path.basename(path)[:-5]} | {threads} | {onyx_ms:.1f} | {ort_ms:.1f} | {ort_ms / onyx_ms:.2f} |")


if __name__ == "__main__":
    main()
