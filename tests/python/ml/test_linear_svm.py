"""LinearClassifier, LinearRegressor, SVMClassifier and SVMRegressor against ONNX Runtime."""
import numpy as np
import pytest
from onnx import TensorProto

from ml_util import compare_with_ort, ml_model

rng = np.random.default_rng(11)
POSTS = ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"]


def classifier_outputs(strings):
    return [("Y", TensorProto.STRING if strings else TensorProto.INT64), ("Z", TensorProto.FLOAT)]


def labels(strings, n):
    return dict(classlabels_strings=[f"c{i}" for i in range(n)]) if strings else dict(classlabels_ints=[3 + 2 * i for i in range(n)])


@pytest.mark.parametrize("post", POSTS)
@pytest.mark.parametrize("strings", [False, True])
def test_linear_classifier_multiclass(post, strings):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    scale = 0.2 if post == "PROBIT" else 1.0  # PROBIT wants scores inside (0, 1)
    coef = (rng.standard_normal(12) * scale).tolist()
    inter = (np.array([0.5, 0.4, 0.6]) if post == "PROBIT" else rng.standard_normal(3)).tolist()
    model = ml_model("LinearClassifier", {"X": x}, classifier_outputs(strings), ml_opset=1,
                     coefficients=coef, intercepts=inter, post_transform=post, **labels(strings, 3))
    compare_with_ort(model, {"X": x}, "linclf")


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("strings", [False, True])
def test_linear_classifier_binary(post, strings):
    x = rng.standard_normal((5, 3)).astype(np.float32)
    model = ml_model("LinearClassifier", {"X": x}, classifier_outputs(strings), ml_opset=1,
                     coefficients=rng.standard_normal(3).tolist(), intercepts=[0.1], post_transform=post,
                     **labels(strings, 2))
    compare_with_ort(model, {"X": x}, "linclf")


def test_linear_classifier_binary_needs_two_labels():
    from ml_util import save
    from onyx_harness import run_onyx
    x = rng.standard_normal((2, 3)).astype(np.float32)
    model = ml_model("LinearClassifier", {"X": x}, classifier_outputs(False), ml_opset=1,
                     coefficients=[1.0, 2.0, 3.0], intercepts=[0.1], classlabels_ints=[4])
    with pytest.raises(RuntimeError, match="exactly 2 class labels"):
        run_onyx(save(model, "linclf"), {"X": x})


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_linear_classifier_input_types(dtype):
    x = (rng.standard_normal((4, 3)) * 4).astype(dtype)
    model = ml_model("LinearClassifier", {"X": x}, classifier_outputs(False), ml_opset=1,
                     coefficients=rng.standard_normal(6).tolist(), intercepts=[0.2, -0.3], **labels(False, 2))
    compare_with_ort(model, {"X": x}, "linclf")


def test_linear_classifier_1d_input():
    x = rng.standard_normal(3).astype(np.float32)
    model = ml_model("LinearClassifier", {"X": x}, classifier_outputs(False), ml_opset=1,
                     coefficients=rng.standard_normal(9).tolist(), intercepts=[0.0, 0.1, 0.2], **labels(False, 3))
    compare_with_ort(model, {"X": x}, "linclf")


