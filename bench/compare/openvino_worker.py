#!/usr/bin/env python3
"""The OpenVINO side of bench/compare: the ONNX model read by OpenVINO's ONNX frontend and
compiled for its CPU plugin, in its own process (protocol: worker_protocol.py).
  openvino_worker.py MODEL THREADS NAME=FILE.npy...
PERFORMANCE_HINT LATENCY with INFERENCE_NUM_THREADS = THREADS, as a user after latency sets it,
and INFERENCE_PRECISION_HINT f32: on a CPU with AVX512_BF16 or AMX the plugin's default is bf16,
which would not compute the float32 model that the other engines compute. The model is compiled
as given: dynamic dimensions stay dynamic, as they do for the other engines."""
import sys

import openvino as ov

import worker_protocol


def output_name(port):
    # A port can carry several tensor names (an output that is also an inner tensor); ONNX's
    # graph output name is the one the other engines use, and OpenVINO gives it first.
    names = port.get_names()
    return port.get_any_name() if names else f"output{port.get_index()}"


def short_error(e):
    """OpenVINO's messages start with where in its source they were raised; the line that says
    what failed (for a model its ONNX frontend cannot convert, the summary of the ops) is kept."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    summary = [line for line in lines if line.startswith("-- Conversion is failed for:")]
    if summary:
        return "its ONNX frontend cannot convert " + summary[0].split(":", 1)[1].strip()
    return next((line for line in lines if not line.startswith(("Exception from", "Check "))), str(e))


def main():
    model, threads, *specs = sys.argv[1:]
    feeds = worker_protocol.read_feeds(specs)
    core = ov.Core()
    compiled = request = None

    def create():
        nonlocal compiled, request
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": int(threads),
                  "INFERENCE_PRECISION_HINT": "f32"}
        try:
            compiled = core.compile_model(core.read_model(model), "CPU", config)
        except RuntimeError as e:
            raise RuntimeError(short_error(e)) from e
        request = compiled.create_infer_request()
        return [output_name(port) for port in compiled.outputs]

    def run():
        # Inputs viewed in place and outputs left in the request's buffers, as ONNX Runtime's
        # run views its feeds; save copies them out.
        result = request.infer(feeds, share_inputs=True, share_outputs=True)
        return [result[port] for port in compiled.outputs]

    worker_protocol.serve(create, run)


if __name__ == "__main__":
    main()
