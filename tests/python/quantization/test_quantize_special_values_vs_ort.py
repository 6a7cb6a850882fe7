"""Quantizing what has no code: NaN inputs, NaN quotients (a Sqrt or Log of a negative value
between DequantizeLinear and QuantizeLinear) and the degenerate ranges of DynamicQuantizeLinear
(an all-zero input, all NaN, an infinite or underflowing range). ONNX leaves these to the
implementation; Onyx gives ONNX Runtime 1.31's results exactly: a NaN quotient becomes the type's
lowest code (0 / -128, not the zero point), and DynamicQuantizeLinear of a one-point range has
scale 1 (the op's function body would divide by 0) and a NaN zero point quotient gives 255.
Every ISA's quantize loop and the fused paths (lookup tables, DynamicQuantizeMatMul) are checked."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import require_ort, run_onyx, run_ort, save_model

ISAS = ["auto", "avx2", "scalar"]
SPECIAL_SCALES = [0.5, 0.0, -1.0, float("nan"), float("inf"), 1e-45, 1e-10, 3e38]


def _model(name, nodes, inputs, outputs, inits, opset=21, ms=False):
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)] if ms else [])
    m = helper.make_model(helper.make_graph(nodes, name, inputs, outputs, inits), opset_imports=imports)
    m.ir_version = 9
    return save_model(m, f"{name}.onnx")


def _same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        equal = (g == e) | (np.isnan(g) & np.isnan(e)) if g.dtype.kind == "f" else g == e
        differ = np.count_nonzero(~equal)
        assert differ == 0, f"{differ} of {g.size} values differ from ONNX Runtime's: {g.ravel()[:8]} {e.ravel()[:8]}"


def _with_isa(monkeypatch, isa):
    if isa != "auto":
        monkeypatch.setenv("ONYX_LINALG_ISA", isa)


def _specials(n=40):
    x = (np.random.default_rng(7).standard_normal(n) * 3).astype(np.float32)
    x[:5] = [np.nan, np.inf, -np.inf, -0.0, np.nan]
    return x.reshape(2, n // 2)  # NaNs in a vector body and its tail


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("dtype", [TensorProto.UINT8, TensorProto.INT8])
def test_quantize_dequantize_nan_inf_and_degenerate_scales(monkeypatch, isa, dtype):
    require_ort()
    _with_isa(monkeypatch, isa)
    x = _specials()
    np_type = np.uint8 if dtype == TensorProto.UINT8 else np.int8
    lowest = np.iinfo(np_type).min
    for scale in SPECIAL_SCALES:
        for zp in (np.iinfo(np_type).min, 0, 37, np.iinfo(np_type).max):
            inits = [numpy_helper.from_array(np.array(scale, np.float32), "s"),
                     numpy_helper.from_array(np.array(zp, np_type), "z")]
            path = _model("qdq_special", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
                                          helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("q", dtype, None),
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
            expected = run_ort(path, {"x": x})
            _same(run_onyx(path, {"x": x}), expected)
            if scale == 0.5 and zp != lowest:
                # Control: ONNX Runtime's code for NaN is the lowest one, so a NaN-to-zero-point
                # rule (Onyx's before) fails above.
                assert expected[0][0, 0] == lowest != zp


@pytest.mark.parametrize("dtype,np_type", [(TensorProto.INT16, np.int16), (TensorProto.UINT16, np.uint16)])
def test_quantize_to_16_bits_nan_and_inf(dtype, np_type):
    """The wide path (16-bit codes): a NaN gives the lowest code there too."""
    require_ort()
    x = _specials()
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
             numpy_helper.from_array(np.array(7, np_type), "z")]
    path = _model("q16_special", [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                  [helper.make_tensor_value_info("q", dtype, None)], inits)
    expected = run_ort(path, {"x": x})
    assert expected[0][0, 0] == np.iinfo(np_type).min
    _same(run_onyx(path, {"x": x}), expected)


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("values", [[0.0] * 37, [np.nan] * 4, [1e-45] + [0.0] * 36, [-np.inf, -1.0, 0.0, 1.0],
                                    [np.inf, 2.0, -3.0], [np.nan, 1.0, 2.0, 3.0, -0.5]],
                         ids=["zeros", "nans", "denormal", "minus_inf", "plus_inf", "nan_first"])
def test_dynamic_quantize_linear_degenerate_ranges(monkeypatch, isa, values):
    """NaNs in the range: Onyx skips them. ONNX Runtime's min / max loop skips them or not by
    where they sit (a NaN in the last lane of an 8-float block gives it a NaN scale), so NaNs are
    fed only where it skips them too."""
    require_ort()
    _with_isa(monkeypatch, isa)
    x = np.array([values], np.float32)
    path = _model("dql_special", [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                  [helper.make_tensor_value_info("q", TensorProto.UINT8, None),
                   helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
                   helper.make_tensor_value_info("z", TensorProto.UINT8, None)], [], opset=11)
    expected = run_ort(path, {"x": x})
    _same(run_onyx(path, {"x": x}), expected)
    if values[0] == 0.0 and len(set(values)) == 1:
        assert expected[1] == 1.0  # the degenerate range's scale (the function body's would be 0)


@pytest.mark.parametrize("op", ["Sqrt", "Log"])
@pytest.mark.parametrize("level", ["all", "disabled"])
def test_qdq_chain_with_nan_results_gives_onnx_runtime_codes(op, level):
    """DQ -> Sqrt / Log -> Q over all 256 codes, half of them negative: a lookup table after
    Onyx's fusion (level all), the float op between the two kernels without it."""
    require_ort()
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
             numpy_helper.from_array(np.array(128, np.uint8), "z"),
             numpy_helper.from_array(np.array(0.02, np.float32), "s2"),
             numpy_helper.from_array(np.array(100, np.uint8), "z2")]
    path = _model(f"qdq_{op.lower()}", [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["d"]),
                                        helper.make_node(op, ["d"], ["f"]),
                                        helper.make_node("QuantizeLinear", ["f", "s2", "z2"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.UINT8, [256])],
                  [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], inits, opset=19)
    x = np.arange(256, dtype=np.uint8)
    expected = run_ort(path, {"x": x})
    assert np.count_nonzero(expected[0][:128] == 0) == 128  # NaN results: the lowest code, not 100
    _same(run_onyx(path, {"x": x}, extra_args=["--opt-level", level]), expected)


