"""`onyx explain --providers CUDA,CPU` names CUDA's reason for each node it declines (issue 19's
check: a planted node CUDA has no kernel for in its dtype). In a build with the CUDA provider on a
machine without a GPU, the nodes are still placed as they would be with one (the capability needs
no device), with a note that a session here would fall back to CPU; in a build without it, the note
says CUDA is not in the build and every node names that."""
import json
import subprocess

from onnx import TensorProto, helper

import onyx
from onyx_harness import ONYX_BIN, save_model


def planted_model():
    # relu_float: CUDA has Relu in float; add_double: CUDA's Add has no double kernel;
    # neg: no CUDA kernel for Neg at all.
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu_float"),
             helper.make_node("Add", ["d", "d"], ["e"], name="add_double"),
             helper.make_node("Neg", ["r"], ["n"], name="neg")]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("d", TensorProto.DOUBLE, [2, 3])],
        [helper.make_tensor_value_info("n", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("e", TensorProto.DOUBLE, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return save_model(model, "explain_cuda_planted.onnx")


def explain(*args):
    proc = subprocess.run([ONYX_BIN, "explain", *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cuda_declines_a_double_add_and_says_why():
    model = planted_model()
    report = json.loads(explain(model, "--providers", "CUDA,CPU", "--json"))
    assert report["providers"] == ["CUDA", "CPU"]
    nodes = {n["name"]: n for n in report["nodes"]}
    if "CUDAExecutionProvider" not in onyx.get_available_providers():
        assert any("CUDA: not in this build" in note for note in report["notes"])
        assert all("not in this build" in n["declined"]["CUDA"] for n in report["nodes"])
        return
    assert nodes["add_double"]["provider"] == "CPU"
    assert nodes["add_double"]["declined"]["CUDA"] == (
        "unsupported dtype double (input 'd'): CUDA's Add kernel supports float, float16, bfloat16")
    assert nodes["neg"]["provider"] == "CPU"
    assert nodes["neg"]["declined"]["CUDA"] == "no CUDA kernel for op Neg"
    assert nodes["relu_float"]["provider"] == "CUDA" and nodes["relu_float"]["declined"] == {}
    if onyx._C.provider_unavailable_reason("CUDAExecutionProvider"):
        (note,) = [n for n in report["notes"] if n.startswith("CUDA: no CUDA device")]
        assert "cudaGetDeviceCount" in note and "fall back to CPU" in note

    text = explain(model, "--providers", "CUDA,CPU")
    assert "add_double (Add) on CPU\n    declined by CUDA: unsupported dtype double" in text
    assert "relu_float (Relu) on CUDA" in text


def test_cpu_first_leaves_cuda_nothing():
    report = json.loads(explain(planted_model(), "--providers", "CPU,CUDA", "--json"))
    assert all(n["provider"] == "CPU" and n["declined"] == {} for n in report["nodes"])
