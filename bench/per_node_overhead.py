#!/usr/bin/env python3
"""Per-node overhead (issue 18): a chain of N tiny elementwise nodes (Add, Mul, Sub with a [16]
constant, Relu, Neg, Abs, Sigmoid, Tanh) on float[1, 16], so the arithmetic is negligible and a
Run costs what the executor and the kernels' set-up cost per node. Onyx vs ONNX Runtime in one
process, same feeds, rounds alternating between the engines, for each intra-op thread count of
--threads (default 1; a second thread must cost a tiny node nothing: no kernel here splits work
this small); prints each engine's median time per Run and per node, the ratio ORT/Onyx, and the
CPU model.

    python bench/per_node_overhead.py [--nodes 100] [--rounds 15] [--calls 500] [--level all|disabled] [--threads 1,2]
"""
import argparse
import statistics
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

import onyx
from bench_util import cpu_model

OPS = ["Add", "Mul", "Relu", "Sub", "Neg", "Abs", "Sigmoid", "Tanh"]


def chain_model(nodes):
    body, constants, previous = [], [], "x"
    for i in range(nodes):
        op, out = OPS[i % len(OPS)], f"t{i}"
        if op in ("Add", "Mul", "Sub"):  # a [16] constant against [1, 16]: a broadcast, as a bias is
            constants.append(numpy_helper.from_array(np.full([16], 0.5 + i * 1e-3, np.float32), f"c{i}"))
            body.append(helper.make_node(op, [previous, f"c{i}"], [out]))
        else:
            body.append(helper.make_node(op, [previous], [out]))
        previous = out
    graph = helper.make_graph(body, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [1, 16])], constants)
    return helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def session(module, model, level, threads):
    so = module.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = {"all": module.GraphOptimizationLevel.ORT_ENABLE_ALL,
                                   "disabled": module.GraphOptimizationLevel.ORT_DISABLE_ALL}[level]
    return module.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--level", choices=["all", "disabled"], default="all")
    parser.add_argument("--threads", default="1", help="comma-separated intra-op thread counts")
    args = parser.parse_args()
    for threads in (int(t) for t in args.threads.split(",")):
        measure(args, threads)


def measure(args, threads):
    model = chain_model(args.nodes)
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)}
    sessions = {"onyx": session(onyx, model, args.level, threads),
                "onnxruntime": session(onnxruntime, model, args.level, threads)}
    got, expected = sessions["onyx"].run(None, feeds)[0], sessions["onnxruntime"].run(None, feeds)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    for sess in sessions.values():  # warm-up
        for _ in range(args.calls):
            sess.run(None, feeds)
    times = {name: [] for name in sessions}
    for _ in range(args.rounds):
        for name, sess in sessions.items():
            run = sess.run
            start = time.perf_counter_ns()
            for _ in range(args.calls):
                run(None, feeds)
            times[name].append((time.perf_counter_ns() - start) / args.calls / 1000.0)
    print(f"{cpu_model()}, {threads} thread(s), {args.nodes} nodes, optimization {args.level}, "
          f"{args.rounds} alternating rounds of {args.calls} runs")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:12s} {median:8.1f} us per run  {1000.0 * median / args.nodes:6.0f} ns per node")
    print(f"  ORT/Onyx {statistics.median(times['onnxruntime']) / statistics.median(times['onyx']):.2f}")

if __name__ == "__main__":
    main()
