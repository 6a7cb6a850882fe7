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

import numpy as np
from bench_util import cpu_model

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))


def to_bfloat16_bits(a):
    """float32 array -> uint16 bfloat16 bits, rounded to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def bfloat16_twin(half_model):
    """The float16 model with bfloat16 in place of float16 everywhere."""
    import onnx
    from onnx import TensorProto, numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(half_model)

    def convert_tensor(t):
        if t.data_type != TensorProto.FLOAT16:
            return
        values = numpy_helper.to_array(t).astype(np.float32)
        name = t.name
        t.Clear()
        t.name = name
        t.data_type = TensorProto.BFLOAT16
        t.dims.extend(values.shape)
        t.raw_data = to_bfloat16_bits(values).tobytes()

    def convert_type(tp):
        if tp.HasField("tensor_type") and tp.tensor_type.elem_type == TensorProto.FLOAT16:
            tp.tensor_type.elem_type = TensorProto.BFLOAT16

    def convert_graph(g):
        for t in g.initializer:
            convert_tensor(t)
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            convert_type(vi.type)
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT16:
                    a.i = TensorProto.BFLOAT16
                if a.type == onnx.AttributeProto.TENSOR:
                    convert_tensor(a.t)
                if a.type == onnx.AttributeProto.GRAPH:
                    convert_graph(a.g)
                for sub in a.graphs:
                    convert_graph(sub)

    convert_graph(m.graph)
    return m


def make_twins(float_path, out_dir):
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16
    stem = os.path.splitext(os.path.basename(float_path))[0]
    half = convert_float_to_float16(onnx.load(float_path), keep_io_types=True)
    paths = {"float32": float_path}
    for kind, model in (("float16", half), ("bfloat16", bfloat16_twin(half))):
        paths[kind] = os.path.join(out_dir, f"{stem}_{kind}.onnx")
        onnx.save(model, paths[kind])
    return paths


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
