"""Quantization and cast kernels on cases the conformance data does not cover (odd block
remainders, negative axes, batch-broadcast zero points, grouped/strided/dilated integer
convolutions, per-channel requantization), each checked against a plain numpy reference
written from the ONNX operator definitions."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, save_model

RNG = np.random.default_rng(1234)
INT4 = 22  # TensorProto.INT4, newer than the onnx package the tests build models with
NP_TO_ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
              np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.uint8): TensorProto.UINT8,
              np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int32): TensorProto.INT32,
              np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int16): TensorProto.INT16,
              np.dtype(np.uint16): TensorProto.UINT16}


def elem_type(array):
    return TensorProto.STRING if array.dtype.kind == "U" else NP_TO_ONNX[array.dtype]


def single_node_model(name, op, inputs, out_types, opset, constants=(), **attrs):
    """A model of one node whose graph inputs are `inputs` (name -> array); outputs typed. The
    inputs named in `constants` become initializers instead (the kernel may pre-pack them)."""
    node = helper.make_node(op, list(inputs), [f"y{i}" for i in range(len(out_types))], **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(k, elem_type(v), list(v.shape)) for k, v in inputs.items() if k not in constants],
        [helper.make_tensor_value_info(f"y{i}", t, None) for i, t in enumerate(out_types)],
        [numpy_helper.from_array(inputs[k], k) for k in constants])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return save_model(model, f"{name}.onnx")


def run_node(name, op, inputs, out_types, opset, constants=(), **attrs):
    feeds = {k: v for k, v in inputs.items() if k not in constants}
    return run_onyx(single_node_model(name, op, inputs, out_types, opset, constants, **attrs), feeds)


# ---- references -----------------------------------------------------------------------------

def expand_params(p, shape, axis, block):
    """Scale/zero point broadcast to x's shape: per tensor, per axis or blocked."""
    if p.size == 1:
        return p.reshape(())
    if not block:
        dims = [1] * len(shape)
        dims[axis] = p.size
        return p.reshape(dims)
    return np.repeat(p, block, axis=axis).take(range(shape[axis]), axis=axis)


def ref_quantize(x, scale, zp, lo, hi, axis=1, block=0):
    s = expand_params(scale, x.shape, axis, block)
    z = expand_params(zp, x.shape, axis, block).astype(np.float64)
    q = np.rint((x.astype(np.float32) / s.astype(np.float32)).astype(np.float64)) + z
    return np.clip(q, lo, hi)


