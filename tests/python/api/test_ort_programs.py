"""Programs written for ONNX Runtime, run unchanged with `ort` = onnxruntime and `ort` = onyx on the
real and benchmark models: the outputs must agree (rtol 1e-3, atol 1e-4)."""
import collections
import json
import os
import warnings

import numpy as np
import onnxruntime
import pytest

import onyx
import onyx_harness


def real_model(name, feeds):
    return lambda: (onyx_harness.require_shared("models", "real", name), feeds())


def bench_model(name):
    def load():
        folder, manifest = onyx_harness.bench_manifest()
        entry = manifest[name]
        return os.path.join(folder, entry["file"]), onyx_harness.bench_feeds(entry)
    return load


MODELS = {
    "ppocr_cls": real_model("ch_ppocr_mobile_v2.0_cls_infer.onnx",
                            lambda: {"x": np.random.default_rng(0).standard_normal((1, 3, 48, 192), dtype=np.float32)}),
    "silero_vad": real_model("silero_vad_v5.onnx", lambda: {
        "input": np.random.default_rng(1).uniform(-0.5, 0.5, (1, 512)).astype(np.float32),
        "state": np.zeros((2, 1, 128), np.float32), "sr": np.array(16000, np.int64)}),
    "bert_tiny": bench_model("bert_tiny"),
    "mobilenetv2": bench_model("mobilenetv2"),
}


# --- The programs: plain ONNX Runtime code, given the module as `ort`. ---

def program_every_knob(ort, path, feeds, folder):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.optimized_model_filepath = os.path.join(folder, f"{ort.__name__}_optimized.onnx")
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 2
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.enable_cpu_mem_arena = False
    so.enable_mem_pattern = False
    so.enable_mem_reuse = True
    so.log_severity_level = 3
    so.log_verbosity_level = 0
    so.logid = "every-knob"
    so.use_deterministic_compute = True
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for arg in session.get_inputs():
        for dim in arg.shape:
            if isinstance(dim, str):
                so.add_free_dimension_override_by_name(dim, feeds[arg.name].shape[arg.shape.index(dim)])
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    ro = ort.RunOptions()
    ro.logid = "every-knob-run"
    ro.log_severity_level = 3
    everything = session.run(None, feeds, ro)
    first = session.run([session.get_outputs()[0].name], feeds)
    assert os.path.exists(so.optimized_model_filepath)
    return everything + first


def program_io_binding(ort, path, feeds, folder):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    shapes = [np.asarray(o).shape for o in session.run(None, feeds)]
    dtypes = [np.asarray(o).dtype for o in session.run(None, feeds)]
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value))
    buffers = [np.full(shape, np.nan if dtype.kind == "f" else 0, dtype) for shape, dtype in zip(shapes, dtypes)]
    for i, (out, buffer) in enumerate(zip(session.get_outputs(), buffers)):
        if i % 2 == 0:  # a raw pointer
            binding.bind_output(out.name, "cpu", 0, buffer.dtype, list(buffer.shape), buffer.ctypes.data)
        else:  # an OrtValue over the array
            binding.bind_ortvalue_output(out.name, ort.OrtValue.ortvalue_from_numpy(buffer))
    session.run_with_iobinding(binding)
    returned = [v.numpy() for v in binding.get_outputs()]
    for buffer, value in zip(buffers, returned):
        assert value.ctypes.data == buffer.ctypes.data  # the caller's buffer, written in place
    return buffers


def program_cuda_then_cpu(ort, path, feeds, folder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = ort.InferenceSession(path, providers=[("CUDAExecutionProvider", {"device_id": 0}),
                                                        "CPUExecutionProvider"])
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        assert any("Specified provider 'CUDAExecutionProvider' is not in available provider names" in str(w.message)
                   for w in caught)
    # CPU alone, or CUDA first where a GPU is (an Onyx build with CUDA on a machine without one falls back).
    assert session.get_providers()[-1] == "CPUExecutionProvider"
    return session.run(None, feeds)


def program_profile(ort, path, feeds, folder):
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(folder, f"{ort.__name__}_profile")
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    outputs = session.run(None, feeds)
    profile = session.end_profiling()
    per_op = collections.Counter()
    for event in json.load(open(profile)):
        if event.get("cat") == "Node":
            per_op[event["args"]["op_name"]] += event["dur"]
    assert per_op and all(us >= 0 for us in per_op.values())
    return outputs, per_op


PROGRAMS = [program_every_knob, program_io_binding, program_cuda_then_cpu]


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_onnxruntime(program, model):
    path, feeds = MODELS[model]()
    folder = onyx_harness._work_dir()
    expected = program(onnxruntime, path, feeds, folder)
    got = program(onyx, path, feeds, folder)
    onyx_harness.assert_outputs_close([np.asarray(e) for e in expected], [np.asarray(g) for g in got])


@pytest.mark.parametrize("model,family", [("ppocr_cls", ("Conv",)), ("bert_tiny", ("MatMul", "Attention", "Gemm"))])
def test_profile_program_summarizes_per_op_type(model, family):
    path, feeds = MODELS[model]()
    folder = onyx_harness._work_dir()
    expected, ort_ops = program_profile(onnxruntime, path, feeds, folder)
    got, onyx_ops = program_profile(onyx, path, feeds, folder)
    onyx_harness.assert_outputs_close([np.asarray(e) for e in expected], [np.asarray(g) for g in got])
    # The engines fuse differently, but the model's main op family is in both summaries.
    for ops in (ort_ops, onyx_ops):
        assert any(f in op for op in ops for f in family), dict(ops)
