#!/usr/bin/env python3
"""The ONNX Runtime side of bench/compare, on the `onnxruntime` Python package, in its own process
so its timings and a crash stay apart from the other engines (protocol: worker_protocol.py).
  ort_worker.py MODEL THREADS OPT_LEVEL NAME=FILE.npy...
OPT_LEVEL is disabled, basic, extended or all, as for onyx_bench_worker."""
import sys

import onnxruntime as ort

import worker_protocol

LEVELS = {"disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
          "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
          "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
          "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}


def main():
    model, threads, level, *specs = sys.argv[1:]
    feeds = worker_protocol.read_feeds(specs)
    session = None

    def create():
        nonlocal session
        options = ort.SessionOptions()
        options.graph_optimization_level = LEVELS[level]
        options.intra_op_num_threads = int(threads)
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return [o.name for o in session.get_outputs()]

    worker_protocol.serve(create, lambda: session.run(None, feeds))


if __name__ == "__main__":
    main()