@pytest.mark.parametrize("targets", [1, 3])
@pytest.mark.parametrize("post", ["NONE", "SOFTMAX", "LOGISTIC", "PROBIT"])
def test_linear_regressor(targets, post):
    x = rng.standard_normal((5, 4)).astype(np.float32)
    scale = 0.1 if post == "PROBIT" else 1.0
    attrs = dict(coefficients=(rng.standard_normal(4 * targets) * scale).tolist(), targets=targets, post_transform=post)
    attrs["intercepts"] = [0.5] * targets if post == "PROBIT" else rng.standard_normal(targets).tolist()
    model = ml_model("LinearRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, **attrs)
    compare_with_ort(model, {"X": x}, "linreg")


def test_linear_regressor_no_intercept():
    x = rng.standard_normal((3, 2)).astype(np.float32)
    model = ml_model("LinearRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     coefficients=[0.5, -1.5, 2.0, 0.25], targets=2)
    compare_with_ort(model, {"X": x}, "linreg")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_linear_regressor_input_types(dtype):
    # ONNX Runtime only has a float kernel: numpy is the reference for the other input types.
    from ml_util import save
    from onyx_harness import run_onyx
    x = (rng.standard_normal((3, 2)) * 5).astype(dtype)
    coef = np.array([[0.5, -1.5], [2.0, 0.25]], dtype=np.float32)
    model = ml_model("LinearRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     coefficients=coef.reshape(-1).tolist(), intercepts=[1.0, -1.0], targets=2)
    expected = x.astype(np.float32) @ coef.T + np.array([1.0, -1.0], dtype=np.float32)
    got = run_onyx(save(model, "linreg"), {"X": x})[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


KERNELS = [("LINEAR", [0.0, 0.0, 0.0]), ("RBF", [0.3, 0.0, 0.0]), ("POLY", [0.5, 1.0, 2.0]),
           ("POLY", [0.2, 0.5, 3.0]), ("SIGMOID", [0.4, 0.1, 0.0])]


def svc_attrs(n_classes, per_class, features, kernel, proba, post, strings):
    vectors = n_classes * per_class
    attrs = dict(kernel_type=kernel[0], kernel_params=kernel[1], vectors_per_class=[per_class] * n_classes,
                 support_vectors=rng.standard_normal(vectors * features).tolist(),
                 coefficients=rng.standard_normal((n_classes - 1) * vectors).tolist(),
                 rho=rng.standard_normal(n_classes * (n_classes - 1) // 2).tolist(), post_transform=post,
                 **labels(strings, n_classes))
    if proba:
        pairs = n_classes * (n_classes - 1) // 2
        attrs["prob_a"] = (rng.standard_normal(pairs) - 2).tolist()
        attrs["prob_b"] = (rng.standard_normal(pairs) * 0.1).tolist()
    return attrs


def _classifier(attrs, x, strings):
    model = ml_model("SVMClassifier", {"X": x}, classifier_outputs(strings), ml_opset=1, **attrs)
    compare_with_ort(model, {"X": x}, "svc", rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("proba", [False, True])
def test_svm_classifier_svc(kernel, n_classes, proba):
    x = rng.standard_normal((7, 3)).astype(np.float32)
    _classifier(svc_attrs(n_classes, 2, 3, kernel, proba, "NONE", False), x, False)


@pytest.mark.parametrize("post", ["LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("proba", [False, True])
def test_svm_classifier_post_transforms(post, n_classes, proba):
    x = rng.standard_normal((5, 2)).astype(np.float32)
    _classifier(svc_attrs(n_classes, 3, 2, KERNELS[1], proba, post, True), x, True)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC"])
def test_svm_classifier_linear_mode(n_classes, positive, post):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    coef = rng.standard_normal(n_classes * 4)
    if positive:
        coef = np.abs(coef) * 0.2
    attrs = dict(coefficients=coef.tolist(), rho=[0.1], kernel_type="RBF", kernel_params=[0.1, 0.0, 0.0],
                 post_transform=post, **labels(False, n_classes))
    _classifier(attrs, x, False)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32])
def test_svm_classifier_input_types(dtype):
    x = (rng.standard_normal((4, 3)) * 2).astype(dtype)
    _classifier(svc_attrs(3, 1, 3, KERNELS[1], False, "NONE", False), x, False)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("one_class", [0, 1])
def test_svm_regressor_svc(kernel, one_class):
    x = rng.standard_normal((6, 3)).astype(np.float32)
    attrs = dict(kernel_type=kernel[0], kernel_params=kernel[1], n_supports=4,
                 support_vectors=rng.standard_normal(12).tolist(), coefficients=rng.standard_normal(4).tolist(),
                 rho=[0.3], one_class=one_class)
    model = ml_model("SVMRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, **attrs)
    compare_with_ort(model, {"X": x}, "svr", rtol=1e-3, atol=1e-4)


def test_svm_regressor_linear_mode():
    x = rng.standard_normal((5, 3)).astype(np.float32)
    model = ml_model("SVMRegressor", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     coefficients=[0.5, -0.25, 1.5], rho=[-0.4], kernel_params=[0.0, 0.0, 0.0])
    compare_with_ort(model, {"X": x}, "svr")
