"""ai.onnx.preview.training kernels beyond the conformance data: Gradient through more ops with
broadcasting, checked against hand-derived numpy gradients; the optimizers with non-default
attributes and float64, checked against the update rules of the ONNX spec written in numpy."""
import numpy as np
from onnx import TensorProto, helper

from onyx_harness import run_onyx, save_model

F = TensorProto.FLOAT
D = TensorProto.DOUBLE
TRAINING = "ai.onnx.preview.training"


def make(nodes, inputs, outputs, name, opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(TRAINING, 1)],
                          producer_name="onyx-tests")
    m.ir_version = 8
    return save_model(m, name + ".onnx")


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# The forward graphs use only ops the core provides (Add, Sub, Mul, Div, MatMul, Identity), so the
# tests do not depend on other kernel families.
def test_gradient_with_broadcasting():
    # y = (a * b - a / c) * a + b   with a: [2, 3], b: [3], c: [2, 1]
    nodes = [helper.make_node("Mul", ["a", "b"], ["ab"]),
             helper.make_node("Div", ["a", "c"], ["ac"]),
             helper.make_node("Sub", ["ab", "ac"], ["d"]),
             helper.make_node("Mul", ["d", "a"], ["e"]),
             helper.make_node("Add", ["e", "b"], ["y"]),
             helper.make_node("Gradient", ["a", "b", "c"], ["ga", "gb", "gc"], domain=TRAINING,
                              xs=["a", "b", "c"], y="y")]
    path = make(nodes, [vi("a", D, [2, 3]), vi("b", D, [3]), vi("c", D, [2, 1])],
                [vi("y", D, None), vi("ga", D, None), vi("gb", D, None), vi("gc", D, None)], "gradient_broadcast")
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    c = rng.uniform(1.0, 2.0, (2, 1))
    y, ga, gb, gc = run_onyx(path, {"a": a, "b": b, "c": c})
    np.testing.assert_allclose(y, (a * b - a / c) * a + b, rtol=1e-12)
    np.testing.assert_allclose(ga, 2 * a * b - 2 * a / c, rtol=1e-10)
    np.testing.assert_allclose(gb, (a * a).sum(axis=0) + 2, rtol=1e-10)
    np.testing.assert_allclose(gc, (a * a / c ** 2).sum(axis=1, keepdims=True), rtol=1e-10)


def test_gradient_of_matmul_with_z_input():
    # y = (x @ w) * z - x @ w; differentiate with respect to x and w only.
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Identity", ["h"], ["h2"]),
             helper.make_node("Mul", ["h2", "z"], ["hz"]),
             helper.make_node("Sub", ["hz", "h"], ["y"]),
             helper.make_node("Gradient", ["x", "w", "z"], ["gx", "gw"], domain=TRAINING, xs=["x", "w"], zs=["z"],
                              y="y")]
    path = make(nodes, [vi("x", F, [3, 4]), vi("w", F, [4, 2]), vi("z", F, [3, 2])],
                [vi("gx", F, None), vi("gw", F, None)], "gradient_matmul")
    rng = np.random.default_rng(5)
    x, w, z = (rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (4, 2), (3, 2)])
    gx, gw = run_onyx(path, {"x": x, "w": w, "z": z})
    g = z - 1
    np.testing.assert_allclose(gx, g @ w.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gw, x.T @ g, rtol=1e-5, atol=1e-6)


def test_gradient_rejects_unknown_ops():
    nodes = [helper.make_node("SequenceConstruct", ["x"], ["s"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
             helper.make_node("Gradient", ["x"], ["gx"], domain=TRAINING, xs=["x"], y="y")]
    path = make(nodes, [vi("x", F, [2, 2])], [vi("gx", F, None)], "gradient_unknown")
    try:
        run_onyx(path, {"x": np.eye(2, dtype=np.float32)})
    except RuntimeError as e:
        assert "cannot differentiate through" in str(e) and "Sequence" in str(e)
    else:
        raise AssertionError("expected an error")


def optimizer(op, n, groups, attrs, name, elem=D):
    names = [f"{p}{i}" for p in "XGVH"[:groups] for i in range(n)]
    outs = [f"{p}{i}_new" for p in ("X", "V", "H")[: groups - 1] for i in range(n)]
    node = helper.make_node(op, ["R", "T"] + names, outs, domain=TRAINING, **attrs)
    inputs = [vi("R", D, []), vi("T", TensorProto.INT64, [])] + [vi(x, elem, [3]) for x in names]
    return make([node], inputs, [vi(o, elem, None) for o in outs], name)


def test_adagrad_double_with_decay():
    path = optimizer("Adagrad", 1, 3, dict(decay_factor=0.1, epsilon=1e-3, norm_coefficient=0.01), "adagrad_decay")
    r, t = 0.5, 3
    x, g, h = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.1, -1.0]), np.array([0.1, 0.2, 0.3])
    xn, hn = run_onyx(path, {"R": np.array(r), "T": np.array(t, np.int64), "X0": x, "G0": g, "V0": h})
    rate = r / (1 + t * 0.1)
    gr = 0.01 * x + g
    h_new = h + gr * gr
    np.testing.assert_allclose(hn, h_new, rtol=1e-6)
    np.testing.assert_allclose(xn, x - rate * gr / (np.sqrt(h_new) + 1e-3), rtol=1e-6)


def test_momentum_standard_and_nesterov():
    x, g, v = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.1, -1.0]), np.array([0.1, 0.2, 0.3])
    for mode in ["standard", "nesterov"]:
        for t in [0, 4]:
            path = optimizer("Momentum", 1, 3, dict(alpha=0.8, beta=0.3, norm_coefficient=0.02, mode=mode),
                             f"momentum_{mode}_{t}")
            xn, vn = run_onyx(path, {"R": np.array(0.1), "T": np.array(t, np.int64), "X0": x, "G0": g, "V0": v})
            gr = 0.02 * x + g
            v_new = 0.8 * v + (0.3 if t > 0 else 1.0) * gr
            x_new = x - 0.1 * (gr + 0.8 * v_new) if mode == "nesterov" else x - 0.1 * v_new
            np.testing.assert_allclose(vn, v_new, rtol=1e-6)
            np.testing.assert_allclose(xn, x_new, rtol=1e-6)


def test_adam_bias_correction_and_post_norm():
    x, g = np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.1, -1.0])
    v, h = np.array([0.1, 0.2, 0.3]), np.array([0.4, 0.5, 0.6])
    path = optimizer("Adam", 1, 4, dict(alpha=0.9, beta=0.99, epsilon=1e-4, norm_coefficient=0.01,
                                        norm_coefficient_post=0.05), "adam_post")
    xn, vn, hn = run_onyx(path, {"R": np.array(0.2), "T": np.array(5, np.int64), "X0": x, "G0": g, "V0": v, "H0": h})
    gr = 0.01 * x + g
    v_new = 0.9 * v + 0.1 * gr
    h_new = 0.99 * h + 0.01 * gr * gr
    rate = 0.2 * np.sqrt(1 - 0.99 ** 5) / (1 - 0.9 ** 5)
    x_new = (1 - 0.05) * (x - rate * v_new / (np.sqrt(h_new) + 1e-4))
    np.testing.assert_allclose(vn, v_new, rtol=1e-5)
    np.testing.assert_allclose(hn, h_new, rtol=1e-5)
    np.testing.assert_allclose(xn, x_new, rtol=1e-5)
