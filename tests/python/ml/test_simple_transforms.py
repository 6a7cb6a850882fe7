"""Binarizer, Scaler, Normalizer, Imputer, ArrayFeatureExtractor, FeatureVectorizer against ONNX Runtime."""
import numpy as np
import pytest
from onnx import TensorProto

from ml_util import compare_with_ort, ml_model

rng = np.random.default_rng(7)


@pytest.mark.parametrize("threshold", [0.0, 0.5, -1.25])
def test_binarizer(threshold):
    x = rng.standard_normal((4, 6)).astype(np.float32)
    model = ml_model("Binarizer", {"X": x}, [("Y", TensorProto.FLOAT)], threshold=threshold)
    compare_with_ort(model, {"X": x}, "binarizer")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
@pytest.mark.parametrize("per_column", [False, True])
def test_scaler(dtype, per_column):
    x = (rng.standard_normal((5, 3)) * 10).astype(dtype)
    attrs = dict(offset=[1.5, -2.0, 0.25], scale=[0.5, 2.0, -1.0]) if per_column else dict(offset=[3.0], scale=[0.1])
    model = ml_model("Scaler", {"X": x}, [("Y", TensorProto.FLOAT)], **attrs)
    compare_with_ort(model, {"X": x}, "scaler")


@pytest.mark.parametrize("norm", ["MAX", "L1", "L2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_normalizer(norm, dtype):
    x = (rng.standard_normal((4, 5)) * 5).astype(dtype)
    x[1] = 0  # an all-zero row is copied as is
    model = ml_model("Normalizer", {"X": x}, [("Y", TensorProto.FLOAT)], norm=norm)
    compare_with_ort(model, {"X": x}, "normalizer")


@pytest.mark.parametrize("norm", ["MAX", "L2"])
def test_normalizer_1d(norm):
    x = rng.standard_normal(6).astype(np.float32)
    model = ml_model("Normalizer", {"X": x}, [("Y", TensorProto.FLOAT)], norm=norm)
    compare_with_ort(model, {"X": x}, "normalizer1d")


def test_imputer_nan_per_column():
    x = rng.standard_normal((4, 3)).astype(np.float32)
    x[0, 1] = np.nan
    x[2, 0] = np.nan
    x[3, 2] = np.nan
    model = ml_model("Imputer", {"X": x}, [("Y", TensorProto.FLOAT)], imputed_value_floats=[10.0, 20.0, 30.0],
                     replaced_value_float=float("nan"))
    compare_with_ort(model, {"X": x}, "imputer")


def test_imputer_float_value_single():
    x = np.array([[1, 0, 2], [0, 3, 0]], dtype=np.float32)
    model = ml_model("Imputer", {"X": x}, [("Y", TensorProto.FLOAT)], imputed_value_floats=[-7.0],
                     replaced_value_float=0.0)
    compare_with_ort(model, {"X": x}, "imputer")


def test_imputer_int64():
    x = np.array([[1, -1, 2], [-1, 3, -1]], dtype=np.int64)
    model = ml_model("Imputer", {"X": x}, [("Y", TensorProto.INT64)], imputed_value_int64s=[5, 6, 7],
                     replaced_value_int64=-1)
    compare_with_ort(model, {"X": x}, "imputer")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, "str"])
def test_array_feature_extractor(dtype):
    if dtype == "str":
        x = np.array([["a", "b", "c", "d"], ["e", "f", "g", "h"], ["i", "j", "k", "l"]])
    else:
        x = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    y = np.array([3, 0, 3], dtype=np.int64)
    model = ml_model("ArrayFeatureExtractor", {"X": x, "Y": y}, [("Z", elem_of(x))], ml_opset=1)
    compare_with_ort(model, {"X": x, "Y": y}, "afe")


def test_array_feature_extractor_3d_and_1d():
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    y = np.array([4, 1], dtype=np.int64)
    model = ml_model("ArrayFeatureExtractor", {"X": x, "Y": y}, [("Z", TensorProto.FLOAT)], ml_opset=1)
    compare_with_ort(model, {"X": x, "Y": y}, "afe")
    x1 = rng.standard_normal(5).astype(np.float32)
    model = ml_model("ArrayFeatureExtractor", {"X": x1, "Y": y}, [("Z", TensorProto.FLOAT)], ml_opset=1)
    compare_with_ort(model, {"X": x1, "Y": y}, "afe")


def elem_of(x):
    from ml_util import elem_type
    return elem_type(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_feature_vectorizer_pad_and_cut(dtype):
    # B is cut from 4 to 3 columns, C zero-padded from 1 to 2.
    a = (rng.standard_normal((3, 2)) * 10).astype(dtype)
    b = np.arange(12).reshape(3, 4).astype(dtype)
    c = (rng.standard_normal((3, 1)) * 10).astype(dtype)
    model = ml_model("FeatureVectorizer", {"A": a, "B": b, "C": c}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     inputdimensions=[2, 3, 2])
    compare_with_ort(model, {"A": a, "B": b, "C": c}, "fv")


def test_feature_vectorizer_int32():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.array([[7, -8], [9, 10]], dtype=np.int32)
    model = ml_model("FeatureVectorizer", {"A": a, "B": b}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     inputdimensions=[3, 2])
    compare_with_ort(model, {"A": a, "B": b}, "fv")


def test_normalizer_rejects_rank3():
    from ml_util import save
    from onyx_harness import run_onyx
    x = np.zeros((2, 3, 4), dtype=np.float32)
    model = ml_model("Normalizer", {"X": x}, [("Y", TensorProto.FLOAT)], norm="L1")
    with pytest.raises(RuntimeError, match="1-D"):
        run_onyx(save(model, "normalizer"), {"X": x})


def test_scaler_3d():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    model = ml_model("Scaler", {"X": x}, [("Y", TensorProto.FLOAT)], offset=[1.0, 2.0, 3.0], scale=[2.0, 3.0, 4.0])
    compare_with_ort(model, {"X": x}, "scaler")


def test_array_feature_extractor_rejects_bad_index():
    from ml_util import save
    from onyx_harness import run_onyx
    x = np.zeros((2, 3), dtype=np.float32)
    y = np.array([3], dtype=np.int64)
    model = ml_model("ArrayFeatureExtractor", {"X": x, "Y": y}, [("Z", TensorProto.FLOAT)], ml_opset=1)
    with pytest.raises(RuntimeError, match="out of range"):
        run_onyx(save(model, "afe"), {"X": x, "Y": y})
