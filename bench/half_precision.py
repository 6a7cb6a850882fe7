#!/usr/bin/env python3
"""float32 against float16 and bfloat16 twins of bench models, in Onyx and ONNX Runtime.

The float16 twin is onnxruntime.transformers.float16.convert_float_to_float16 with float32 inputs
and outputs (an exporter's Casts around a float16 body); the bfloat16 twin is the same model with
every float16 type, initializer and Cast made bfloat16. Both engines run in this process through
their Python APIs, same inputs and thread count, one Onyx run then one ONNX Runtime run per round
(the engines' order and the twins' order alternating), and the medians and ratios are printed as a
Markdown table with the CPU model. A twin an engine cannot load or run gets that engine's error in
its cells.

  PYTHONPATH=<site with onyx>:tests/python bench/half_precision.py [--models mobilenetv2,bert_tiny]
      [--threads 1,2] [--rounds 20] [--warmup 3] [--models-dir DIR]
"""
import argparse
import os
import re
import statistics
import sys
import time

from bench_util import cpu_model

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))

# bfloat16_twin is also imported from here by tests/python/half_precision.
from model_variants import bfloat16_twin, build  # noqa: E402,F401


def make_twins(float_path, out_dir):
    """{float32, float16, bfloat16: path}; the twins built by bench/model_variants.py."""
    return {"float32": float_path, "float16": build("fp16", float_path, out_dir),
            "bfloat16": build("bf16", float_path, out_dir)}


def short_error(e):
    """An engine's error as a table cell: ONNX Runtime's status name, or the first words."""
    text = str(e).splitlines()[0]
    m = re.search(r"\[ONNXRuntimeError\] : \d+ : (\w+)", text)
    return f"error {m.group(1)}" if m else f"error: {text[:60]}"


def sessions(path, threads):
    """{engine: session or error text}."""
    import onnxruntime as ort
    import onyx
    result = {}
    try:
        so = onyx.SessionOptions()
        so.intra_op_num_threads = threads
        result["onyx"] = onyx.InferenceSession(path, so)
    except Exception as e:  # noqa: BLE001 (the error goes into the table)
        result["onyx"] = short_error(e)
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        result["ort"] = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        result["ort"] = short_error(e)
    return result


def bench_model(name, paths, feeds, threads, rounds, warmup):
    """{(kind, engine): median ms or error text}."""
    live, times = {}, {}
    for kind, path in paths.items():
        for engine, s in sessions(path, threads).items():
            if isinstance(s, str):
                times[(kind, engine)] = s
                continue
            try:
                for _ in range(warmup):
                    s.run(None, feeds)
                live[(kind, engine)] = s
                times[(kind, engine)] = []
            except Exception as e:  # noqa: BLE001
                times[(kind, engine)] = short_error(e)
    keys = sorted(live)
    for r in range(rounds):
        order = keys if r % 2 == 0 else list(reversed(keys))  # alternate engines and twins
        for key in order:
            # Idle first, so no engine's spinning intra-op threads take a core from the next
            # Run (as bench/compare does): without it the 2-thread rows ran on one core.
            time.sleep(0.05)
            t = time.perf_counter()
            live[key].run(None, feeds)
            times[key].append(1e3 * (time.perf_counter() - t))
    return {k: (statistics.median(v) if isinstance(v, list) else v) for k, v in times.items()}


def has_avx512_bf16():
    """Whether Onyx runs a bfloat16 twin's products on its bf16 GEMM here (docs/numerics.md)."""
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512_bf16" in f.read()
    except OSError:
        return False


def fmt(v):
    return f"{v:.2f}" if isinstance(v, float) else v


def ratio(a, b):
    return f"{a / b:.2f}" if isinstance(a, float) and isinstance(b, float) else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mobilenetv2,bert_tiny")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models-dir", default="", help="the generated bench models (default: the harness's)")
    args = ap.parse_args()

    import json
    import tempfile

    import onyx_harness
    folder = args.models_dir or onyx_harness.bench_models_dir()
    manifest = {m["name"]: m for m in json.load(open(os.path.join(folder, "manifest.json")))["models"]}
    print(f"CPU: {cpu_model()}; AVX-512 BF16 (bfloat16 products on the bf16 GEMM): {'yes' if has_avx512_bf16() else 'no'}\n")
    print("| model | threads | type | Onyx ms | ORT ms | ORT/Onyx | Onyx float32/this |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            entry = manifest[name]
            paths = make_twins(os.path.join(folder, entry["file"]), tmp)
            feeds = onyx_harness.bench_feeds(entry)
            for threads in (int(t) for t in args.threads.split(",")):
                res = bench_model(name, paths, feeds, threads, args.rounds, args.warmup)
                for kind in paths:
                    o, r = res[(kind, "onyx")], res[(kind, "ort")]
                    print(f"| {name} | {threads} | {kind} | {fmt(o)} | {fmt(r)} | {ratio(r, o)} | "
                          f"{ratio(res[('float32', 'onyx')], o)} |", flush=True)


if __name__ == "__main__":
    main()
