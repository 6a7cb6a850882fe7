"""The CUDA provider lives in its own library (libonyx_provider_cuda.so beside libonyx) that is
loaded only when something asks for CUDA: a CPU-only program never maps the CUDA runtime or
cuBLASLt, which would cost every process ~0.3 s and ~150 MB at start-up. Each check runs in a fresh
interpreter, since a library once loaded stays loaded."""
import os
import subprocess
import sys
import textwrap

import pytest

import onyx

BUILT_WITH_CUDA = "CUDAExecutionProvider" in onyx.get_available_providers()

PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    from onnx import TensorProto, helper
    import onyx

    nodes = [helper.make_node("Add", ["x", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    session = onyx.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": np.ones(2, np.float32)})[0].tolist() == [2.0, 2.0]
    onyx.get_available_providers()
    if sys.argv[1] == "cuda":
        onyx._C.provider_unavailable_reason("CUDAExecutionProvider")
    maps = open("/proc/self/maps").read()
    print(" ".join(name for name in ("libonyx_provider_cuda", "libcudart", "libcublasLt") if name in maps))
""")


def mapped_libraries(ask_for):
    proc = subprocess.run([sys.executable, "-c", PROGRAM, ask_for], capture_output=True, text=True,
                          env=dict(os.environ), timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_a_cpu_session_maps_no_cuda_library():
    assert mapped_libraries("cpu") == []


@pytest.mark.skipif(not BUILT_WITH_CUDA, reason="this build has no CUDA provider (ONYX_USE_CUDA off)")
def test_asking_for_cuda_loads_its_library():
    assert mapped_libraries("cuda") == ["libonyx_provider_cuda", "libcudart", "libcublasLt"]