@pytest.mark.parametrize("fused", [True, False])
def test_dynamic_quantize_matmul_of_an_all_zero_input(fused):
    """The dynamically quantizing matmuls take DynamicQuantizeLinear's parameters from the same
    place: an all-zero A (scale 1, zero point 0) gives the bias, as ONNX Runtime."""
    require_ort()
    rng = np.random.default_rng(3)
    w = rng.integers(-100, 100, (24, 16)).astype(np.int8)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0.01, np.float32), "ws"),
             numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b")]
    if fused:
        nodes = [helper.make_node("DynamicQuantizeMatMul", ["a", "w", "ws", "", "b"], ["y"], domain="com.microsoft")]
    else:
        nodes = [helper.make_node("DynamicQuantizeLinear", ["a"], ["aq", "as", "az"]),
                 helper.make_node("MatMulInteger", ["aq", "w", "az"], ["acc"]),
                 helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
                 helper.make_node("Mul", ["as", "ws"], ["m"]), helper.make_node("Mul", ["accf", "m"], ["p"]),
                 helper.make_node("Add", ["p", "b"], ["y"])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if not fused:  # A's scale too, which the function body's formula would make 0
        outputs.append(helper.make_tensor_value_info("as", TensorProto.FLOAT, None))
    path = _model("dqmm_zero", nodes, [helper.make_tensor_value_info("a", TensorProto.FLOAT, [5, 24])], outputs, inits,
                  opset=13, ms=fused)
    a = np.zeros((5, 24), np.float32)
    expected = run_ort(path, {"a": a})
    _same(run_onyx(path, {"a": a}), expected)