def ref_conv_int(x, w, x_zp, w_zp, group=1, strides=None, dilations=None, pads=None):
    """Direct N-d convolution in int64 of (x - x_zp) and (w - w_zp[m])."""
    nd = x.ndim - 2
    strides = strides or [1] * nd
    dilations = dilations or [1] * nd
    pads = pads or [0] * (2 * nd)
    xc = x.astype(np.int64) - int(x_zp)
    wc = w.astype(np.int64) - np.asarray(w_zp, np.int64).reshape([-1] + [1] * (w.ndim - 1))
    xp = np.pad(xc, [(0, 0), (0, 0)] + [(pads[d], pads[d + nd]) for d in range(nd)])
    n, c = x.shape[:2]
    m, cg = w.shape[:2]
    ks = w.shape[2:]
    out = [(xp.shape[2 + d] - ((ks[d] - 1) * dilations[d] + 1)) // strides[d] + 1 for d in range(nd)]
    y = np.zeros([n, m] + out, np.int64)
    mg = m // group
    for oc in range(m):
        g = oc // mg
        for pos in np.ndindex(*out):
            acc = np.zeros(n, np.int64)
            for kpos in np.ndindex(*ks):
                idx = tuple(pos[d] * strides[d] + kpos[d] * dilations[d] for d in range(nd))
                acc += (xp[(slice(None), slice(g * cg, (g + 1) * cg)) + idx] * wc[(oc, slice(None)) + kpos]).sum(axis=1)
            y[(slice(None), oc) + pos] = acc
    return y


# ---- QuantizeLinear / DequantizeLinear -------------------------------------------------------

def test_quantize_per_axis_negative_axis():
    x = RNG.normal(0, 50, (2, 3, 4)).astype(np.float32)
    scale = np.array([0.5, 1.0, 2.5], np.float32)
    zp = np.array([128, 0, 255], np.uint8)
    (y,) = run_node("q_axis", "QuantizeLinear", {"x": x, "s": scale, "z": zp}, [TensorProto.UINT8], 13, axis=-2)
    np.testing.assert_array_equal(y, ref_quantize(x, scale, zp, 0, 255, axis=1).astype(np.uint8))


def test_quantize_blocked_with_remainder_block():
    x = RNG.normal(0, 40, (2, 7, 3)).astype(np.float32)
    scale = RNG.uniform(0.2, 2.0, (2, 3, 3)).astype(np.float32)  # ceil(7 / 3) blocks
    zp = RNG.integers(-5, 5, (2, 3, 3)).astype(np.int8)
    (y,) = run_node("q_block", "QuantizeLinear", {"x": x, "s": scale, "z": zp}, [TensorProto.INT8], 21,
                    axis=1, block_size=3)
    np.testing.assert_array_equal(y, ref_quantize(x, scale, zp, -128, 127, axis=1, block=3).astype(np.int8))


def test_quantize_int4_odd_count_and_output_dtype():
    x = np.array([-20.0, -7.5, -1.0, 0.5, 1.5, 2.5, 30.0], np.float32)
    scale = np.array(1.0, np.float32)
    (y,) = run_node("q_int4", "QuantizeLinear", {"x": x, "s": scale}, [INT4], 21, output_dtype=INT4)
    np.testing.assert_array_equal(y, np.array([-8, -8, -1, 0, 2, 2, 7], np.int8))


def test_dequantize_blocked_float16():
    x = RNG.integers(0, 256, (3, 5)).astype(np.uint8)
    scale = RNG.uniform(0.01, 0.5, (3, 3)).astype(np.float16)
    zp = RNG.integers(0, 256, (3, 3)).astype(np.uint8)
    (y,) = run_node("dq_block", "DequantizeLinear", {"x": x, "s": scale, "z": zp}, [TensorProto.FLOAT16], 21,
                    axis=-1, block_size=2)
    s = expand_params(scale, x.shape, 1, 2).astype(np.float32)
    z = expand_params(zp, x.shape, 1, 2).astype(np.float32)
    np.testing.assert_array_equal(y, ((x.astype(np.float32) - z) * s).astype(np.float16))


def test_dequantize_int32_per_tensor_opset10():
    x = np.array([-1000000, 0, 7, 2 ** 30], np.int32)
    scale = np.array(0.25, np.float32)
    (y,) = run_node("dq_i32", "DequantizeLinear", {"x": x, "s": scale}, [TensorProto.FLOAT], 10)
    np.testing.assert_array_equal(y, x.astype(np.float32) * np.float32(0.25))


def test_quantize_rejects_mismatched_scale():
    x = np.zeros((2, 3), np.float32)
    scale = np.ones(4, np.float32)
    with pytest.raises(RuntimeError, match="QuantizeLinear"):
        run_node("q_bad", "QuantizeLinear", {"x": x, "s": scale}, [TensorProto.UINT8], 13, axis=1)


def test_dynamic_quantize_linear():
    x = RNG.normal(1.0, 3.0, (4, 5)).astype(np.float32)
    y, scale, zp = run_node("dyn_q", "DynamicQuantizeLinear", {"x": x},
                            [TensorProto.UINT8, TensorProto.FLOAT, TensorProto.UINT8], 11)
    lo, hi = min(np.float32(0), x.min()), max(np.float32(0), x.max())
    ref_scale = np.float32((hi - lo) / np.float32(255))
    ref_zp = np.rint(np.clip(np.float32(0) - lo / ref_scale, 0, 255))
    assert scale == ref_scale and zp == ref_zp
    np.testing.assert_array_equal(y, np.clip(np.rint(x / ref_scale) + ref_zp, 0, 255).astype(np.uint8))


# ---- MatMulInteger / QLinearMatMul -----------------------------------------------------------

def test_matmul_integer_batch_broadcast_and_per_row_column_zero_points():
    a = RNG.integers(0, 256, (2, 1, 3, 4)).astype(np.uint8)
    b = RNG.integers(-128, 128, (3, 4, 5)).astype(np.int8)
    a_zp = RNG.integers(0, 256, (3,)).astype(np.uint8)
    b_zp = RNG.integers(-128, 128, (5,)).astype(np.int8)
    (y,) = run_node("mmi", "MatMulInteger", {"a": a, "b": b, "az": a_zp, "bz": b_zp}, [TensorProto.INT32], 10)
    ref = np.matmul(a.astype(np.int64) - a_zp.reshape(3, 1), b.astype(np.int64) - b_zp.reshape(1, 5))
    np.testing.assert_array_equal(y, ref.astype(np.int32))


def test_matmul_integer_constant_b_is_prepacked():
    a = RNG.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    b = RNG.integers(0, 256, (4, 5)).astype(np.uint8)
    b_zp = RNG.integers(0, 256, (5,)).astype(np.uint8)
    (y,) = run_node("mmi_const", "MatMulInteger", {"a": a, "b": b, "az": np.array(3, np.int8), "bz": b_zp},
                    [TensorProto.INT32], 10, constants=("b", "bz"))
    ref = np.matmul(a.astype(np.int64) - 3, b.astype(np.int64) - b_zp.reshape(1, 5))
    np.testing.assert_array_equal(y, ref.astype(np.int32))


def test_matmul_integer_vector_operands():
    a = RNG.integers(-128, 128, (6,)).astype(np.int8)
    b = RNG.integers(-128, 128, (6,)).astype(np.int8)
    (y,) = run_node("mmi_vec", "MatMulInteger", {"a": a, "b": b}, [TensorProto.INT32], 10)
    assert y.shape == () and y == np.dot(a.astype(np.int64), b.astype(np.int64))


def test_qlinear_matmul_per_row_and_column():
    a = RNG.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    b = RNG.integers(-128, 128, (4, 5)).astype(np.int8)
    a_s = RNG.uniform(0.01, 0.05, (2, 3, 1)).astype(np.float32)
    a_z = RNG.integers(-3, 3, (2, 3, 1)).astype(np.int8)
    b_s = RNG.uniform(0.01, 0.05, (5,)).astype(np.float32)
    b_z = RNG.integers(-3, 3, (5,)).astype(np.int8)
    y_s = np.array([0.05], np.float32)
    y_z = np.array([2], np.int8)
    inputs = {"a": a, "as": a_s, "az": a_z, "b": b, "bs": b_s, "bz": b_z, "ys": y_s, "yz": y_z}
    (y,) = run_node("qlmm", "QLinearMatMul", inputs, [TensorProto.INT8], 21)
    acc = np.matmul(a.astype(np.int64) - a_z, b.astype(np.int64) - b_z.reshape(1, 5)).astype(np.float64)
    mult = (a_s * b_s.reshape(1, 5) / y_s).astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(y, np.clip(np.rint(acc * mult) + 2, -128, 127).astype(np.int8))


# ---- ConvInteger / QLinearConv ---------------------------------------------------------------

def test_conv_integer_grouped_strided_dilated_padded():
    x = RNG.integers(0, 256, (2, 4, 9, 8)).astype(np.uint8)
    w = RNG.integers(-128, 128, (6, 2, 3, 2)).astype(np.int8)
    x_zp = np.array(7, np.uint8)
    w_zp = RNG.integers(-4, 4, (6,)).astype(np.int8)
    attrs = dict(group=2, strides=[2, 1], dilations=[2, 3], pads=[1, 0, 2, 1])
    ref = ref_conv_int(x, w, 7, w_zp, **attrs).astype(np.int32)
    for constants in [(), ("w", "wz")]:  # weights fed, then pre-packed from initializers
        (y,) = run_node(f"convint{len(constants)}", "ConvInteger", {"x": x, "w": w, "xz": x_zp, "wz": w_zp},
                        [TensorProto.INT32], 10, constants=constants, **attrs)
        np.testing.assert_array_equal(y, ref)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_integer_1d_auto_pad(auto_pad):
    x = RNG.integers(0, 256, (1, 3, 10)).astype(np.uint8)
    w = RNG.integers(0, 256, (2, 3, 4)).astype(np.uint8)
    (y,) = run_node(f"convint_{auto_pad}", "ConvInteger", {"x": x, "w": w}, [TensorProto.INT32], 10,
                    auto_pad=auto_pad, strides=[3])
    if auto_pad == "VALID":
        pads = [0, 0]
    else:
        out = -(-10 // 3)
        total = max(0, (out - 1) * 3 + 4 - 10)
        begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        pads = [begin, total - begin]
    np.testing.assert_array_equal(y, ref_conv_int(x, w, 0, [0, 0], strides=[3], pads=pads).astype(np.int32))


def test_conv_integer_3d():
    x = RNG.integers(-128, 128, (1, 2, 4, 3, 5)).astype(np.int8)
    w = RNG.integers(-128, 128, (3, 2, 2, 2, 2)).astype(np.int8)
    (y,) = run_node("convint3d", "ConvInteger", {"x": x, "w": w}, [TensorProto.INT32], 10, pads=[1, 0, 1, 0, 1, 1])
    np.testing.assert_array_equal(y, ref_conv_int(x, w, 0, [0, 0, 0], pads=[1, 0, 1, 0, 1, 1]).astype(np.int32))


def test_qlinear_conv_per_channel_with_bias():
    x = RNG.integers(-128, 128, (1, 4, 6, 6)).astype(np.int8)
    w = RNG.integers(-128, 128, (4, 2, 3, 3)).astype(np.int8)
    x_s, x_z = np.array(0.02, np.float32), np.array(-3, np.int8)
    w_s = RNG.uniform(0.005, 0.02, (4,)).astype(np.float32)
    w_z = np.zeros(4, np.int8)
    y_s, y_z = np.array(0.3, np.float32), np.array(5, np.int8)
    bias = RNG.integers(-500, 500, (4,)).astype(np.int32)
    inputs = {"x": x, "xs": x_s, "xz": x_z, "w": w, "ws": w_s, "wz": w_z, "ys": y_s, "yz": y_z, "b": bias}
    (y,) = run_node("qlconv", "QLinearConv", inputs, [TensorProto.INT8], 10, constants=("w", "wz", "b"), group=2,
                    pads=[1, 1, 1, 1], strides=[2, 2])
    acc = ref_conv_int(x, w, -3, w_z, group=2, pads=[1, 1, 1, 1], strides=[2, 2]) + bias.reshape(1, 4, 1, 1)
    mult = (x_s * w_s / y_s).astype(np.float32).astype(np.float64).reshape(1, 4, 1, 1)
    np.testing.assert_array_equal(y, np.clip(np.rint(acc * mult + 5), -128, 127).astype(np.int8))


# ---- Cast ------------------------------------------------------------------------------------

@pytest.mark.parametrize("src,dst", [(np.float64, np.float16), (np.float32, np.float16), (np.int64, np.float16),
                                     (np.int32, np.float32), (np.float16, np.float64), (np.float32, np.int32)])
def test_cast_numeric_matches_numpy(src, dst):
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to Inf is part of the test
        if np.dtype(src).kind == "f":
            x = (RNG.normal(0, 1, 200) * np.logspace(-8, 6, 200)).astype(src)
            if np.dtype(dst).kind == "i":
                x = np.clip(x, -2e9, 2e9)  # float -> int beyond the range is undefined in ONNX
        else:
            x = RNG.integers(-(2 ** 20), 2 ** 20, 200).astype(src)
        expected = x.astype(dst)
    (y,) = run_node(f"cast_{np.dtype(src).name}_{np.dtype(dst).name}", "Cast", {"x": x}, [NP_TO_ONNX[np.dtype(dst)]],
                    13, to=NP_TO_ONNX[np.dtype(dst)])
    np.testing.assert_array_equal(y, expected)


def test_cast_float_to_string_and_back_matches_numpy():
    x = np.array([0.1, -2.5, 1e-5, 3e20, 123456.79, 0.0001, np.inf, -np.inf], np.float32)
    (s,) = run_node("cast_f2s", "Cast", {"x": x}, [TensorProto.STRING], 13, to=TensorProto.STRING)
    assert s.tolist() == x.astype(str).tolist()
    (back,) = run_node("cast_s2f", "Cast", {"s": s}, [TensorProto.FLOAT], 13, to=TensorProto.FLOAT)
    np.testing.assert_array_equal(back, x)
    words = np.array(["1e-5", "+INF", "-inf", "NaN", " 2.5 ", "1E3"])
    (parsed,) = run_node("cast_s2d", "Cast", {"s": words}, [TensorProto.DOUBLE], 13, to=TensorProto.DOUBLE)
    np.testing.assert_array_equal(parsed, np.array([1e-5, np.inf, -np.inf, np.nan, 2.5, 1e3]))


def test_cast_rejects_text_that_is_not_a_number():
    words = np.array(["1.5", "1,5"])
    with pytest.raises(RuntimeError, match=r"Cast.*\"1,5\""):
        run_node("cast_bad", "Cast", {"s": words}, [TensorProto.FLOAT], 13, to=TensorProto.FLOAT)
