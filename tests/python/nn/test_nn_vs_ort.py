"""Neural-network layer kernels (Conv, ConvTranspose, pools, normalizations, softmax family,
Col2Im, MaxRoiPool) checked against ONNX Runtime 1.30 on cases the conformance data does not
cover: other element types, larger images (tiled im2col, interior pooling windows), groups,
dilations, asymmetric pads, ceil mode, several threads, constant vs fed weights."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.int64): TensorProto.INT64,
}


def build(op, inputs, outputs, attrs=None, opset=13, constants=()):
    """A one-node model. inputs: list of (name, array); names in `constants` become
    initializers, the others graph inputs. outputs: list of (name, onnx elem type)."""
    graph_inputs, inits, feeds = [], [], {}
    for name, array in inputs:
        if name == "":
            continue
        if name in constants:
            inits.append(numpy_helper.from_array(array, name))
        else:
            graph_inputs.append(helper.make_tensor_value_info(name, NP_TO_ONNX[array.dtype], array.shape))
            feeds[name] = array
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **(attrs or {}))
    graph = helper.make_graph([node], op.lower(), graph_inputs,
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset <= 17 else 10
    return model, feeds


def check(model, feeds, name, threads=1, rtol=1e-3, atol=1e-4):
    path = save_model(model, f"nn_{name}.onnx")
    expected = run_ort(path, feeds)
    got = run_onyx(path, feeds, threads=threads)
    assert_outputs_close(expected, got, rtol=rtol, atol=atol)


def check_via_float(op, inputs, outputs, attrs, opset, name, constants=(), rtol=1e-3, atol=1e-4):
    """For element types ONNX Runtime's CPU kernels lack (double, float16 for most ops): the
    reference runs the same node in float32 on the same (exactly representable) values."""
    def to_float(a):
        return a.astype(np.float32) if a.dtype in (np.float64, np.float16) else a
    typed, feeds = build(op, inputs, outputs, attrs, opset, constants)
    ref, ref_feeds = build(op, [(n, to_float(a)) for n, a in inputs],
                           [(n, TensorProto.FLOAT if t in (TensorProto.DOUBLE, TensorProto.FLOAT16) else t)
                            for n, t in outputs], attrs, opset, constants)
    expected = run_ort(save_model(ref, f"nn_{name}_ref.onnx"), ref_feeds)
    got = run_onyx(save_model(typed, f"nn_{name}.onnx"), feeds)
    expected = [e.astype(g.dtype) if g.dtype in (np.float64, np.float16) else e for e, g in zip(expected, got)]
    assert_outputs_close(expected, got, rtol=rtol, atol=atol)


rng = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# Conv

CONV_CASES = {
    # name: (x shape, w shape, attrs, with bias)
    "tiled_3x3": ((1, 32, 128, 128), (16, 32, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    "grouped_dilated_asym": ((2, 8, 21, 17), (8, 2, 3, 2), {"group": 4, "dilations": [2, 1], "strides": [2, 1],
                                                           "pads": [1, 0, 2, 1]}, True),
    "depthwise": ((2, 16, 33, 33), (16, 1, 3, 3), {"group": 16, "pads": [1, 1, 1, 1], "strides": [2, 2]}, True),
    "depthwise_multiplier": ((1, 4, 15, 15), (8, 1, 5, 5), {"group": 4, "auto_pad": "SAME_UPPER"}, False),
    "pointwise": ((2, 24, 19, 23), (40, 24, 1, 1), {}, True),
    "pointwise_strided": ((1, 8, 20, 20), (4, 8, 1, 1), {"strides": [2, 2]}, False),
    "conv3d_same_lower": ((1, 3, 9, 10, 11), (5, 3, 3, 2, 3), {"auto_pad": "SAME_LOWER", "strides": [2, 1, 2]}, True),
    "conv1d_same_upper": ((3, 4, 50), (6, 4, 4), {"auto_pad": "SAME_UPPER", "strides": [3]}, True),
    "conv1d_valid": ((1, 2, 40), (3, 2, 5), {"auto_pad": "VALID", "dilations": [3]}, False),
    "conv1d_long": ((1, 64, 20000), (8, 64, 5), {"pads": [2, 2], "dilations": [2]}, True),  # tiles split a row
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("constant_w", [True, False])
def test_conv_float(case, threads, constant_w):
    xs, ws, attrs, bias = CONV_CASES[case]
    inputs = [("X", rand(*xs)), ("W", rand(*ws))] + ([("B", rand(ws[0]))] if bias else [])
    model, feeds = build("Conv", inputs, [("Y", TensorProto.FLOAT)], attrs, opset=11,
                         constants={"W", "B"} if constant_w else ())
    check(model, feeds, f"conv_{case}_{threads}_{constant_w}", threads=threads)


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float64, 1e-4, 1e-4), (np.float16, 1e-2, 1e-2)])
@pytest.mark.parametrize("case", ["grouped_dilated_asym", "depthwise", "pointwise", "conv3d_same_lower"])
def test_conv_other_types(dtype, rtol, atol, case):
    xs, ws, attrs, bias = CONV_CASES[case]
    inputs = [("X", rand(*xs, dtype=dtype)), ("W", rand(*ws, dtype=dtype))]
    inputs += [("B", rand(ws[0], dtype=dtype))] if bias else []
    check_via_float("Conv", inputs, [("Y", NP_TO_ONNX[np.dtype(dtype)])], attrs, 11, f"conv_{case}_{np.dtype(dtype).name}",
                    constants={"W"}, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# ConvTranspose

CONVT_CASES = {
    "strided_padded": ((2, 6, 9, 7), (6, 4, 3, 3), {"strides": [2, 3], "pads": [1, 0, 1, 2],
                                                    "output_padding": [1, 2]}, True),
    "grouped_dilated": ((1, 4, 8, 8), (4, 3, 3, 2), {"group": 2, "dilations": [2, 3], "strides": [2, 2]}, True),
    "pointwise": ((2, 16, 12, 12), (16, 8, 1, 1), {}, True),
    "big": ((1, 16, 64, 64), (16, 8, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    "tiled": ((1, 8, 128, 160), (8, 16, 3, 3), {"pads": [1, 1, 1, 1]}, True),
    "output_shape": ((1, 2, 5, 6), (2, 3, 3, 3), {"strides": [2, 2], "output_shape": [11, 13]}, False),
    "conv3d": ((1, 2, 4, 5, 3), (2, 3, 2, 3, 2), {"strides": [2, 1, 2], "pads": [0, 1, 0, 0, 1, 1]}, True),
    "conv1d": ((2, 3, 10), (3, 2, 5), {"strides": [3], "output_padding": [2]}, True),
    "same_upper": ((1, 2, 5, 6), (2, 3, 3, 4), {"auto_pad": "SAME_UPPER", "strides": [2, 3]}, False),
    "same_lower": ((1, 2, 5, 6), (2, 3, 3, 4), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}, True),
    "output_shape_smaller": ((1, 2, 5, 6), (2, 3, 3, 4), {"strides": [2, 3], "output_shape": [8, 15]}, False),
    "output_shape_same_lower": ((1, 2, 5, 6), (2, 3, 3, 4), {"auto_pad": "SAME_LOWER", "strides": [2, 3],
                                                              "output_shape": [8, 15]}, False),
}


@pytest.mark.parametrize("case", sorted(CONVT_CASES))
@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("constant_w", [True, False])
def test_conv_transpose_float(case, threads, constant_w):
    xs, ws, attrs, bias = CONVT_CASES[case]
    out_ch = ws[1] * attrs.get("group", 1)
    inputs = [("X", rand(*xs)), ("W", rand(*ws))] + ([("B", rand(out_ch))] if bias else [])
    model, feeds = build("ConvTranspose", inputs, [("Y", TensorProto.FLOAT)], attrs, opset=11,
                         constants={"W"} if constant_w else ())
    check(model, feeds, f"convt_{case}_{threads}_{constant_w}", threads=threads)


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float64, 1e-4, 1e-4), (np.float16, 1e-2, 1e-2)])
def test_conv_transpose_other_types(dtype, rtol, atol):
    xs, ws, attrs, _ = CONVT_CASES["grouped_dilated"]
    inputs = [("X", rand(*xs, dtype=dtype)), ("W", rand(*ws, dtype=dtype)), ("B", rand(6, dtype=dtype))]
    check_via_float("ConvTranspose", inputs, [("Y", NP_TO_ONNX[np.dtype(dtype)])], attrs, 11,
                    f"convt_{np.dtype(dtype).name}", rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# Pools

POOL_CASES = {
    # name: (x shape, attrs)
    "big_padded": ((2, 3, 64, 61), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "ceil": ((1, 2, 17, 18), {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 0, 1, 1], "ceil_mode": 1}),
    "dilated": ((1, 2, 20, 20), {"kernel_shape": [3, 3], "dilations": [2, 3], "pads": [2, 1, 1, 2]}),
    "same_upper": ((1, 3, 15, 14), {"kernel_shape": [4, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "pool1d": ((2, 3, 31), {"kernel_shape": [4], "strides": [3], "pads": [2, 1]}),
    "pool3d": ((1, 2, 9, 8, 10), {"kernel_shape": [2, 3, 2], "strides": [2, 2, 3], "pads": [1, 1, 0, 0, 1, 1]}),
}


@pytest.mark.parametrize("case", sorted(POOL_CASES))
@pytest.mark.parametrize("storage_order", [0, 1])
def test_maxpool_with_indices(case, storage_order):
    xs, attrs = POOL_CASES[case]
    attrs = dict(attrs, storage_order=storage_order)
    model, feeds = build("MaxPool", [("X", rand(*xs))], [("Y", TensorProto.FLOAT), ("I", TensorProto.INT64)],
                         attrs, opset=12)
    check(model, feeds, f"maxpool_{case}_{storage_order}", threads=2)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float16, np.float64])
def test_maxpool_types(dtype):
    xs, attrs = POOL_CASES["big_padded"]
    x = rng.integers(-100 if dtype == np.int8 else 0, 100, size=xs).astype(dtype)
    model, feeds = build("MaxPool", [("X", x)], [("Y", NP_TO_ONNX[np.dtype(dtype)])], attrs, opset=12)
    check(model, feeds, f"maxpool_{np.dtype(dtype).name}")


@pytest.mark.parametrize("case", sorted(POOL_CASES))
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_average_pool(case, count_include_pad):
    xs, attrs = POOL_CASES[case]
    attrs = dict(attrs, count_include_pad=count_include_pad)
    model, feeds = build("AveragePool", [("X", rand(*xs))], [("Y", TensorProto.FLOAT)], attrs, opset=19)
    check(model, feeds, f"avgpool_{case}_{count_include_pad}", threads=2)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize("case", ["big_padded", "pool1d", "pool3d", "ceil", "dilated"])
def test_lp_pool(p, case):
    xs, attrs = POOL_CASES[case]
    model, feeds = build("LpPool", [("X", rand(*xs))], [("Y", TensorProto.FLOAT)], dict(attrs, p=p), opset=18)
    check(model, feeds, f"lppool_{case}_{p}")


def test_lp_pool_opset1_float_p():
    # LpPool-1 takes a float p; ONNX Runtime lacks opset 1, so the reference is numpy.
    x = rand(1, 2, 6, 7)
    model, feeds = build("LpPool", [("X", x)], [("Y", TensorProto.FLOAT)], {"kernel_shape": [2, 3], "p": 3.0},
                         opset=1)
    model.ir_version = 3
    windows = np.lib.stride_tricks.sliding_window_view(np.abs(x.astype(np.float64)), (2, 3), axis=(2, 3))
    expected = (windows ** 3).sum(axis=(-2, -1)) ** (1 / 3)
    got = run_onyx(save_model(model, "nn_lppool1.onnx"), feeds)
    assert_outputs_close([expected.astype(np.float32)], got, rtol=1e-5, atol=1e-6)


def test_max_unpool_with_pads():
    indices = (np.arange(18).reshape(1, 2, 3, 3) * 2).astype(np.int64)
    model, feeds = build("MaxUnpool", [("X", rand(1, 2, 3, 3)), ("I", indices)], [("Y", TensorProto.FLOAT)],
                         {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 0, 0, 1]}, opset=11)
    check(model, feeds, "maxunpool_pads")


@pytest.mark.parametrize("op,attrs", [("GlobalAveragePool", {}), ("GlobalMaxPool", {}),
                                      ("GlobalLpPool", {"p": 3}), ("GlobalLpPool", {})])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_global_pools(op, attrs, dtype):
    inputs, outputs = [("X", rand(2, 5, 7, 9, dtype=dtype))], [("Y", NP_TO_ONNX[np.dtype(dtype)])]
    name = f"{op}_{np.dtype(dtype).name}_{len(attrs)}"
    if dtype == np.float32:
        model, feeds = build(op, inputs, outputs, attrs, opset=13)
        check(model, feeds, name)
    else:
        check_via_float(op, inputs, outputs, attrs, 13, name, rtol=1e-2 if dtype == np.float16 else 1e-5)


def test_max_roi_pool():
    x = rand(2, 3, 20, 24)
    rois = np.array([[0, 1, 2, 10, 12], [1, 0, 0, 23, 19], [0, 5.6, 3.2, 9.7, 17.1], [1, 20, 15, 30, 30]],
                    dtype=np.float32)
    model, feeds = build("MaxRoiPool", [("X", x), ("rois", rois)], [("Y", TensorProto.FLOAT)],
                         {"pooled_shape": [3, 4], "spatial_scale": 0.8}, opset=13)
    check(model, feeds, "max_roi_pool")


# ---------------------------------------------------------------------------------------------
# Normalizations


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-9), (np.float16, 1e-2)])
def test_batch_norm_inference(dtype, rtol):
    c = 6
    inputs = [("X", rand(3, c, 5, 7, dtype=dtype)), ("scale", rand(c, dtype=dtype)), ("B", rand(c, dtype=dtype)),
              ("mean", rand(c, dtype=dtype)), ("var", np.abs(rand(c, dtype=dtype)) + 0.5)]
    model, feeds = build("BatchNormalization", inputs, [("Y", NP_TO_ONNX[np.dtype(dtype)])], {"epsilon": 1e-3},
                         opset=9)
    check(model, feeds, f"bn_{np.dtype(dtype).name}", rtol=rtol, atol=rtol)


def batch_norm_inputs(x_dtype, param_dtype, c=4):
    return [("X", rand(3, c, 5, 7, dtype=x_dtype)), ("scale", rand(c, dtype=param_dtype)),
            ("B", rand(c, dtype=param_dtype)), ("mean", rand(c, dtype=param_dtype)),
            ("var", np.abs(rand(c, dtype=param_dtype)) + 0.5)]


def test_batch_norm_training_mode():
    model, feeds = build("BatchNormalization", batch_norm_inputs(np.float32, np.float32),
                         [("Y", TensorProto.FLOAT), ("running_mean", TensorProto.FLOAT),
                          ("running_var", TensorProto.FLOAT)], {"training_mode": 1, "momentum": 0.7}, opset=15)
    check(model, feeds, "bn_training")


def test_batch_norm_training_outputs_opset9():
    # Before opset 14, requesting the statistics outputs means training mode.
    model, feeds = build("BatchNormalization", batch_norm_inputs(np.float32, np.float32),
                         [("Y", TensorProto.FLOAT), ("mean_out", TensorProto.FLOAT), ("var_out", TensorProto.FLOAT),
                          ("saved_mean", TensorProto.FLOAT), ("saved_var", TensorProto.FLOAT)], {"momentum": 0.6},
                         opset=9)
    check(model, feeds, "bn_training9")


def test_batch_norm_per_activation_opset7():
    c, h, w = 3, 4, 5  # spatial = 0: one statistic per (C, H, W) element
    inputs = [("X", rand(2, c, h, w)), ("scale", rand(c, h, w)), ("B", rand(c, h, w)), ("mean", rand(c, h, w)),
              ("var", np.abs(rand(c, h, w)) + 0.5)]
    model, feeds = build("BatchNormalization", inputs, [("Y", TensorProto.FLOAT)], {"spatial": 0}, opset=7)
    check(model, feeds, "bn_spatial0")


def test_batch_norm_mixed_types():
    # Opset 15: float16 X with float scale/B/mean/var.
    model, feeds = build("BatchNormalization", batch_norm_inputs(np.float16, np.float32), [("Y", TensorProto.FLOAT16)],
                         {}, opset=15)
    check(model, feeds, "bn_mixed", rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float16, 1e-2)])
def test_instance_norm(dtype, rtol):
    inputs = [("X", rand(2, 4, 33, 31, dtype=dtype)), ("scale", rand(4, dtype=dtype)), ("B", rand(4, dtype=dtype))]
    model, feeds = build("InstanceNormalization", inputs, [("Y", NP_TO_ONNX[np.dtype(dtype)])], {"epsilon": 1e-4},
                         opset=6)
    check(model, feeds, f"instnorm_{np.dtype(dtype).name}", rtol=rtol, atol=rtol)


@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 1e-4), (np.float64, 1e-9), (np.float16, 1e-2)])
def test_layer_norm(axis, dtype, rtol):
    x = rand(3, 5, 64, dtype=dtype)
    norm = x.shape[axis:] if axis >= 0 else x.shape[axis:]
    inputs = [("X", x), ("scale", rand(*norm, dtype=dtype)), ("B", rand(*norm, dtype=dtype))]
    model, feeds = build("LayerNormalization", inputs,
                         [("Y", NP_TO_ONNX[np.dtype(dtype)]), ("Mean", TensorProto.FLOAT),
                          ("InvStdDev", TensorProto.FLOAT)], {"axis": axis, "epsilon": 1e-3}, opset=17)
    check(model, feeds, f"layernorm_{axis}_{np.dtype(dtype).name}", rtol=rtol, atol=rtol)


def test_group_norm_18():
    # Opset 18: one scale/bias per group.
    inputs = [("X", rand(2, 6, 9, 7)), ("scale", rand(3)), ("bias", rand(3))]
    model, feeds = build("GroupNormalization", inputs, [("Y", TensorProto.FLOAT)], {"num_groups": 3}, opset=18)
    check(model, feeds, "groupnorm18")


def test_layer_norm_broadcast_params():
    inputs = [("X", rand(2, 3, 4)), ("scale", rand(1, 4)), ("B", rand(3, 1))]
    model, feeds = build("LayerNormalization", inputs, [("Y", TensorProto.FLOAT)], {"axis": 1}, opset=17)
    check(model, feeds, "layernorm_bcast")


def test_group_norm_21():
    inputs = [("X", rand(2, 6, 9, 7)), ("scale", rand(6)), ("bias", rand(6))]
    model, feeds = build("GroupNormalization", inputs, [("Y", TensorProto.FLOAT)], {"num_groups": 3}, opset=21)
    check(model, feeds, "groupnorm21")


def test_rms_norm_23():
    inputs = [("X", rand(4, 3, 32)), ("scale", rand(32))]
    model, feeds = build("RMSNormalization", inputs, [("Y", TensorProto.FLOAT)], {"epsilon": 1e-4}, opset=23)
    check(model, feeds, "rmsnorm23")


@pytest.mark.parametrize("p,axis", [(1, 1), (2, 1), (2, -1), (1, 0)])
def test_lp_normalization(p, axis):
    x = rand(3, 4, 5)
    x[1, :, 2] = 0  # a zero vector along axis 1 stays zero
    model, feeds = build("LpNormalization", [("X", x)], [("Y", TensorProto.FLOAT)], {"p": p, "axis": axis}, opset=13)
    check(model, feeds, f"lpnorm_{p}_{axis}")


@pytest.mark.parametrize("axes", [[0, 2, 3], [1], [2, 3]])
def test_mean_variance_normalization(axes):
    model, feeds = build("MeanVarianceNormalization", [("X", rand(2, 3, 4, 5))], [("Y", TensorProto.FLOAT)],
                         {"axes": axes}, opset=13)
    check(model, feeds, f"mvn_{len(axes)}_{axes[0]}")


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn(size):
    model, feeds = build("LRN", [("X", rand(2, 7, 6, 5))], [("Y", TensorProto.FLOAT)],
                         {"size": size, "alpha": 0.01, "beta": 0.6, "bias": 1.5}, opset=13)
    check(model, feeds, f"lrn_{size}")


def test_lrn_even_size():
    # ONNX Runtime rejects even sizes; the spec's window is [c - floor((size-1)/2), c + ceil((size-1)/2)].
    x = rand(2, 7, 3, 4)
    size, alpha, beta, bias = 4, 0.01, 0.6, 1.5
    square_sum = np.zeros_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1] - 1, c + (size - 1 + 1) // 2)
        square_sum[:, c] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
    expected = x / (bias + alpha / size * square_sum) ** beta
    model, feeds = build("LRN", [("X", x)], [("Y", TensorProto.FLOAT)],
                         {"size": size, "alpha": alpha, "beta": beta, "bias": bias}, opset=13)
    got = run_onyx(save_model(model, "nn_lrn_even.onnx"), feeds)
    assert_outputs_close([expected.astype(np.float32)], got, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Softmax family: opset 11 coerces to 2-D at axis, opset 13 uses one axis.


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("opset,axis", [(11, 1), (11, -2), (11, 0), (13, 1), (13, -1), (13, 0)])
def test_softmax_family(op, opset, axis):
    x = rand(3, 4, 5, 6)
    if op == "Hardmax":
        x = np.round(x)  # ties: the first maximum wins
    model, feeds = build(op, [("X", x)], [("Y", TensorProto.FLOAT)], {"axis": axis}, opset=opset)
    check(model, feeds, f"{op}_{opset}_{axis}", threads=2)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_float16(op):
    model, feeds = build(op, [("X", rand(4, 33, dtype=np.float16))], [("Y", TensorProto.FLOAT16)], {}, opset=13)
    check(model, feeds, f"{op}_f16", rtol=1e-2, atol=1e-2)


# ---------------------------------------------------------------------------------------------
# DeformConv


@pytest.mark.parametrize("with_mask", [True, False])
def test_deform_conv(with_mask):
    n, oh, ow = 2, 4, 7
    inputs = [("X", rand(n, 4, 9, 8)), ("W", rand(6, 2, 3, 2)), ("offset", rand(n, 2 * 3 * 2 * 2, oh, ow)),
              ("B", rand(6))]
    inputs += [("mask", rand(n, 2 * 3 * 2, oh, ow))] if with_mask else []
    model, feeds = build("DeformConv", inputs, [("Y", TensorProto.FLOAT)],
                         {"group": 2, "offset_group": 2, "strides": [2, 1], "pads": [1, 0, 0, 0]}, opset=19)
    check(model, feeds, f"deform_conv_{with_mask}", threads=2)


# ---------------------------------------------------------------------------------------------
# Col2Im


def test_col2im_3d():
    image, block = np.array([5, 6, 4], dtype=np.int64), np.array([2, 3, 2], dtype=np.int64)
    model, feeds = build("Col2Im", [("X", rand(1, 2 * 12, 4 * 4 * 3)), ("image", image), ("block", block)],
                         [("Y", TensorProto.FLOAT)], {}, opset=18, constants={"image", "block"})
    check(model, feeds, "col2im3d")


def test_col2im():
    image, block = np.array([9, 10], dtype=np.int64), np.array([3, 2], dtype=np.int64)
    attrs = {"strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 1, 1]}
    rows = (9 + 2 - 3) // 2 + 1
    cols = (10 + 1 - 3) // 1 + 1
    x = rand(2, 2 * 6, rows * cols)
    model, feeds = build("Col2Im", [("X", x), ("image", image), ("block", block)], [("Y", TensorProto.FLOAT)], attrs,
                         opset=18, constants={"image", "block"})
    check(model, feeds, "col2im")


# ---------------------------------------------------------------------------------------------
# Bad input fails with a message naming the node, never a crash.


@pytest.mark.parametrize("op,inputs,attrs", [
    ("Conv", [("X", rand(1, 3, 5, 5)), ("W", rand(2, 4, 3, 3))], {}),
    ("Conv", [("X", rand(1, 3, 2, 2)), ("W", rand(2, 3, 3, 3))], {}),
    ("Conv", [("X", rand(1, 4, 5, 5)), ("W", rand(2, 2, 3, 3))], {"group": 3}),
    ("Conv", [("X", rand(1, 3, 5, 5)), ("W", rand(2, 3, 3, 3))], {"pads": [1, 1]}),
    ("ConvTranspose", [("X", rand(1, 3, 5, 5)), ("W", rand(2, 3, 3, 3))], {}),
    ("MaxPool", [("X", rand(1, 3, 5))], {"kernel_shape": [7]}),
    ("AveragePool", [("X", rand(1, 3, 5, 5))], {"kernel_shape": [2]}),
    ("MaxUnpool", [("X", rand(1, 1, 2, 2)), ("I", np.array([[[[0, 1], [2, 99]]]], dtype=np.int64))],
     {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("BatchNormalization", [("X", rand(2, 3, 4)), ("s", rand(3)), ("b", rand(3)), ("m", rand(2)), ("v", rand(3))], {}),
    ("LayerNormalization", [("X", rand(2, 3, 4)), ("s", rand(5))], {}),
])
def test_bad_input_fails_cleanly(op, inputs, attrs):
    model, feeds = build(op, inputs, [("Y", TensorProto.FLOAT)], attrs, opset=17)
    path = save_model(model, f"nn_bad_{op}.onnx")
    with pytest.raises(RuntimeError) as err:
        run_onyx(path, feeds)
    message = str(err.value)
    assert op in message and "onyx failed (1)" in message, message
