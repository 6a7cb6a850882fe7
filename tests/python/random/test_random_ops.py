"""Random kernels. ONNX does not specify the generator, so values cannot be compared with
another runtime; these tests check what the spec does fix: shapes and types, ranges, that a
seed fixes the stream, and the distributions' moments and frequencies (statistical bounds
wide enough that a correct generator fails them with negligible probability)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import run_onyx, save_model

F = TensorProto.FLOAT


def model(node, inputs, outputs, opset, name):
    graph = helper.make_graph([node], name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onyx-tests")
    m.ir_version = 8
    return save_model(m, name + ".onnx")


def out(name):
    return [helper.make_tensor_value_info(name, TensorProto.UNDEFINED, None)]


@pytest.mark.parametrize("dtype,np_type", [(TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
                                           (TensorProto.FLOAT16, np.float16)])
def test_random_uniform_range_seed_and_moments(dtype, np_type):
    node = helper.make_node("RandomUniform", [], ["y"], shape=[200, 500], low=-2.0, high=3.0, seed=7.0, dtype=dtype)
    path = model(node, [], out("y"), 16, f"random_uniform_{dtype}")
    (a,), (b,) = run_onyx(path, {}), run_onyx(path, {})
    assert a.dtype == np_type and a.shape == (200, 500)
    np.testing.assert_array_equal(a, b)  # the seed fixes the values
    assert a.min() >= -2.0 and a.max() <= 3.0
    x = a.astype(np.float64)
    assert abs(x.mean() - 0.5) < 0.02 and abs(x.var() - 25 / 12) < 0.05
    hist, _ = np.histogram(x, bins=10, range=(-2, 3))
    assert np.all(np.abs(hist - 10000) < 600)


def test_random_uniform_without_seed_differs_between_runs():
    node = helper.make_node("RandomUniform", [], ["y"], shape=[1000])
    path = model(node, [], out("y"), 16, "random_uniform_noseed")
    (a,), (b,) = run_onyx(path, {}), run_onyx(path, {})
    assert not np.array_equal(a, b)


def test_random_normal_moments():
    node = helper.make_node("RandomNormal", [], ["y"], shape=[100000], mean=1.5, scale=2.0, seed=3.0,
                            dtype=TensorProto.DOUBLE)
    path = model(node, [], out("y"), 16, "random_normal")
    (x,) = run_onyx(path, {})
    assert x.dtype == np.float64
    assert abs(x.mean() - 1.5) < 0.03 and abs(x.std() - 2.0) < 0.03
    assert abs(np.mean(np.abs(x - 1.5) < 2.0) - 0.6827) < 0.01  # one sigma


def test_like_variants_take_shape_and_type():
    x = np.zeros((3, 4, 5), np.float64)
    for op in ["RandomUniformLike", "RandomNormalLike"]:
        node = helper.make_node(op, ["x"], ["y"], seed=1.0)
        path = model(node, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3, 4, 5])], out("y"), 16, op)
        (y,) = run_onyx(path, {"x": x})
        assert y.shape == x.shape and y.dtype == np.float64
        node = helper.make_node(op, ["x"], ["y"], dtype=TensorProto.FLOAT)
        path = model(node, [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3, 4, 5])], out("y"), 16,
                     op + "_dtype")
        (y,) = run_onyx(path, {"x": x})
        assert y.shape == x.shape and y.dtype == np.float32


def test_bernoulli_frequencies():
    p = np.tile(np.array([0.0, 0.25, 0.5, 0.9, 1.0], np.float32), (20000, 1))
    node = helper.make_node("Bernoulli", ["p"], ["y"], seed=5.0, dtype=TensorProto.INT32)
    path = model(node, [helper.make_tensor_value_info("p", F, list(p.shape))], out("y"), 15, "bernoulli_freq")
    (y,) = run_onyx(path, {"p": p})
    assert y.dtype == np.int32 and set(np.unique(y)) <= {0, 1}
    freq = y.mean(axis=0)
    assert freq[0] == 0 and freq[4] == 1
    np.testing.assert_allclose(freq[1:4], [0.25, 0.5, 0.9], atol=0.015)


def test_multinomial_frequencies():
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 1e-9]], np.float32))
    node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=30000, seed=2.0, dtype=TensorProto.INT64)
    path = model(node, [helper.make_tensor_value_info("x", F, [2, 3])], out("y"), 7, "multinomial_freq")
    (y,) = run_onyx(path, {"x": logits})
    assert y.shape == (2, 30000) and y.dtype == np.int64
    for row, probs in zip(y, np.exp(logits)):
        freq = np.bincount(row, minlength=3) / row.size
        np.testing.assert_allclose(freq, probs / probs.sum(), atol=0.012)


def test_bernoulli_rejects_probabilities_outside_unit_interval():
    node = helper.make_node("Bernoulli", ["p"], ["y"])
    path = model(node, [helper.make_tensor_value_info("p", F, [2])], out("y"), 15, "bernoulli_bad")
    with pytest.raises(RuntimeError, match="outside"):
        run_onyx(path, {"p": np.array([0.5, 1.5], np.float32)})
