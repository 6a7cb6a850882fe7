"""Tensor-manipulation kernels on cases the ONNX conformance data does not reach: every element
type (strings, bool, float16, int4), views, negative axes/steps, multi-threaded large copies,
reductions, edge sizes, and bad input that must fail with a message naming the node.

Expected values come from plain numpy references written here, and from ONNX Runtime 1.30
where it runs the same model."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.int16): TensorProto.INT16, np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64, np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.uint32): TensorProto.UINT32,
    np.dtype(np.uint64): TensorProto.UINT64, np.dtype(np.bool_): TensorProto.BOOL,
}


def onnx_type(a):
    return TensorProto.STRING if a.dtype.kind == "U" else NP_TO_ONNX[a.dtype]


_counter = [0]


def node_model(op, inputs, out_types, attrs=None, opset=17, initializers=None):
    """A one-node model. inputs: list of (name, array) fed at run time (array None: omitted
    optional input); initializers: {name: array} fixed in the model; out_types: onnx types."""
    initializers = initializers or {}
    names = []
    graph_inputs = []
    for name, arr in inputs:
        names.append("" if arr is None and name not in initializers else name)
        if arr is not None:
            graph_inputs.append(helper.make_tensor_value_info(name, onnx_type(arr), list(arr.shape)))
    outs = [f"y{i}" for i in range(len(out_types))]
    node = helper.make_node(op, names, outs, name=f"{op.lower()}_node", **(attrs or {}))
    inits = []
    for name, arr in initializers.items():
        inits.append(helper.make_tensor(name, onnx_type(arr), list(arr.shape), arr.flatten().tolist()))
    graph = helper.make_graph([node], "g", graph_inputs,
                              [helper.make_tensor_value_info(o, t, None) for o, t in zip(outs, out_types)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    _counter[0] += 1
    return save_model(model, f"tensor_{op}_{_counter[0]}.onnx")


def feeds(inputs):
    return {name: arr for name, arr in inputs if arr is not None}


def assert_same(expected, got):
    # .npy string arrays carry a width; only the strings matter.
    expected = [e.astype(object) if e.dtype.kind == "U" else e for e in expected]
    got = [g.astype(object) if g.dtype.kind == "U" else g for g in got]
    assert_outputs_close(expected, got, rtol=1e-6, atol=0)


def check(op, inputs, expected, attrs=None, opset=17, threads=1, ort=True, initializers=None):
    """Runs the node in Onyx, compares with the numpy `expected` and (if `ort`) with ONNX Runtime."""
    types = [onnx_type(e) for e in expected]
    path = node_model(op, inputs, types, attrs, opset, initializers)
    got = run_onyx(path, feeds(inputs), threads=threads)
    assert_same(expected, got)
    if ort:
        assert_same(run_ort(path, feeds(inputs)), got)


def expect_failure(op, inputs, out_types, attrs=None, opset=17, match=""):
    path = node_model(op, inputs, out_types, attrs, opset)
    with pytest.raises(RuntimeError) as err:
        run_onyx(path, feeds(inputs))
    message = str(err.value)
    assert f"{op.lower()}_node" in message, message
    assert match in message, message


RNG = np.random.default_rng(7)


def sample(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "U":
        return np.array([f"s{v}" for v in RNG.integers(0, 1000, size=int(np.prod(shape)))], dtype=str).reshape(shape)
    if dtype == np.bool_:
        return RNG.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dtype)


ALL_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint16, np.uint64, np.bool_, str]


# ---------------------------------------------------------------- Transpose and friends

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,perm", [
    ((2, 3, 4), (1, 0, 2)), ((5, 67, 45), (0, 2, 1)), ((1, 3, 1, 4), (2, 0, 3, 1)),
    ((2, 3, 4, 5, 6), (4, 2, 0, 3, 1)), ((70, 33), (1, 0)), ((3, 1, 5), (1, 0, 2))])
def test_transpose(dtype, shape, perm):
    x = sample(shape, dtype)
    check("Transpose", [("x", x)], [np.transpose(x, perm)], {"perm": list(perm)}, ort=dtype is not str)


def test_transpose_large_threaded():
    x = sample((8, 130, 257), np.float32)
    for perm in [(0, 2, 1), (2, 1, 0), (1, 0, 2)]:
        check("Transpose", [("x", x)], [np.transpose(x, perm)], {"perm": list(perm)}, threads=4)


def test_transpose_default_reverses():
    x = sample((2, 3, 4), np.int16)
    check("Transpose", [("x", x)], [x.T])


def test_transpose_int4():
    # int4 [2, 3] packed two per byte (low nibble first), transposed to [3, 2].
    values = np.array([[-8, -1, 0], [1, 7, 3]], dtype=np.int8)
    nibbles = (values.flatten() & 0xF).astype(np.uint8)
    packed = bytes((nibbles[i] | (nibbles[i + 1] << 4)) for i in range(0, 6, 2))
    int4 = 22  # TensorProto.INT4, newer than this onnx package
    x = TensorProto(name="x", data_type=int4, dims=[2, 3], raw_data=packed)
    node = helper.make_node("Transpose", ["x"], ["y"], name="transpose_node")
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", int4, None)], [x])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    got = run_onyx(save_model(model, "tensor_transpose_int4.onnx"), {})
    np.testing.assert_array_equal(got[0].astype(np.int8), values.T)


def depth_to_space_ref(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back(mode):
    x = sample((2, 18, 4, 5), np.float32)
    check("DepthToSpace", [("x", x)], [depth_to_space_ref(x, 3, mode)], {"blocksize": 3, "mode": mode})
    y = sample((2, 3, 6, 9), np.float32)
    ref = y.reshape(2, 3, 2, 3, 3, 3).transpose(0, 3, 5, 1, 2, 4).reshape(2, 27, 2, 3)
    check("SpaceToDepth", [("x", y)], [ref], {"blocksize": 3})


# ---------------------------------------------------------------- views

def test_reshape_variants():
    x = sample((2, 3, 4), str)
    check("Reshape", [("x", x), ("s", np.array([0, -1], np.int64))], [x.reshape(2, 12)], ort=False)
    z = np.zeros((0, 3), np.float32)
    check("Reshape", [("x", z), ("s", np.array([3, 0], np.int64))], [z.reshape(3, 0)], {"allowzero": 1}, opset=14)
    check("Reshape", [("x", x)], [x.reshape(4, 6)], {"shape": [4, -1]}, opset=4, ort=False)


def test_squeeze_unsqueeze():
    x = sample((1, 3, 1, 2), np.float16)
    check("Squeeze", [("x", x)], [x.reshape(3, 2)])
    check("Squeeze", [("x", x), ("a", np.array([-2], np.int64))], [x.reshape(1, 3, 2)])
    check("Squeeze", [("x", x)], [x.reshape(3, 1, 2)], {"axes": [0]}, opset=11)
    check("Unsqueeze", [("x", x), ("a", np.array([-1, 0], np.int64))], [x.reshape(1, 1, 3, 1, 2, 1)])
    check("Unsqueeze", [("x", x)], [x.reshape(1, 3, 1, 2, 1)], {"axes": [4]}, opset=11)
    check("Flatten", [("x", x)], [x.reshape(3, 2)], {"axis": -2})


# ---------------------------------------------------------------- Concat / Split / Slice

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_concat(dtype):
    a, b, c = sample((2, 3, 4), dtype), sample((2, 0, 4), dtype), sample((2, 5, 4), dtype)
    check("Concat", [("a", a), ("b", b), ("c", c)], [np.concatenate([a, b, c], 1)], {"axis": -2},
          ort=dtype is not str)


def test_concat_many_rows_threaded():
    parts = [sample((5000, k, 3), np.float32) for k in (1, 2, 3)]
    check("Concat", [(f"p{i}", p) for i, p in enumerate(parts)], [np.concatenate(parts, 1)], {"axis": 1}, threads=4)
    big = [sample((300, 700), np.float32), sample((200, 700), np.float32)]
    check("Concat", [("a", big[0]), ("b", big[1])], [np.concatenate(big, 0)], {"axis": 0}, threads=4)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, str])
def test_split(dtype):
    x = sample((6, 5, 4), dtype)
    ort = dtype is not str
    check("Split", [("x", x), ("s", np.array([1, 0, 5], np.int64))], np.split(x, [1, 1], axis=0), ort=ort)
    check("Split", [("x", x), ("s", np.array([2, 3], np.int64))], np.split(x, [2], axis=1), {"axis": -2}, ort=ort)
    check("Split", [("x", x)], np.split(x, [2, 4], axis=1), {"axis": 1, "num_outputs": 3}, opset=18, ort=ort)
    check("Split", [("x", x)], np.split(x, 2, axis=0), opset=11, ort=ort)


def slice_ref(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[a] = slice(s, e, st)
    return x[tuple(index)]


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1, 0], [3, 10], [0, 2], [1, 1]),
    ([-1], [-(2**63)], [1], [-1]),
    ([2**63 - 1, 1], [-(2**63), 4], [2, 0], [-2, 2]),
    ([1], [2], [0], [1]),
    ([0, 1], [2**63 - 1, 3], [-1, -2], [3, 1]),
    ([4], [1], [1], [1]),
])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, str])
def test_slice(starts, ends, axes, steps, dtype):
    x = sample((4, 5, 6), dtype)
    expected = slice_ref(x, starts, ends, [a % 3 for a in axes], steps)
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    check("Slice", [("x", x), ("s", i64(starts)), ("e", i64(ends)), ("a", i64(axes)), ("st", i64(steps))],
          [expected], ort=dtype is not str)


def test_slice_opset1_attributes():
    x = sample((4, 5), np.float32)
    check("Slice", [("x", x)], [x[1:3, -3:]], {"starts": [1, -3], "ends": [3, 100]}, opset=9)


def test_slice_large_threaded():
    x = sample((64, 96, 128), np.float32)
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    check("Slice", [("x", x), ("s", i64([3, 5])), ("e", i64([60, 120])), ("a", i64([1, 2]))], [x[:, 3:60, 5:120]],
          threads=4)


# ---------------------------------------------------------------- Gather family

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather(dtype):
    x = sample((3, 4, 5), dtype)
    idx = np.array([[0, -1], [3, 1]], np.int64)
    check("Gather", [("x", x), ("i", idx)], [np.take(x, idx, axis=1)], {"axis": 1}, ort=dtype is not str)
    check("Gather", [("x", x), ("i", np.array(-3, np.int32))], [x[0]], ort=dtype is not str)


def test_gather_elements_and_nd():
    x = sample((3, 4, 5), np.float32)
    idx = RNG.integers(-4, 4, size=(3, 2, 5)).astype(np.int64)
    check("GatherElements", [("x", x), ("i", idx)], [np.take_along_axis(x, idx % 4, axis=1)], {"axis": 1})
    nd = np.array([[[1, -1]], [[0, 2]], [[3, 4]]], np.int64)  # batch_dims=1: [3, 1, 2] tuples into x[b]
    ref = np.stack([x[b][tuple(nd[b, 0])][None] for b in range(3)])
    check("GatherND", [("x", x), ("i", nd)], [ref], {"batch_dims": 1})
    check("GatherND", [("x", x), ("i", np.array([[2], [0]], np.int64))], [x[[2, 0]]])


def test_compress():
    x = sample((3, 4), np.int32)
    cond = np.array([True, False, True])
    check("Compress", [("x", x), ("c", cond)], [np.compress(cond, x, axis=-1)], {"axis": -1})
    check("Compress", [("x", x), ("c", cond)], [np.compress(cond, x)])


# ---------------------------------------------------------------- Scatter family

def scatter_elements_ref(data, idx, upd, axis, reduction):
    out = data.copy()
    for pos in np.ndindex(idx.shape):
        target = list(pos)
        target[axis] = idx[pos] % data.shape[axis]
        target = tuple(target)
        if reduction == "none":
            out[target] = upd[pos]
        elif reduction == "add":
            out[target] = out[target] + upd[pos]
        elif reduction == "mul":
            out[target] = out[target] * upd[pos]
        elif reduction == "max":
            out[target] = max(out[target], upd[pos])
        else:
            out[target] = min(out[target], upd[pos])
    return out


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_scatter_elements(reduction, dtype):
    data = sample((4, 5), dtype)
    idx = np.array([[1, -1, 0], [3, 3, 3]], np.int64)  # duplicates in row 1
    upd = sample((2, 3), dtype)
    ref = scatter_elements_ref(data, idx, upd, 1, reduction)
    # ONNX Runtime leaves duplicates with reduction none unspecified; compare with numpy only there.
    check("ScatterElements", [("d", data), ("i", idx), ("u", upd)], [ref], {"axis": -1, "reduction": reduction},
          opset=18, ort=reduction != "none" and dtype != np.float16)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd(reduction):
    data = sample((4, 3, 2), np.int64)
    idx = np.array([[1, 0], [-1, 2], [1, 0]], np.int64)
    upd = sample((3, 2), np.int64)
    ref = data.copy()
    for k in range(3):
        t = tuple(v % s for v, s in zip(idx[k], data.shape))
        ref[t] = {"none": upd[k], "add": ref[t] + upd[k], "mul": ref[t] * upd[k],
                  "max": np.maximum(ref[t], upd[k]), "min": np.minimum(ref[t], upd[k])}[reduction]
    check("ScatterND", [("d", data), ("i", idx), ("u", upd)], [ref], {"reduction": reduction}, opset=18, ort=False)


def test_scatter_strings_and_tensor_scatter():
    data = sample((3, 4), str)
    idx = np.array([[0], [2]], np.int64)
    upd = sample((2, 4), str)
    ref = data.copy()
    ref[[0, 2]] = upd
    check("ScatterND", [("d", data), ("i", idx), ("u", upd)], [ref], ort=False)
    past = sample((2, 3, 5, 4), np.float32)
    new = sample((2, 3, 2, 4), np.float32)
    write = np.array([4, 1], np.int64)
    ref = past.copy()
    for b in range(2):
        for s in range(2):
            ref[b, :, (write[b] + s) % 5] = new[b, :, s]
    check("TensorScatter", [("p", past), ("u", new), ("w", write)], [ref], {"mode": "circular"}, opset=24, ort=False)


# ---------------------------------------------------------------- Expand / Tile / Pad

@pytest.mark.parametrize("dtype", [np.float32, np.bool_, str])
def test_expand_and_tile(dtype):
    x = sample((3, 1, 2), dtype)
    ort = dtype is not str
    check("Expand", [("x", x), ("s", np.array([2, 1, 4, 1], np.int64))], [np.broadcast_to(x, (2, 3, 4, 2))], ort=ort)
    check("Expand", [("x", x), ("s", np.array([1], np.int64))], [x], ort=ort)
    check("Tile", [("x", x), ("r", np.array([2, 3, 1], np.int64))], [np.tile(x, (2, 3, 1))], ort=ort)
    check("Tile", [("x", x), ("r", np.array([1, 0, 2], np.int64))], [np.tile(x, (1, 0, 2))], ort=ort)


def test_expand_large_threaded():
    x = sample((1, 1, 300, 200), np.float32)
    check("Expand", [("x", x), ("s", np.array([4, 6, 1, 1], np.int64))], [np.broadcast_to(x, (4, 6, 300, 200))],
          threads=4)


def pad_ref(x, pads, mode, value=0):
    """Negative pads crop first. wrap is periodic (a torus, as the spec says); np.pad's wrap is
    not when a pad exceeds the dim, so it goes through np.take instead."""
    r = x.ndim
    crop = tuple(slice(max(0, -pads[d]), x.shape[d] - max(0, -pads[d + r])) for d in range(r))
    widths = [(max(0, pads[d]), max(0, pads[d + r])) for d in range(r)]
    x = x[crop]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    if mode == "wrap":
        for d, (b, e) in enumerate(widths):
            x = np.take(x, np.arange(-b, x.shape[d] + e), axis=d, mode="wrap")
        return x
    return np.pad(x, widths, mode=mode)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads", [[1, 2, 0, 3, 1, 2], [0, -1, 2, 2, 1, -2], [5, 0, 7, 0, 9, 1]])
def test_pad_modes(mode, pads):
    x = sample((3, 4, 3), np.float32)
    value = np.array(2.5, np.float32)
    expected = pad_ref(x, pads, mode, 2.5)
    check("Pad", [("x", x), ("p", np.array(pads, np.int64)), ("v", value)], [expected], {"mode": mode}, opset=19,
          ort=False)


def test_pad_axes_and_old_forms():
    x = sample((2, 3, 4), np.int32)
    check("Pad", [("x", x), ("p", np.array([1, 2, 0, 1], np.int64)), ("v", None), ("a", np.array([-1, 0], np.int64))],
          [pad_ref(x, [2, 0, 1, 1, 0, 0], "constant")], opset=18)
    f = x.astype(np.float32)
    check("Pad", [("x", f)], [pad_ref(f, [0, 1, 0, 0, 2, 1], "constant", 7)], {"pads": [0, 1, 0, 0, 2, 1],
                                                                                 "value": 7.0}, opset=2)
    s = sample((2, 3), str)
    check("Pad", [("x", s), ("p", np.array([1, 0, 0, 1], np.int64))], [pad_ref(s, [1, 0, 0, 1], "edge")],
          {"mode": "edge"}, ort=False)


def test_center_crop_pad():
    x = sample((5, 4, 3), np.float32)
    ref = np.zeros((3, 7, 3), np.float32)
    ref[:, 1:5, :] = x[1:4]
    check("CenterCropPad", [("x", x), ("s", np.array([3, 7], np.int64))], [ref], {"axes": [0, -2]}, opset=18,
          ort=False)


# ---------------------------------------------------------------- small generators and selectors

def test_shape_size_constant_of_shape():
    x = sample((2, 3, 4, 5), np.uint8)
    check("Shape", [("x", x)], [np.array([3, 4], np.int64)], {"start": -3, "end": -1}, opset=15)
    check("Size", [("x", x)], [np.array(120, np.int64)])
    value = helper.make_tensor("v", TensorProto.INT32, [1], [7])
    check("ConstantOfShape", [("s", np.array([2, 0, 3], np.int64))], [np.full((2, 0, 3), 7, np.int32)],
          {"value": value})
    check("ConstantOfShape", [("s", np.array([2, 3], np.int64))], [np.full((2, 3), 7, np.int32)], {"value": value})


@pytest.mark.parametrize("attrs,expected", [
    ({"value_float": 1.5}, np.array(1.5, np.float32)),
    ({"value_ints": [1, -2, 3]}, np.array([1, -2, 3], np.int64)),
    ({"value_string": "hi"}, np.array("hi")),
    ({"value_strings": ["a", "bc"]}, np.array(["a", "bc"])),
    ({"value_int": -4}, np.array(-4, np.int64)),
    ({"value_floats": [0.5, 2.0]}, np.array([0.5, 2.0], np.float32)),
])
def test_constant_forms(attrs, expected):
    check("Constant", [], [expected], attrs, ort=expected.dtype.kind != "U")


def test_constant_sparse_value():
    sparse = helper.make_sparse_tensor(helper.make_tensor("v", TensorProto.FLOAT, [2], [3.0, 4.0]),
                                       helper.make_tensor("i", TensorProto.INT64, [2], [1, 5]), [2, 3])
    expected = np.zeros((2, 3), np.float32)
    expected.flat[[1, 5]] = [3.0, 4.0]
    check("Constant", [], [expected], {"sparse_value": sparse}, ort=False)


def test_range_eyelike_nonzero_trilu():
    check("Range", [("a", np.array(10, np.int64)), ("b", np.array(-3, np.int64)), ("c", np.array(-4, np.int64))],
          [np.arange(10, -3, -4, dtype=np.int64)])
    check("Range", [("a", np.array(0.5, np.float32)), ("b", np.array(2.0, np.float32)),
                    ("c", np.array(0.25, np.float32))], [np.arange(0.5, 2.0, 0.25, dtype=np.float32)])
    x = sample((3, 5), np.int32)
    check("EyeLike", [("x", x)], [np.eye(3, 5, k=-1, dtype=np.float64)], {"k": -1, "dtype": TensorProto.DOUBLE})
    check("EyeLike", [("x", x)], [np.zeros((3, 5), np.int32)], {"k": -(2**63)}, ort=False)
    b = sample((2, 3, 4), np.bool_)
    check("NonZero", [("x", b)], [np.array(np.nonzero(b), np.int64)])
    f = sample((2, 4, 5), np.float32)
    check("Trilu", [("x", f), ("k", np.array(1, np.int64))], [np.triu(f, 1)])
    check("Trilu", [("x", f), ("k", np.array(-2, np.int64))], [np.tril(f, -2)], {"upper": 0})
    check("Trilu", [("x", f), ("k", np.array(2**62, np.int64))], [np.tril(f, 100)], {"upper": 0})


def test_onehot_and_reverse_sequence():
    idx = np.array([[1.7, -1.0], [3.0, 9.0]], np.float32)
    depth = np.array(4, np.int64)
    values = np.array([-1, 5], np.int32)
    ref = np.full((2, 4, 2), -1, np.int32)
    for i, j in np.ndindex(2, 2):
        v = int(idx[i, j])
        v = v + 4 if -4 <= v < 0 else v
        if 0 <= v < 4:
            ref[i, v, j] = 5
    check("OneHot", [("i", idx), ("d", depth), ("v", values)], [ref], {"axis": 1}, ort=False)
    x = sample((5, 3, 2), np.float32)
    lens = np.array([5, 0, 2], np.int64)
    ref = x.copy()
    for b, n in enumerate(lens):
        ref[:n, b] = x[:n, b][::-1]
    check("ReverseSequence", [("x", x), ("l", lens)], [ref], {"time_axis": 0, "batch_axis": 1})


def test_topk():
    x = np.array([[3, 1, 3, np.nan, 2, 1], [0, 0, 0, 0, 0, 0]], np.float32)
    check("TopK", [("x", x), ("k", np.array([3], np.int64))],
          [np.array([[np.nan, 3, 3], [0, 0, 0]], np.float32), np.array([[3, 0, 2], [0, 1, 2]], np.int64)], ort=False)
    check("TopK", [("x", x), ("k", np.array([4], np.int64))],
          [np.array([[1, 1, 2, 3], [0, 0, 0, 0]], np.float32), np.array([[1, 5, 4, 0], [0, 1, 2, 3]], np.int64)],
          {"largest": 0}, ort=False)
    y = sample((4, 50, 3), np.int32)
    order = np.argsort(-y, axis=1, kind="stable")[:, :7]
    check("TopK", [("x", y), ("k", np.array([7], np.int64))], [np.take_along_axis(y, order, 1), order], {"axis": 1})
    check("TopK", [("x", y), ("k", np.array([0], np.int64))], [y[:, :0], np.zeros((4, 0, 3), np.int64)], {"axis": 1})


@pytest.mark.parametrize("sorted_", [0, 1])
def test_unique(sorted_):
    x = np.array(["b", "a", "b", "c", "a"])
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    if not sorted_:
        order = np.argsort(first)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, counts, inverse = values[order], first[order], counts[order], rank[inverse]
    check("Unique", [("x", x)], [values, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)],
          {"sorted": sorted_}, ort=False)
    m = np.array([[1, 0, 1], [2, 0, 2], [1, 0, 1]], np.int64)
    values, first, inverse, counts = np.unique(m, axis=1, return_index=True, return_inverse=True, return_counts=True)
    if sorted_:
        check("Unique", [("x", m)], [values, first.astype(np.int64), inverse.reshape(-1).astype(np.int64),
                                     counts.astype(np.int64)], {"sorted": 1, "axis": -1})


def test_dropout():
    x = sample((4, 5), np.float32)
    check("Dropout", [("x", x)], [x, np.ones((4, 5), np.bool_)], opset=13)
    # Training: keep where numpy's MT19937 uniform draw (seed 3) >= ratio.
    ratio = 0.4
    np_rng = np.random.RandomState(3)
    keep = np_rng.uniform(0, 1, x.shape) >= ratio
    ref = (x * keep / np.float32(1 - ratio)).astype(np.float32)
    path = node_model("Dropout", [("x", x), ("r", np.array(ratio, np.float32)), ("t", np.array(True))],
                      [TensorProto.FLOAT, TensorProto.BOOL], {"seed": 3}, opset=13)
    got = run_onyx(path, {"x": x, "r": np.array(ratio, np.float32), "t": np.array(True)})
    assert_outputs_close([ref, keep], got, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- bad input fails cleanly

@pytest.mark.parametrize("op,inputs,out_types,attrs,match", [
    ("Gather", [("x", np.zeros((3, 2), np.float32)), ("i", np.array([0, 3], np.int64))], [TensorProto.FLOAT], {},
     "out of range"),
    ("GatherElements", [("x", np.zeros((3, 2), np.float32)), ("i", np.array([[0, -4]], np.int64))],
     [TensorProto.FLOAT], {}, "out of range"),
    ("GatherND", [("x", np.zeros((3, 2), np.float32)), ("i", np.array([[0, 2]], np.int64))], [TensorProto.FLOAT], {},
     "out of range"),
    ("ScatterND", [("x", np.zeros((3,), np.float32)), ("i", np.array([[5]], np.int64)),
                   ("u", np.zeros((1,), np.float32))], [TensorProto.FLOAT], {}, "out of range"),
    ("ScatterElements", [("x", np.zeros((3,), np.float32)), ("i", np.array([-4], np.int64)),
                         ("u", np.zeros((1,), np.float32))], [TensorProto.FLOAT], {}, "out of range"),
    ("Reshape", [("x", np.zeros((3, 2), np.float32)), ("s", np.array([4, -1], np.int64))], [TensorProto.FLOAT], {},
     "infer"),
    ("Reshape", [("x", np.zeros((3, 2), np.float32)), ("s", np.array([-1, -1], np.int64))], [TensorProto.FLOAT], {},
     "more than one -1"),
    ("Slice", [("x", np.zeros((3, 2), np.float32)), ("s", np.array([0], np.int64)), ("e", np.array([1], np.int64)),
               ("a", np.array([0], np.int64)), ("t", np.array([0], np.int64))], [TensorProto.FLOAT], {}, "step"),
    ("Transpose", [("x", np.zeros((3, 2), np.float32))], [TensorProto.FLOAT], {"perm": [0, 0]}, "permutation"),
    ("Concat", [("a", np.zeros((3, 2), np.float32)), ("b", np.zeros((2, 3), np.float32))], [TensorProto.FLOAT],
     {"axis": 0}, "differ"),
    ("Squeeze", [("x", np.zeros((3, 2), np.float32)), ("a", np.array([0], np.int64))], [TensorProto.FLOAT], {},
     "cannot squeeze"),
    ("Split", [("x", np.zeros((5,), np.float32)), ("s", np.array([2, 2], np.int64))],
     [TensorProto.FLOAT, TensorProto.FLOAT], {}, "sums to"),
    ("Expand", [("x", np.zeros((3, 2), np.float32)), ("s", np.array([4, 2], np.int64))], [TensorProto.FLOAT], {},
     "broadcast"),
    ("Tile", [("x", np.zeros((3, 2), np.float32)), ("r", np.array([2], np.int64))], [TensorProto.FLOAT], {},
     "repeats"),
    ("Pad", [("x", np.zeros((3, 2), np.float32)), ("p", np.array([0, -3, 0, -1], np.int64))], [TensorProto.FLOAT],
     {}, "crop"),
    ("TopK", [("x", np.zeros((3, 2), np.float32)), ("k", np.array([3], np.int64))],
     [TensorProto.FLOAT, TensorProto.INT64], {}, "axis size"),
    ("Range", [("a", np.array(0, np.int32)), ("b", np.array(5, np.int32)), ("c", np.array(0, np.int32))],
     [TensorProto.INT32], {}, "delta"),
    ("DepthToSpace", [("x", np.zeros((1, 5, 2, 2), np.float32))], [TensorProto.FLOAT], {"blocksize": 2},
     "multiple"),
    ("ReverseSequence", [("x", np.zeros((3, 2), np.float32)), ("l", np.array([4, 1], np.int64))],
     [TensorProto.FLOAT], {}, "sequence length"),
    ("Pad", [("x", np.zeros((3, 2), np.float32)), ("p", np.array([0, 2**62, 0, 2**62], np.int64))],
     [TensorProto.FLOAT], {}, "too large"),
    ("Tile", [("x", np.zeros((3, 2), np.float32)), ("r", np.array([2**62, 2**62], np.int64))], [TensorProto.FLOAT],
     {}, "too large"),
    ("Split", [("x", np.zeros((5,), np.float32)), ("s", np.array([2**62, 2**62], np.int64))],
     [TensorProto.FLOAT, TensorProto.FLOAT], {}, "outside"),
])
def test_bad_input_fails_with_a_message(op, inputs, out_types, attrs, match):
    expect_failure(op, inputs, out_types, attrs, match=match)
