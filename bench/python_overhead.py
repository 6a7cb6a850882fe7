#!/usr/bin/env python3
"""Python overhead of InferenceSession.run on a tiny model (Relu over float[1, 16]): Onyx vs
ONNX Runtime, same process, same feeds, rounds alternating between the engines; prints each
engine's median time per run() call and the ratio.

    python bench/python_overhead.py [--rounds 30] [--calls 2000]
"""
import argparse
import statistics
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper

import onyx


def tiny_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    return helper.make_model(graph, ir_version=10, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def session(module, model):
    so = module.SessionOptions()
    so.intra_op_num_threads = 1
    return module.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def time_calls(sess, feeds, calls):
    run = sess.run
    start = time.perf_counter_ns()
    for _ in range(calls):
        run(None, feeds)
    return (time.perf_counter_ns() - start) / calls / 1000.0  # µs per call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=2000, help="run() calls per round")
    args = parser.parse_args()
    model = tiny_model()
    feeds = {"x": np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)}
    engines = {"onyx": session(onyx, model), "onnxruntime": session(onnxruntime, model)}
    np.testing.assert_array_equal(engines["onyx"].run(None, feeds)[0], engines["onnxruntime"].run(None, feeds)[0])
    samples = {name: [] for name in engines}
    for name, sess in engines.items():
        time_calls(sess, feeds, args.calls // 10)  # warm-up
    for r in range(args.rounds):
        order = list(engines) if r % 2 == 0 else list(reversed(engines))
        for name in order:
            samples[name].append(time_calls(engines[name], feeds, args.calls))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    print(f"run() on Relu float[1,16], {args.rounds} alternating rounds of {args.calls} calls, median µs/call:")
    for name, m in medians.items():
        print(f"  {name:12s} {m:7.2f} µs")
    print(f"  ratio onnxruntime/onyx: {medians['onnxruntime'] / medians['onyx']:.2f}")


if __name__ == "__main__":
    main()
