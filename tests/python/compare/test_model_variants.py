"""bench/model_variants.py: a variant is built once into its work folder and reused while its float
model is unchanged, rebuilt when the float model changes, the same bytes from two builds (fixed
seeds), and really is the variant it names (ONNX Runtime runs it close to the float model)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onyx_harness

sys.path.insert(0, os.path.join(onyx_harness.REPO, "bench"))
import model_variants  # noqa: E402


def _cnn(path, seed=0):
    """Conv 3x3 + Relu + GlobalAveragePool + Flatten + Gemm: a CNN in miniature."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3, "w"),
             numpy_helper.from_array(rng.standard_normal(8).astype(np.float32) * 0.1, "b"),
             numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "fc"),
             numpy_helper.from_array(np.zeros(4, np.float32), "fcb")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"])]
    graph = helper.make_graph(nodes, "tiny_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _feeds():
    return {"x": np.random.default_rng(5).standard_normal((1, 3, 16, 16)).astype(np.float32)}


def _ort(path, feeds):
    import onnxruntime as ort
    return onyx_harness.ort_session(ort, path).run(None, feeds)[0]


def test_variant_is_built_once_and_reused(tmp_path, monkeypatch):
    float_path = _cnn(str(tmp_path / "tiny.onnx"))
    work = str(tmp_path / "work")
    calls = []
    calibration = lambda: calls.append(1) or model_variants.image_calibration(_feeds())
    path = model_variants.build("int8-qdq", float_path, work, calibration)
    assert calls == [1]
    ops = {n.op_type for n in onnx.load(path).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    stamp = os.stat(path).st_mtime_ns

    # The second request neither calibrates nor quantizes: it returns the file already there.
    def must_not_run(*a, **k):
        raise AssertionError("rebuilt a cached variant")
    monkeypatch.setattr(model_variants, "quantize_static", must_not_run)
    assert model_variants.build("int8-qdq", float_path, work, calibration) == path
    assert calls == [1] and os.stat(path).st_mtime_ns == stamp


def test_variant_is_rebuilt_when_its_float_model_changes(tmp_path):
    float_path = _cnn(str(tmp_path / "tiny.onnx"))
    work = str(tmp_path / "work")
    first = onnx.load(model_variants.build("fp16", float_path, work))
    _cnn(float_path, seed=1)  # other weights, same file name
    os.utime(float_path, ns=(1, 1))  # a different modification time even on a coarse clock
    second = onnx.load(model_variants.build("fp16", float_path, work))
    w = lambda m: numpy_helper.to_array(next(t for t in m.graph.initializer if t.name == "w"))
    assert w(first).dtype == np.float16
    assert not np.array_equal(w(first), w(second))
    assert np.array_equal(w(second), numpy_helper.to_array(
        next(t for t in onnx.load(float_path).graph.initializer if t.name == "w")).astype(np.float16))


def test_builds_are_deterministic(tmp_path):
    float_path = _cnn(str(tmp_path / "tiny.onnx"))
    calibration = lambda: model_variants.image_calibration(_feeds())
    a = model_variants.build("int8-qop", float_path, str(tmp_path / "a"), calibration)
    b = model_variants.build("int8-qop", float_path, str(tmp_path / "b"), calibration)
    assert open(a, "rb").read() == open(b, "rb").read()


def test_variants_are_what_they_name(tmp_path):
    float_path = _cnn(str(tmp_path / "tiny.onnx"))
    work = str(tmp_path / "work")
    feeds = _feeds()
    expected = _ort(float_path, feeds)
    calibration = lambda: model_variants.image_calibration(feeds)
    paths = {v: model_variants.build(v, float_path, work, calibration, model="mobilenetv2")
             for v in ("int8-qop", "int8-dynamic", "fp16", "bf16")}
    assert "QLinearConv" in {n.op_type for n in onnx.load(paths["int8-qop"]).graph.node}
    assert "ConvInteger" in {n.op_type for n in onnx.load(paths["int8-dynamic"]).graph.node}
    for v in ("int8-qop", "int8-dynamic", "fp16"):
        got = _ort(paths[v], feeds)
        assert got.dtype == np.float32  # float32 I/O kept
        assert float(np.abs(got - expected).max()) <= 0.05 * float(np.abs(expected).max()), v
    bf16 = onnx.load(paths["bf16"])
    types = {t.data_type for t in bf16.graph.initializer}
    assert TensorProto.BFLOAT16 in types and TensorProto.FLOAT16 not in types
    w = next(t for t in bf16.graph.initializer if t.name == "w")
    bits = np.frombuffer(w.raw_data, np.uint16).astype(np.uint32) << 16
    w32 = numpy_helper.to_array(next(t for t in onnx.load(float_path).graph.initializer if t.name == "w"))
    # bfloat16 of the float16-rounded weight: within bfloat16's half ulp (2^-9) plus float16's.
    assert np.allclose(bits.view(np.float32).reshape(w32.shape), w32, rtol=2 ** -8, atol=1e-4)


def test_static_forms_need_calibration_and_unknown_names_fail(tmp_path):
    float_path = _cnn(str(tmp_path / "tiny.onnx"))
    for call, word in ((lambda: model_variants.build("int8-qdq", float_path, str(tmp_path)), "calibration"),
                       (lambda: model_variants.build("int4", float_path, str(tmp_path)), "int4")):
        try:
            call()
        except ValueError as e:
            assert word in str(e)
        else:
            raise AssertionError("no error")
    assert model_variants.skip_reason("int8-qop", "bert_base").startswith("int8-qop is built for resnet50")
    assert model_variants.skip_reason("int8-dynamic", "bert_base") is None
