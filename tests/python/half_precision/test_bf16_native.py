"""bfloat16 models on the bf16 GEMM (AVX-512 BF16): HalfBodyToFloat marks a bfloat16 body's
MatMul/Gemm/FusedMatMul/Attention with bfloat16 constant weights (attribute onyx_bf16), and
where the CPU has AVX-512 BF16 their kernels multiply the bfloat16 weights by the activations
rounded to bfloat16, as the model computes them. Checked against a numpy computation of the
model's own bfloat16 semantics, against the float32 twin within bfloat16 tolerance, and against
ONNX Runtime where it runs the model."""
import json
import os

import numpy as np
import pytest

import onyx_harness
from onyx_harness import bench_feeds, bench_manifest, run_onyx, run_ort, save_model


def _cpu_has_bf16():
    if os.environ.get("ONYX_LINALG_ISA", "auto") not in ("", "auto", "avx512", "avx512bf16"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512_bf16" in f.read()
    except OSError:
        return False


def _bf16(x):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


def _bf16_tensor(name, values):
    from onnx import TensorProto
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(values.shape)
    t.raw_data = (_bf16(values).view(np.uint32) >> 16).astype(np.uint16).tobytes()
    return t


def _mlp(w1, b1, w2, op="MatMul"):
    """float32 x -> Cast(bf16) -> MatMul(W1) + b1 -> Relu -> MatMul|Gemm(W2) -> Cast(float32)."""
    from onnx import TensorProto, helper
    k, h = w1.shape
    n = w2.shape[1]
    nodes = [helper.make_node("Cast", ["x"], ["xb"], to=TensorProto.BFLOAT16),
             helper.make_node("MatMul", ["xb", "w1"], ["h0"]),
             helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node(op, ["h2", "w2"], ["yb"]),
             helper.make_node("Cast", ["yb"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(
        nodes, "bf16_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k] if op == "MatMul" else [5, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [_bf16_tensor("w1", w1), _bf16_tensor("b1", b1), _bf16_tensor("w2", w2)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _mlp_reference(x, w1, b1, w2):
    """The model's bfloat16 semantics with float32 sums: every value between nodes is bfloat16."""
    h = _bf16(_bf16(x) @ _bf16(w1))
    h = _bf16(np.maximum(_bf16(h + _bf16(b1)), 0))
    return _bf16(h @ _bf16(w2))


def _profile_kernels(path, feeds):
    import onyx
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(onyx_harness._work_dir(), "bf16_native")
    s = onyx.InferenceSession(path, so)
    s.run(None, feeds)
    with open(s.end_profiling()) as f:
        events = json.load(f)
    kernels = {}  # op -> the kernel variants its nodes noted
    for e in events:
        if e.get("cat") == "Node" and "kernel" in e.get("args", {}):
            kernels.setdefault(e["args"].get("op_name"), set()).add(e["args"]["kernel"])
    return {op: " | ".join(sorted(v)) for op, v in kernels.items()}


@pytest.mark.parametrize("op", ["MatMul", "Gemm"])
def test_bf16_mlp_matches_its_bfloat16_semantics(op):
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((67, 45)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(45).astype(np.float32) * 0.1
    w2 = rng.standard_normal((45, 33)).astype(np.float32) * 0.2
    x = rng.standard_normal((5, 67)).astype(np.float32)
    path = save_model(_mlp(w1, b1, w2, op), f"bf16_mlp_{op}.onnx")
    got = run_onyx(path, {"x": x}, threads=2)[0]
    ref = _mlp_reference(x, w1, b1, w2)
    exact_float = np.maximum(x @ _bf16(w1) + _bf16(b1), 0) @ _bf16(w2)
    scale = float(np.abs(exact_float).max())
    # Onyx keeps the values between the products in float32: within a few bfloat16 roundings
    # of the model's own values, and of the float32 computation with the model's weights.
    assert float(np.abs(got - ref).max()) <= 2 ** -6 * scale
    assert float(np.abs(got - exact_float).max()) <= 2 ** -6 * scale


def test_bf16_products_round_activations_where_the_cpu_has_avx512_bf16():
    """x = 1 + 3 * 2^-9 is not a bfloat16: the model's Cast rounds it to 1 + 2^-7. The bf16 GEMM
    rounds it at its input, so x . 1 = 1.0078125 exactly; the float32 path (no AVX-512 BF16)
    reads x itself (the Cast folded away) and gives 1.005859375."""
    w1 = np.eye(4, dtype=np.float32)
    w2 = np.eye(4, dtype=np.float32)
    b1 = np.zeros(4, dtype=np.float32)
    path = save_model(_mlp(w1, b1, w2), "bf16_round.onnx")
    x = np.full((1, 4), 1 + 3 * 2.0 ** -9, dtype=np.float32)
    got = run_onyx(path, {"x": x})[0]
    want = 1 + 2.0 ** -7 if _cpu_has_bf16() else 1 + 3 * 2.0 ** -9
    np.testing.assert_array_equal(got, np.full((1, 4), want, dtype=np.float32))
    kernels = _profile_kernels(path, {"x": x})
    if _cpu_has_bf16():
        assert kernels.get("MatMul", "").startswith(("gemm packed bf16 B bf16_gemm_avx512",
                                                     "gemm packed bf16 B bf16_gemm_amx")), kernels
    else:
        assert "bf16" not in kernels.get("MatMul", ""), kernels


def test_float32_and_float16_models_never_use_bf16():
    """The same MLP as a float32 model and as a float16 one: no node runs the bf16 GEMM, and x
    keeps its float32 (float16) precision."""
    from onnx import TensorProto, helper, numpy_helper
    w = np.eye(4, dtype=np.float32)
    x = np.full((1, 4), 1 + 3 * 2.0 ** -9, dtype=np.float32)
    for dtype, np_type in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        nodes = [helper.make_node("Cast", ["x"], ["xh"], to=dtype), helper.make_node("MatMul", ["xh", "w"], ["yh"]),
                 helper.make_node("Cast", ["yh"], ["y"], to=TensorProto.FLOAT)]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  [numpy_helper.from_array(w.astype(np_type), "w")])
        path = save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"nobf16_{dtype}.onnx")
        got = run_onyx(path, {"x": x})[0]
        np.testing.assert_array_equal(got, x.astype(np_type).astype(np.float32))
        assert "bf16" not in _profile_kernels(path, {"x": x}).get("MatMul", "")


def _bf16_twin(name):
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench"))
    from half_precision import bfloat16_twin
    folder, manifest = bench_manifest()
    path = os.path.join(folder, manifest[name]["file"])
    half = convert_float_to_float16(onnx.load(path), keep_io_types=True)
    return path, save_model(bfloat16_twin(half), f"{name}_bf16_native.onnx"), manifest[name]


def test_bf16_bert_tiny_matches_float32_twin():
    float_path, bf16_path, entry = _bf16_twin("bert_tiny")
    feeds = bench_feeds(entry)
    got = run_onyx(bf16_path, feeds, threads=2)
    ref = run_onyx(float_path, feeds, threads=2)
    for g, r in zip(got, ref):
        assert g.shape == r.shape and g.dtype == np.float32
        scale = max(float(np.abs(r).max()), 1e-6)
        # Two layers of bfloat16 weights and activations (8 mantissa bits): a few percent of the range.
        assert float(np.abs(g - r).max()) / scale <= 5e-2
        assert float(np.abs(g - r).mean()) / scale <= 1e-2
    if _cpu_has_bf16():
        kernels = _profile_kernels(bf16_path, feeds)
        assert any("bf16_gemm" in k for k in kernels.values()), kernels


def test_ort_cannot_run_the_bf16_mlp():
    """docs/numerics.md's bfloat16 rows have no ONNX Runtime column: its CPU provider has no
    bfloat16 MatMul (the comparison is against the numpy semantics above). When an ORT version
    runs it, this fails: then compare with its outputs instead."""
    onyx_harness.require_ort()
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((16, 8)).astype(np.float32)
    w2 = rng.standard_normal((8, 4)).astype(np.float32)
    path = save_model(_mlp(w1, np.zeros(8, dtype=np.float32), w2), "bf16_mlp_ort.onnx")
    x = rng.standard_normal((3, 16)).astype(np.float32)
    assert run_onyx(path, {"x": x})[0].shape == (3, 4)
    with pytest.raises(Exception, match="(?i)bfloat16|NOT_IMPLEMENTED|kernel"):
        run_ort(path, {"x": x})


def _bf16_cnn(w1, w2, b2, w3):
    """x -> Cast(bf16) -> Conv1x1(W1) -> Relu -> Conv1x1(W2, B2) -> Add(the Relu's output) -> Relu
    -> Conv1x1(W3, stride 2) -> Cast: three convs, so that NchwcLayout takes them (regions start
    at three)."""
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Cast", ["x"], ["xb"], to=TensorProto.BFLOAT16),
             helper.make_node("Conv", ["xb", "w1"], ["c1"]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
             helper.make_node("Add", ["c2", "r1"], ["s"]),
             helper.make_node("Relu", ["s"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3"], ["c3"], strides=[2, 2]),
             helper.make_node("Cast", ["c3"], ["y"], to=TensorProto.FLOAT)]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, w1.shape[1], 7, 9])
    graph = helper.make_graph(nodes, "bf16_cnn", [x_info], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [_bf16_tensor("w1", w1), _bf16_tensor("w2", w2), _bf16_tensor("b2", b2),
                               _bf16_tensor("w3", w3)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("c_in,c_mid,c_out,bf16_gemm", [(128, 128, 128, True), (32, 48, 16, False)])
def test_bf16_pointwise_convs_match_their_bfloat16_semantics(c_in, c_mid, c_out, bf16_gemm):
    """1x1 convs of a bfloat16 model (with bias, residual Add and Relu fused; one strided): within
    bfloat16 rounding of the model's values. Where the CPU has AVX-512 BF16, layers with at least
    128 x 128 channels run on the bf16 GEMM over the NCHWc image (the profile names the path);
    fewer channels stay on the float32 kernels (converting the map would cost more than it saves)."""
    rng = np.random.default_rng(2)
    w1 = rng.standard_normal((c_mid, c_in, 1, 1)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((c_mid, c_mid, 1, 1)).astype(np.float32) * 0.2
    b2 = rng.standard_normal(c_mid).astype(np.float32) * 0.1
    w3 = rng.standard_normal((c_out, c_mid, 1, 1)).astype(np.float32) * 0.2
    x = rng.standard_normal((2, c_in, 7, 9)).astype(np.float32)
    path = save_model(_bf16_cnn(w1, w2, b2, w3), f"bf16_cnn_{c_in}.onnx")
    got = run_onyx(path, {"x": x}, threads=2)[0]

    def conv1x1(v, w):
        return np.einsum("oc,nchw->nohw", _bf16(w[:, :, 0, 0]), _bf16(v))
    r1 = _bf16(np.maximum(_bf16(conv1x1(x, w1)), 0))
    r2 = _bf16(np.maximum(_bf16(_bf16(conv1x1(r1, w2) + _bf16(b2)[None, :, None, None]) + r1), 0))
    ref = _bf16(conv1x1(r2[:, :, ::2, ::2], w3))
    scale = float(np.abs(ref).max())
    assert got.shape == ref.shape
    assert float(np.abs(got - ref).max()) <= 2 ** -6 * scale
    kernels = _profile_kernels(path, {"x": x})
    if _cpu_has_bf16() and bf16_gemm:
        assert "bf16 gemm pointwise NCHWc bf16_gemm" in kernels.get("NchwcConv", ""), kernels
        assert "bf16 gemm pointwise NCHWc (strided) bf16_gemm" in kernels.get("NchwcConv", ""), kernels
    else:
        assert not any("bf16" in k for k in kernels.values()), kernels
