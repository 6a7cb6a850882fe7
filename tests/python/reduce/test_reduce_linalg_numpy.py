"""Reductions, arg/cumulative ops, MatMul, Gemm, Einsum and Det checked against numpy (an
independent reference) on shapes, axes, types and equations the conformance data leaves out,
plus bad inputs that must fail with an error naming the node instead of crashing."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx_harness import assert_outputs_close, run_onyx, save_model

RNG = np.random.default_rng(1234)


def make_model(nodes, inputs, outputs, initializers=(), opset=18, name="m"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def vi(name, array_or_type, shape=None):
    if isinstance(array_or_type, np.ndarray):
        elem = helper.np_dtype_to_tensor_dtype(array_or_type.dtype)
        return helper.make_tensor_value_info(name, elem, array_or_type.shape)
    return helper.make_tensor_value_info(name, array_or_type, shape)


def out_vi(name):
    return helper.make_tensor_value_info(name, TensorProto.UNDEFINED, None)


# ---------------------------------------------------------------------------- reductions

def np_reduce(op, x, axes, keepdims):
    ax = tuple(axes) if axes else None
    x64 = x.astype(np.float64)
    fns = {
        "ReduceSum": lambda: np.sum(x64, axis=ax, keepdims=keepdims),
        "ReduceMean": lambda: np.mean(x64, axis=ax, keepdims=keepdims),
        "ReduceMax": lambda: np.max(x64, axis=ax, keepdims=keepdims),
        "ReduceMin": lambda: np.min(x64, axis=ax, keepdims=keepdims),
        "ReduceProd": lambda: np.prod(x64, axis=ax, keepdims=keepdims),
        "ReduceL1": lambda: np.sum(np.abs(x64), axis=ax, keepdims=keepdims),
        "ReduceL2": lambda: np.sqrt(np.sum(x64 * x64, axis=ax, keepdims=keepdims)),
        "ReduceLogSum": lambda: np.log(np.sum(x64, axis=ax, keepdims=keepdims)),
        "ReduceLogSumExp": lambda: np.log(np.sum(np.exp(x64), axis=ax, keepdims=keepdims)),
        "ReduceSumSquare": lambda: np.sum(x64 * x64, axis=ax, keepdims=keepdims),
    }
    return np.asarray(fns[op]())


REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
AXES = [[], [0], [1], [3], [0, 2], [1, 3], [0, 1, 2, 3], [-1, -2], [0, 3], [1, 2]]


def build_reduce_model(x, ops, axes_list, opset, dtype=TensorProto.FLOAT):
    nodes, outputs, inits, expected = [], [], [], []
    for op in ops:
        for ai, axes in enumerate(axes_list):
            for keepdims in (0, 1):
                out = f"{op}_{ai}_{keepdims}"
                axes_input_since = 13 if op == "ReduceSum" else 18
                if opset >= axes_input_since:
                    ins = ["x"]
                    if axes:
                        inits.append(numpy_helper.from_array(np.array(axes, np.int64), out + "_axes"))
                        ins.append(out + "_axes")
                    nodes.append(helper.make_node(op, ins, [out], keepdims=keepdims))
                else:
                    kw = {"axes": axes} if axes else {}
                    nodes.append(helper.make_node(op, ["x"], [out], keepdims=keepdims, **kw))
                outputs.append(out_vi(out))
                expected.append(np_reduce(op, x, axes, bool(keepdims)))
    model = make_model(nodes, [vi("x", x)], outputs, inits, opset=opset)
    return model, expected


@pytest.mark.parametrize("opset", [13, 18])
def test_reductions_float_all_axes(opset):
    x = RNG.uniform(0.5, 1.5, size=(3, 4, 5, 6)).astype(np.float32)
    model, expected = build_reduce_model(x, REDUCE_OPS, AXES, opset)
    got = run_onyx(save_model(model, f"reduce_float_{opset}.onnx"), {"x": x})
    assert_outputs_close([e.astype(np.float32) for e in expected], got, rtol=1e-5, atol=1e-6)


def test_reductions_int32_wrap_and_truncate():
    x = RNG.integers(-50, 50, size=(4, 3, 5)).astype(np.int32)
    ops = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare"]
    axes = [[], [0], [2], [0, 2], [1]]
    model, expected = build_reduce_model(x, ops, axes, 18)
    got = run_onyx(save_model(model, "reduce_int.onnx"), {"x": x})
    # numpy's mean is a float; ONNX integer mean truncates it toward zero.
    assert_outputs_close([np.trunc(e).astype(np.int32) for e in expected], got)


def test_reductions_large_parallel():
    x = RNG.standard_normal((64, 33, 70)).astype(np.float32)
    axes = [[1], [0, 2], [2], [0]]
    model, expected = build_reduce_model(x, ["ReduceSum", "ReduceMax", "ReduceLogSumExp", "ReduceL2"], axes, 18)
    got = run_onyx(save_model(model, "reduce_large.onnx"), {"x": x}, threads=4)
    assert_outputs_close([e.astype(np.float32) for e in expected], got, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,axes", [((300001,), [[]]), ((3, 100003), [[1], []])])
def test_reductions_few_long_runs_split_across_threads(shape, axes):
    x = RNG.standard_normal(shape).astype(np.float32)
    ops = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceMean", "ReduceL1"]
    model, expected = build_reduce_model(x, ops, axes, 18)
    got = run_onyx(save_model(model, f"reduce_split_{len(shape)}.onnx"), {"x": x}, threads=4)
    assert_outputs_close([e.astype(np.float32) for e in expected], got, rtol=1e-4, atol=1e-4)


def test_reduce_max_min_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0, 0.0, 2.0], [4.0, 5.0, 6.0, 7.0, -1.0]], np.float32)
    nodes = [helper.make_node("ReduceMax", ["x", "a1"], ["mx"], keepdims=0),
             helper.make_node("ReduceMin", ["x", "a0"], ["mn"], keepdims=0)]
    inits = [numpy_helper.from_array(np.array([1], np.int64), "a1"),
             numpy_helper.from_array(np.array([0], np.int64), "a0")]
    model = make_model(nodes, [vi("x", x)], [out_vi("mx"), out_vi("mn")], inits)
    mx, mn = run_onyx(save_model(model, "reduce_nan.onnx"), {"x": x})
    np.testing.assert_array_equal(mx, np.max(x, axis=1))
    np.testing.assert_array_equal(mn, np.min(x, axis=0))


def test_reduce_log_sum_exp_is_stable_and_noop_applies_elementwise():
    x = np.array([[1000.0, 1000.0], [-1000.0, -np.inf]], np.float32)
    nodes = [helper.make_node("ReduceLogSumExp", ["x", "a"], ["lse"], keepdims=0),
             helper.make_node("ReduceSumSquare", ["x2"], ["sq"], noop_with_empty_axes=1),
             helper.make_node("ReduceMax", ["x", "a"], ["mx"], keepdims=1)]
    x2 = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)
    model = make_model(nodes, [vi("x", x), vi("x2", x2)], [out_vi("lse"), out_vi("sq"), out_vi("mx")],
                       [numpy_helper.from_array(np.array([1], np.int64), "a")])
    lse, sq, mx = run_onyx(save_model(model, "reduce_lse.onnx"), {"x": x, "x2": x2})
    np.testing.assert_allclose(lse, [1000.0 + np.log(2.0), -1000.0], rtol=1e-6)
    np.testing.assert_array_equal(sq, x2 * x2)
    np.testing.assert_array_equal(mx, [[1000.0], [-1000.0]])


# ---------------------------------------------------------------------------- arg / cumulative

def test_argmax_argmin_ties_and_last_index():
    x = RNG.integers(0, 3, size=(3, 4, 5)).astype(np.float32)
    nodes, outs, expected = [], [], []
    for op, fn in (("ArgMax", np.argmax), ("ArgMin", np.argmin)):
        for axis in (0, 1, 2, -1):
            for last in (0, 1):
                for keepdims in (0, 1):
                    name = f"{op}_{axis}_{last}_{keepdims}"
                    nodes.append(helper.make_node(op, ["x"], [name], axis=axis, keepdims=keepdims, select_last_index=last))
                    outs.append(out_vi(name))
                    if last:
                        flipped = np.flip(x, axis=axis)
                        e = x.shape[axis] - 1 - fn(flipped, axis=axis)
                    else:
                        e = fn(x, axis=axis)
                    if keepdims:
                        e = np.expand_dims(e, axis)
                    expected.append(e.astype(np.int64))
    model = make_model(nodes, [vi("x", x)], outs, opset=13)
    assert_outputs_close(expected, run_onyx(save_model(model, "argminmax.onnx"), {"x": x}))


def np_cum(x, axis, exclusive, reverse, prod):
    fn = np.cumprod if prod else np.cumsum
    y = np.flip(x, axis) if reverse else x
    c = fn(y, axis=axis)
    if exclusive:
        ident = np.ones_like if prod else np.zeros_like
        first = ident(np.take(c, [0], axis=axis))
        c = np.concatenate([first, np.delete(c, -1, axis=axis)], axis=axis)
    return np.flip(c, axis) if reverse else c


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_cumsum_cumprod_every_mode(dtype):
    x = RNG.integers(1, 4, size=(3, 4, 5)).astype(dtype)
    nodes, outs, inits, expected = [], [], [], []
    for op in ("CumSum", "CumProd"):
        for axis in (0, 1, 2, -2):
            inits.append(numpy_helper.from_array(np.array(axis, np.int32), f"axis_{op}_{axis}"))
            for exclusive in (0, 1):
                for reverse in (0, 1):
                    name = f"{op}_{axis}_{exclusive}_{reverse}"
                    nodes.append(helper.make_node(op, ["x", f"axis_{op}_{axis}"], [name], exclusive=exclusive,
                                                  reverse=reverse))
                    outs.append(out_vi(name))
                    expected.append(np_cum(x, axis, exclusive, reverse, op == "CumProd").astype(dtype))
    model = make_model(nodes, [vi("x", x)], outs, inits, opset=26)
    assert_outputs_close(expected, run_onyx(save_model(model, f"cum_{np.dtype(dtype).name}.onnx"), {"x": x}))


# ---------------------------------------------------------------------------- MatMul / Gemm

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint32, np.float16])
def test_matmul_types_and_broadcast(dtype):
    cases = [((2, 1, 3, 4), (5, 4, 2)), ((4,), (3, 4, 2)), ((2, 3, 4), (4,)), ((4,), (4,)), ((1, 70, 9), (3, 9, 65))]
    nodes, outs, inputs, feeds, expected = [], [], [], {}, []
    for i, (sa, sb) in enumerate(cases):
        a = RNG.integers(0, 5, size=sa).astype(dtype)
        b = RNG.integers(0, 5, size=sb).astype(dtype)
        feeds[f"a{i}"], feeds[f"b{i}"] = a, b
        inputs += [vi(f"a{i}", a), vi(f"b{i}", b)]
        nodes.append(helper.make_node("MatMul", [f"a{i}", f"b{i}"], [f"y{i}"]))
        outs.append(out_vi(f"y{i}"))
        expected.append(np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(dtype))
    model = make_model(nodes, inputs, outs, opset=13)
    got = run_onyx(save_model(model, f"matmul_{np.dtype(dtype).name}.onnx"), feeds, threads=2)
    assert_outputs_close(expected, got, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_gemm_c_broadcast_and_transposes(dtype):
    m, k, n = 3, 5, 4
    nodes, outs, inputs, feeds, expected = [], [], [], {}, []
    i = 0
    for c_shape in [(), (n,), (1, n), (m, 1), (m, n), None]:
        for ta in (0, 1):
            for tb in (0, 1):
                a = RNG.integers(-3, 4, size=(k, m) if ta else (m, k)).astype(dtype)
                b = RNG.integers(-3, 4, size=(n, k) if tb else (k, n)).astype(dtype)
                ins = [f"a{i}", f"b{i}"]
                feeds[f"a{i}"], feeds[f"b{i}"] = a, b
                inputs += [vi(f"a{i}", a), vi(f"b{i}", b)]
                alpha, beta = (1.0, 1.0) if np.issubdtype(dtype, np.integer) else (0.5, 2.0)
                e = alpha * (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
                if c_shape is not None:
                    c = RNG.integers(-3, 4, size=c_shape).astype(dtype)
                    feeds[f"c{i}"] = c
                    inputs.append(vi(f"c{i}", c))
                    ins.append(f"c{i}")
                    e = e + beta * c.astype(np.float64)
                nodes.append(helper.make_node("Gemm", ins, [f"y{i}"], transA=ta, transB=tb, alpha=alpha, beta=beta))
                outs.append(out_vi(f"y{i}"))
                expected.append(e.astype(dtype))
                i += 1
    model = make_model(nodes, inputs, outs, opset=13)
    assert_outputs_close(expected, run_onyx(save_model(model, f"gemm_{np.dtype(dtype).name}.onnx"), feeds),
                         rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------- Einsum / Det

EINSUM_CASES = [
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij->", [(3, 5)]), ("ij->ji", [(3, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("i,i", [(6,), (6,)]), ("i,j->ij", [(3,), (4,)]),
    ("ij,jk", [(3, 4), (4, 2)]), ("bii->bi", [(2, 3, 3)]), ("...i->...", [(2, 3, 4)]),
    ("...i,...i->...", [(2, 1, 3), (4, 3)]), ("aab->ba", [(3, 3, 2)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]), ("Ab,bA->A", [(3, 4), (4, 3)]), ("ijk,ikl,j->l", [(2, 3, 4), (2, 4, 5), (3,)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_einsum_equations(dtype):
    nodes, outs, inputs, feeds, expected = [], [], [], {}, []
    for i, (eq, shapes) in enumerate(EINSUM_CASES):
        names = []
        for j, s in enumerate(shapes):
            v = RNG.integers(-3, 4, size=s).astype(dtype)
            name = f"x{i}_{j}"
            feeds[name] = v
            inputs.append(vi(name, v))
            names.append(name)
        nodes.append(helper.make_node("Einsum", names, [f"y{i}"], equation=eq))
        outs.append(out_vi(f"y{i}"))
        expected.append(np.asarray(np.einsum(eq, *[feeds[n].astype(np.float64) for n in names])).astype(dtype))
    model = make_model(nodes, inputs, outs, opset=12)
    assert_outputs_close(expected, run_onyx(save_model(model, f"einsum_{np.dtype(dtype).name}.onnx"), feeds),
                         rtol=1e-5, atol=1e-5)


def test_det_batches_and_singular():
    x = RNG.standard_normal((2, 3, 4, 4))
    x[1, 2] = [[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 0, 1], [1, 0, 1, 0]]  # singular
    model = make_model([helper.make_node("Det", ["x"], ["y"])], [vi("x", x)], [out_vi("y")], opset=11)
    (y,) = run_onyx(save_model(model, "det.onnx"), {"x": x})
    np.testing.assert_allclose(y, np.linalg.det(x), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------- bad input

BAD_CASES = [
    ("reduce_axis", helper.make_node("ReduceSum", ["x", "ax"], ["y"]), {"ax": np.array([5], np.int64)}),
    ("argmax_axis", helper.make_node("ArgMax", ["x"], ["y"], axis=7), {}),
    ("cumsum_axis", helper.make_node("CumSum", ["x", "ax"], ["y"]), {"ax": np.array(4, np.int64)}),
    ("matmul_inner", helper.make_node("MatMul", ["x", "w"], ["y"]), {"w": np.ones((5, 2), np.float32)}),
    ("gemm_c", helper.make_node("Gemm", ["x2", "w2", "c"], ["y"]),
     {"w2": np.ones((4, 2), np.float32), "c": np.ones((3,), np.float32)}),
    ("einsum_rank", helper.make_node("Einsum", ["x"], ["y"], equation="ij->i"), {}),
    ("resize_scales", helper.make_node("Resize", ["x", "", "s"], ["y"]), {"s": np.array([1, 2], np.float32)}),
    ("nll_target", helper.make_node("NegativeLogLikelihoodLoss", ["x2", "t"], ["y"]), {"t": np.array([0, 9], np.int64)}),
    ("gridsample_grid", helper.make_node("GridSample", ["x", "g"], ["y"]), {"g": np.zeros((2, 2, 2, 3), np.float32)}),
]


@pytest.mark.parametrize("name,node,extra", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_input_fails_cleanly(name, node, extra):
    x = np.ones((2, 3, 4, 4), np.float32)
    x2 = np.ones((2, 4), np.float32)
    feeds = {"x": x, "x2": x2}
    feeds.update(extra)
    used = [i for i in node.input if i]
    model = make_model([node], [vi(n, feeds[n]) for n in used], [out_vi("y")], opset=22)
    with pytest.raises(RuntimeError) as err:
        run_onyx(save_model(model, f"bad_{name}.onnx"), {n: feeds[n] for n in used})
    message = str(err.value)
    assert node.op_type in message, message
    assert "onyx failed (1)" in message, message  # an error exit, not a signal
