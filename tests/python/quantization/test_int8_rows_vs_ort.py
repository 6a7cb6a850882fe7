"""QuantizeLinear / DequantizeLinear (per tensor, per axis, blocked; uint8 / int8) and MaxPool on
uint8 / int8 against ONNX Runtime on the same inputs, exactly: these run through the vectorized
rows of linalg/q8_quantize.h and linalg/q8_pool.h, in runs that start and end inside the
kernel's parallel steps (odd sizes), on exact rounding ties and saturating values."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import run_onyx, run_ort, save_model

RNG = np.random.default_rng(77)
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8,
             np.dtype(np.int8): TensorProto.INT8}


def node_model(name, op, feeds, consts, out_type, opset, **attrs):
    node = helper.make_node(op, list(feeds) + list(consts), ["y"], **attrs)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info(k, ONNX_TYPE[v.dtype], list(v.shape)) for k, v in feeds.items()],
        [helper.make_tensor_value_info("y", out_type, None)],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return save_model(model, f"{name}.onnx")


def assert_same(path, feeds, threads=1):
    (want,) = run_ort(path, feeds, threads=threads)
    (got,) = run_onyx(path, feeds, threads=threads)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def ties(shape, scale):
    """Values on and next to every rounding tie, and far outside the 8-bit range."""
    k = RNG.integers(-300, 300, shape).astype(np.float32)
    frac = RNG.choice(np.array([0.0, 0.5, -0.5, 0.25, 0.4999], np.float32), shape)
    return ((k + frac) * np.asarray(scale, np.float32)).astype(np.float32)


# (shape, axis, block_size): per tensor (axis None), per axis with inner rows of odd lengths,
# blocked along the last axis and along a middle one (scales varying inside a row).
LAYOUTS = [((3, 37, 29), None, 0), ((2, 5, 17, 13), 1, 0), ((7, 301), -1, 0), ((601, 3), 0, 0),
           ((4, 9, 70), 2, 32), ((3, 10, 11), 1, 4), ((1, 3, 224, 224), None, 0)]


@pytest.mark.parametrize("qtype", [np.uint8, np.int8])
@pytest.mark.parametrize("layout", LAYOUTS, ids=[f"{s}-axis{a}-block{b}" for s, a, b in LAYOUTS])
def test_quantize_and_dequantize_match_ort(qtype, layout):
    shape, axis, block = layout
    opset = 21 if block else 13
    if axis is None:
        scale_shape = ()
    elif block:
        ax = axis % len(shape)
        scale_shape = tuple(-(-d // block) if i == ax else d for i, d in enumerate(shape))
    else:
        scale_shape = (shape[axis],)
    scale = (RNG.random(scale_shape) * 0.05 + 0.01).astype(np.float32)
    info = np.iinfo(qtype)
    zp = RNG.integers(info.min, info.max + 1, scale_shape).astype(qtype)
    attrs = {} if axis is None else {"axis": axis}
    if block:
        attrs["block_size"] = block
    scale_full = scale if axis is None or block else scale.reshape([-1 if i == axis % len(shape) else 1
                                                                    for i in range(len(shape))])
    x = ties(shape, 1.0) * (scale_full if not block else np.float32(0.03))
    if not block:  # ONNX Runtime's blocked quantization turns these into 0 (its own cast)
        x.flat[:4] = [np.inf, -np.inf, 1e30, -1e30]
    name = f"q_{np.dtype(qtype).name}_{'x'.join(map(str, shape))}_{axis}_{block}"
    q_path = node_model(name, "QuantizeLinear", {"x": x}, {"s": scale, "z": zp}, ONNX_TYPE[np.dtype(qtype)], opset,
                        **attrs)
    assert_same(q_path, {"x": x})
    assert_same(q_path, {"x": x}, threads=2)
    codes = RNG.integers(info.min, info.max + 1, shape).astype(qtype)
    dq_path = node_model("d" + name, "DequantizeLinear", {"x": codes}, {"s": scale, "z": zp}, TensorProto.FLOAT, opset,
                         **attrs)
    assert_same(dq_path, {"x": codes})


# kernel, strides, pads, dilations, ceil_mode: ResNet's stem pool and odd geometries.
POOLS = [([3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0), ([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0),
         ([3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 0), ([3, 3], [2, 2], [0, 0, 0, 0], [1, 1], 1),
         ([3, 2], [2, 3], [1, 0, 2, 1], [2, 1], 0), ([5, 5], [3, 3], [2, 2, 2, 2], [1, 2], 1)]


@pytest.mark.parametrize("qtype", [np.uint8, np.int8])
@pytest.mark.parametrize("pool", POOLS, ids=[f"k{p[0]}s{p[1]}p{p[2]}d{p[3]}c{p[4]}" for p in POOLS])
@pytest.mark.parametrize("size", [(1, 64, 112, 112), (2, 3, 17, 23)], ids=["resnet-stem", "odd"])
def test_maxpool_8bit_matches_ort(qtype, pool, size):
    kernel, strides, pads, dilations, ceil_mode = pool
    info = np.iinfo(qtype)
    x = RNG.integers(info.min, info.max + 1, size).astype(qtype)
    attrs = dict(kernel_shape=kernel, strides=strides, pads=pads, dilations=dilations, ceil_mode=ceil_mode)
    path = node_model(f"maxpool_{np.dtype(qtype).name}_{abs(hash(str(pool) + str(size)))}", "MaxPool", {"x": x}, {},
                      ONNX_TYPE[np.dtype(qtype)], 12, **attrs)
    assert_same(path, {"x": x})
    assert_same(path, {"x": x}, threads=2)
