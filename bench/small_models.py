#!/usr/bin/env python3
"""Small-image and 1-D conv look-alikes (issue 18): models built with onnx.helper in the shapes
real exports have, run in Onyx and ONNX Runtime, each in its own worker process (bench/compare's:
one process per engine, so one engine's spinning pool cannot take the other's core), alternating
run by run with an idle gap before each; prints each engine's median per Run, the ratio ORT/Onyx
(> 1: Onyx faster), the thread count and the CPU model.

  kws       keyword spotting: [1, 1, 76, 32] spectrogram, 3x3 convs (BN folded) + Relu + MaxPool,
            GlobalAveragePool, Gemm
  conv1d    a 1-D conv stack over [1, 80, 1000] (k5 then k3 convs, Relu, a stride-2 one), a k1 head
  bytes     a byte classifier: Gather of a [256, 64] embedding over 1024 bytes, Transpose,
            Conv1d k7 + Relu, GlobalMaxPool, Flatten, Gemm
  vit       a tiny ViT on [1, 3, 32, 32]: 4x4 stride-4 patch conv -> 64 tokens of 96, 4 layers of
            LayerNormalization, MatMul + Add, Softmax attention, Erf Gelu, as an exporter writes them

    python bench/small_models.py [--models kws,conv1d,bytes,vit] [--threads 1,2] [--rounds 40]
                                [--onyx-worker build/<dir>/bench/onyx_bench_worker]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from bench_util import cpu_model

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
COMPARE = os.path.join(HERE, "compare")
sys.path.insert(0, COMPARE)
from compare import Worker  # noqa: E402  (bench/compare's worker processes and line protocol)


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def const(self, array, prefix="c"):
        n = self.name(prefix)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def weight(self, shape, fan_in):
        return self.const((self.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), "w")

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower() + "_")
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv(self, x, cin, cout, kernel, stride=1, relu=True, group=1):
        k = list(kernel)
        w = self.weight([cout, cin // group] + k, cin // group * int(np.prod(k)))
        b = self.const((self.rng.standard_normal(cout) * 0.1).astype(np.float32), "b")  # BN folded
        pads = [(kk - 1) // 2 for kk in k] * 2
        y = self.node("Conv", [x, w, b], kernel_shape=k, strides=[stride] * len(k), pads=pads, group=group)
        return self.node("Relu", [y]) if relu else y

    def model(self, inputs, output, out_shape):
        graph = helper.make_graph(self.nodes, "small", inputs,
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_shape)], self.inits)
        return helper.make_model(graph, ir_version=9, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def kws():
    b = Builder(1)
    x = b.conv("x", 1, 32, (3, 3))
    x = b.conv(x, 32, 32, (3, 3))
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])  # 38x16
    x = b.conv(x, 32, 64, (3, 3))
    x = b.conv(x, 64, 64, (3, 3))
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])  # 19x8
    x = b.conv(x, 64, 128, (3, 3))
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x])
    x = b.node("Gemm", [x, b.weight([12, 128], 128), b.const(np.zeros(12, np.float32))], transB=1)
    feeds = {"x": np.random.default_rng(0).standard_normal([1, 1, 76, 32]).astype(np.float32)}
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 76, 32])], x, [1, 12]), feeds


def conv1d():
    b = Builder(2)
    x = b.conv("x", 80, 128, (5,))
    x = b.conv(x, 128, 128, (3,))
    x = b.conv(x, 128, 128, (3,), stride=2)
    x = b.conv(x, 128, 128, (3,))
    x = b.conv(x, 128, 128, (3,))
    x = b.conv(x, 128, 88, (1,), relu=False)
    x = b.node("Sigmoid", [x])
    feeds = {"x": np.random.default_rng(0).standard_normal([1, 80, 1000]).astype(np.float32)}
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 80, 1000])], x, [1, 88, 500]), feeds


def byte_classifier():
    b = Builder(3)
    table = b.weight([256, 64], 1)
    x = b.node("Gather", [table, "x"], axis=0)  # [1, 1024, 64]
    x = b.node("Transpose", [x], perm=[0, 2, 1])  # [1, 64, 1024]
    x = b.conv(x, 64, 128, (7,))
    x = b.conv(x, 128, 128, (7,), stride=2)
    x = b.node("GlobalMaxPool", [x])
    x = b.node("Flatten", [x])
    x = b.node("Gemm", [x, b.weight([2, 128], 128), b.const(np.zeros(2, np.float32))], transB=1)
    feeds = {"x": np.random.default_rng(0).integers(0, 256, [1, 1024]).astype(np.int64)}
    return b.model([helper.make_tensor_value_info("x", TensorProto.INT64, [1, 1024])], x, [1, 2]), feeds


def vit(dim=96, layers=4, heads=3):
    b = Builder(4)
    tokens, hd = 64, dim // heads
    x = b.node("Conv", ["x", b.weight([dim, 3, 4, 4], 48), b.const(np.zeros(dim, np.float32))], kernel_shape=[4, 4],
               strides=[4, 4])  # [1, dim, 8, 8]
    x = b.node("Reshape", [x, b.const(np.array([1, dim, tokens], np.int64))])
    x = b.node("Transpose", [x], perm=[0, 2, 1])  # [1, 64, dim]
    x = b.node("Add", [x, b.weight([1, tokens, dim], 50)])

    def layer_norm(t):
        return b.node("LayerNormalization", [t, b.const(np.ones(dim, np.float32)), b.const(np.zeros(dim, np.float32))],
                      axis=-1, epsilon=1e-5)

    def linear(t, cin, cout):
        return b.node("Add", [b.node("MatMul", [t, b.weight([cin, cout], cin)]), b.const(np.zeros(cout, np.float32))])

    for _ in range(layers):
        h = layer_norm(x)
        qkv = linear(h, dim, 3 * dim)
        qkv = b.node("Reshape", [qkv, b.const(np.array([1, tokens, 3, heads, hd], np.int64))])
        qkv = b.node("Transpose", [qkv], perm=[2, 0, 3, 1, 4])  # [3, 1, heads, tokens, hd]
        q, k, v = (b.node("Gather", [qkv, b.const(np.array(i, np.int64))], axis=0) for i in range(3))
        s = b.node("MatMul", [q, b.node("Transpose", [k], perm=[0, 1, 3, 2])])
        s = b.node("Mul", [s, b.const(np.array(hd ** -0.5, np.float32))])
        a = b.node("MatMul", [b.node("Softmax", [s], axis=-1), v])  # [1, heads, tokens, hd]
        a = b.node("Reshape", [b.node("Transpose", [a], perm=[0, 2, 1, 3]), b.const(np.array([1, tokens, dim], np.int64))])
        x = b.node("Add", [x, linear(a, dim, dim)])
        h = linear(layer_norm(x), dim, 4 * dim)
        erf = b.node("Erf", [b.node("Div", [h, b.const(np.array(np.sqrt(2.0), np.float32))])])
        h = b.node("Mul", [b.node("Mul", [h, b.node("Add", [erf, b.const(np.array(1.0, np.float32))])]),
                           b.const(np.array(0.5, np.float32))])
        x = b.node("Add", [x, linear(h, 4 * dim, dim)])
    x = b.node("ReduceMean", [layer_norm(x)], axes=[1], keepdims=0)
    x = b.node("Gemm", [x, b.weight([10, dim], dim), b.const(np.zeros(10, np.float32))], transB=1)
    feeds = {"x": np.random.default_rng(0).standard_normal([1, 3, 32, 32]).astype(np.float32)}
    return b.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])], x, [1, 10]), feeds


MODELS = {"kws": kws, "conv1d": conv1d, "bytes": byte_classifier, "vit": vit}


def measure(model, feeds, threads, args, tmp):
    """Medians (ms) of both engines, each in its own worker process (bench/compare's protocol), and
    the largest difference of their outputs."""
    path = os.path.join(tmp, "model.onnx")
    with open(path, "wb") as f:
        f.write(model)
    specs = []
    for i, (name, array) in enumerate(feeds.items()):
        np.save(os.path.join(tmp, f"in{i}.npy"), array)
        specs.append(f"{name}={os.path.join(tmp, f'in{i}.npy')}")
    workers = {"onyx": Worker([args.onyx_worker, path, str(threads), "all"] + specs),
               "ort": Worker([sys.executable, os.path.join(COMPARE, "ort_worker.py"), path, str(threads), "all"] + specs)}
    try:
        outs = {}
        for k, w in workers.items():
            w.ask(f"save {os.path.join(tmp, k)}", "saved")
            outs[k] = [np.load(os.path.join(tmp, k, f)) for f in sorted(os.listdir(os.path.join(tmp, k)))]
        diff = max(float(np.max(np.abs(a - b))) for a, b in zip(outs["onyx"], outs["ort"]))
        for _ in range(args.warmup):
            for w in workers.values():
                w.run()
        times = {k: [] for k in workers}
        for r in range(args.rounds):
            for k in (["onyx", "ort"] if r % 2 == 0 else ["ort", "onyx"]):
                time.sleep(args.gap_ms / 1000)  # the other engine's spinning workers go to sleep
                times[k].append(workers[k].run())
        return statistics.median(times["onyx"]), statistics.median(times["ort"]), diff
    finally:
        for w in workers.values():
            w.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--gap-ms", type=float, default=50.0, help="idle time before each run")
    p.add_argument("--onyx-worker", default=os.path.join(REPO, "build", "release", "bench", "onyx_bench_worker"))
    args = p.parse_args()
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    print(f"CPU: {cpu_model()}; load average at start {load}")
    print("| model | threads | Onyx ms | ORT ms | ORT/Onyx | max abs diff |")
    print("|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, feeds = MODELS[name]()
        for threads in (int(t) for t in args.threads.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                onyx_ms, ort_ms, diff = measure(model, feeds, threads, args, tmp)
            print(f"| {name} | {threads} | {onyx_ms:.3f} | {ort_ms:.3f} | {ort_ms / onyx_ms:.2f} | {diff:.1e} |",
                  flush=True)


if __name__ == "__main__":
    main()
