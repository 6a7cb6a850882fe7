"""Asking for CUDAExecutionProvider as ONNX Runtime programs do. In a build with the CUDA provider on
a machine without a GPU, InferenceSession prints ONNX Runtime's "EP Error" banner, falls back to
CPU and retries (then fallback is off, as in ORT); with enable_fallback=0 or after
disable_fallback() it raises. Provider options reach the C++ provider and are checked there first:
an unknown key, a bad value or a value not honoured yet is InvalidArgument naming it, never dropped.
get_available_providers() lists CUDAExecutionProvider when it is compiled in and get_device() says
"GPU" then, as ORT's GPU package does."""
import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import onyx
from onyx.capi import onnxruntime_pybind11_state as state
from onyx_harness import save_model

BUILT_WITH_CUDA = "CUDAExecutionProvider" in onyx.get_available_providers()
NO_DEVICE = BUILT_WITH_CUDA and bool(onyx._C.provider_unavailable_reason("CUDAExecutionProvider"))
CUDA_FIRST = [("CUDAExecutionProvider", {"gpu_mem_limit": str(1 << 30), "arena_extend_strategy": "kSameAsRequested"}),
              "CPUExecutionProvider"]


def add_relu_model():
    nodes = [helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
                      "cuda_fallback_add_relu.onnx")


def feeds():
    return {"x": np.array([[-1, 2, -3], [4, -5, 6]], np.float32)}


def test_available_providers_and_device_follow_the_build():
    assert onyx.get_available_providers()[-1] == "CPUExecutionProvider"
    assert onyx.get_device() == ("GPU" if BUILT_WITH_CUDA else "CPU")
    # ORT's CPU package says CPU (its GPU package says GPU whatever the machine has).
    assert onnxruntime.get_device() == "CPU"


def test_cuda_first_falls_back_to_cpu_with_onnxruntimes_banner(capsys):
    session = onyx.InferenceSession(add_relu_model(), providers=CUDA_FIRST)
    out = capsys.readouterr().out
    expected = onnxruntime.InferenceSession(add_relu_model(), providers=["CPUExecutionProvider"]).run(None, feeds())
    np.testing.assert_allclose(session.run(None, feeds())[0], expected[0], rtol=1e-6)
    if not NO_DEVICE:
        # No CUDA in this build: ORT's "not in available provider names" warning path (test_session_api),
        # or a GPU here: CUDA takes the nodes.
        want = ["CUDAExecutionProvider", "CPUExecutionProvider"] if BUILT_WITH_CUDA else ["CPUExecutionProvider"]
        assert session.get_providers() == want
        return
    lines = out.splitlines()
    assert lines[0] == "*************** EP Error ***************"
    assert lines[1].startswith("EP Error CUDAExecutionProvider cannot be created: no usable device: cudaGetDeviceCount")
    assert lines[1].endswith(f" when using {CUDA_FIRST}")
    assert lines[2] == "Falling back to ['CPUExecutionProvider'] and retrying."
    assert lines[3] == "****************************************"
    assert session.get_providers() == ["CPUExecutionProvider"]
    # Fallback happens once: it is off afterwards, as in ONNX Runtime.
    with pytest.raises(RuntimeError, match="cudaGetDeviceCount"):
        session.set_providers(CUDA_FIRST)


def test_disabled_fallback_raises_naming_cuda_get_device_count():
    if not NO_DEVICE:
        # Without CUDA in the build: ORT's warning, then EPFail; with a GPU: a CUDA session.
        if BUILT_WITH_CUDA:
            session = onyx.InferenceSession(add_relu_model(), providers=CUDA_FIRST, enable_fallback=0)
            assert session.get_providers()[0] == "CUDAExecutionProvider"
        else:
            with pytest.warns(UserWarning), pytest.raises(state.EPFail, match="CUDAExecutionProvider"):
                onyx.InferenceSession(add_relu_model(), providers=CUDA_FIRST, enable_fallback=0)
        return
    with pytest.raises(RuntimeError, match="CUDAExecutionProvider cannot be created: .*cudaGetDeviceCount"):
        onyx.InferenceSession(add_relu_model(), providers=CUDA_FIRST, enable_fallback=0)
    session = onyx.InferenceSession(add_relu_model())
    session.disable_fallback()
    with pytest.raises(RuntimeError, match="cudaGetDeviceCount"):
        session.set_providers(["CUDAExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_bad_and_unhonoured_options_are_errors_naming_them():
    if not BUILT_WITH_CUDA:  # the options of a provider not in the build are dropped with ORT's warning
        with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
            session = onyx.InferenceSession(add_relu_model(), providers=[("CUDAExecutionProvider", {"x": "1"})])
        assert session.get_providers() == ["CPUExecutionProvider"]
        return
    for options, message in [({"gpu_mem_limt": "1"}, "unknown CUDAExecutionProvider option 'gpu_mem_limt'"),
                             ({"gpu_mem_limit": "-1"}, "gpu_mem_limit='-1'"),
                             ({"arena_extend_strategy": "kDouble"}, "kNextPowerOfTwo or kSameAsRequested"),
                             ({"cudnn_conv_algo_search": "HEURISTIC"}, "cudnn_conv_algo_search='HEURISTIC' is not honoured"),
                             ({"enable_cuda_graph": "1"}, "enable_cuda_graph='1' is not honoured"),
                             ({"prefer_nhwc": "1"}, "prefer_nhwc='1' is not honoured")]:
        with pytest.raises(state.InvalidArgument, match=message):
            onyx.InferenceSession(add_relu_model(), providers=[("CUDAExecutionProvider", options)])
        # The same through provider_options=.
        with pytest.raises(state.InvalidArgument, match=message):
            onyx.InferenceSession(add_relu_model(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"],
                                  provider_options=[options, {}])


def test_cpu_provider_options_are_still_refused():
    with pytest.raises(state.InvalidArgument, match="arena_extend_strategy"):
        onyx.InferenceSession(add_relu_model(), providers=[("CPUExecutionProvider", {"arena_extend_strategy": "1"})])
