"""LabelEncoder (opsets 1, 2, 4), CategoryMapper and OneHotEncoder against ONNX Runtime."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from ml_util import compare_with_ort, ml_model


def test_label_encoder_opset1_string_to_int():
    x = np.array(["b", "zz", "a", "c", "b"])
    model = ml_model("LabelEncoder", {"X": x}, [("Y", TensorProto.INT64)], ml_opset=1,
                     classes_strings=["a", "b", "c"], default_int64=-7)
    compare_with_ort(model, {"X": x}, "le1")


def test_label_encoder_opset1_int_to_string():
    x = np.array([2, 0, 5, -1, 1], dtype=np.int64)
    model = ml_model("LabelEncoder", {"X": x}, [("Y", TensorProto.STRING)], ml_opset=1,
                     classes_strings=["a", "b", "c"], default_string="none")
    compare_with_ort(model, {"X": x}, "le1")


@pytest.mark.parametrize("keys,values,x,out", [
    ("keys_strings", "values_int64s", np.array([["a", "q"], ["c", "b"]]), TensorProto.INT64),
    ("keys_strings", "values_floats", np.array(["a", "q", "c"]), TensorProto.FLOAT),
    ("keys_int64s", "values_strings", np.array([1, 9, 3], dtype=np.int64), TensorProto.STRING),
    ("keys_int64s", "values_floats", np.array([3, 2, 8], dtype=np.int64), TensorProto.FLOAT),
    ("keys_floats", "values_int64s", np.array([1.5, 2.0, 0.0, 3.25], dtype=np.float32), TensorProto.INT64),
    ("keys_floats", "values_strings", np.array([3.25, 7.0], dtype=np.float32), TensorProto.STRING),
])
@pytest.mark.parametrize("ml_opset", [2, 4])
def test_label_encoder_lists(keys, values, x, out, ml_opset):
    table = {
        "keys_strings": ["a", "b", "c"], "keys_int64s": [1, 2, 3], "keys_floats": [1.5, 2.0, 3.25],
        "values_int64s": [10, 20, 30], "values_floats": [0.5, -1.5, 2.5], "values_strings": ["x", "y", "z"],
    }
    attrs = {keys: table[keys], values: table[values]}
    model = ml_model("LabelEncoder", {"X": x}, [("Y", out)], ml_opset=ml_opset, **attrs)
    compare_with_ort(model, {"X": x}, "le2")


def test_label_encoder_defaults():
    x = np.array(["a", "nope"])
    model = ml_model("LabelEncoder", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=2,
                     keys_strings=["a"], values_floats=[4.0], default_float=99.5)
    compare_with_ort(model, {"X": x}, "le2")
    x = np.array([5, 6], dtype=np.int64)
    model = ml_model("LabelEncoder", {"X": x}, [("Y", TensorProto.STRING)], ml_opset=2,
                     keys_int64s=[5], values_strings=["five"], default_string="other")
    compare_with_ort(model, {"X": x}, "le2")


def test_label_encoder_float_nan_key():
    x = np.array([np.nan, 1.0, 2.0], dtype=np.float32)
    model = ml_model("LabelEncoder", {"X": x}, [("Y", TensorProto.INT64)], ml_opset=4,
                     keys_floats=[float("nan"), 1.0], values_int64s=[100, 200])
    compare_with_ort(model, {"X": x}, "le4")


def _tensor_encoder(key_np, key_type, val_np, val_type):
    keys = np.array([1, 2, 3], dtype=key_np)
    vals = np.array([7, 8, 9], dtype=val_np)
    x = np.array([3, 1, 4, 2], dtype=key_np)
    model = ml_model("LabelEncoder", {"X": x}, [("Y", val_type)], ml_opset=4,
                     keys_tensor=helper.make_tensor("keys_tensor", key_type, [3], keys.tolist()),
                     values_tensor=helper.make_tensor("values_tensor", val_type, [3], vals.tolist()),
                     default_tensor=helper.make_tensor("default_tensor", val_type, [1], [-5]))
    return model, x


@pytest.mark.parametrize("key_np,key_type,val_np,val_type", [
    (np.int64, TensorProto.INT64, np.float64, TensorProto.DOUBLE),
    (np.float64, TensorProto.DOUBLE, np.int64, TensorProto.INT64),
    (np.int64, TensorProto.INT64, np.int64, TensorProto.INT64),
])
def test_label_encoder_tensor_attributes(key_np, key_type, val_np, val_type):
    model, x = _tensor_encoder(key_np, key_type, val_np, val_type)
    compare_with_ort(model, {"X": x}, "le4")


@pytest.mark.parametrize("key_np,key_type,val_np,val_type", [
    (np.int32, TensorProto.INT32, np.int16, TensorProto.INT16),
    (np.float64, TensorProto.DOUBLE, np.int32, TensorProto.INT32),
    (np.int16, TensorProto.INT16, np.int64, TensorProto.INT64),
])
def test_label_encoder_tensor_small_ints(key_np, key_type, val_np, val_type):
    # ONNX Runtime has no kernel for these opset-4 types: a plain lookup is the reference.
    from ml_util import save
    from onyx_harness import run_onyx
    model, x = _tensor_encoder(key_np, key_type, val_np, val_type)
    table = {1: 7, 2: 8, 3: 9}
    expected = np.array([table.get(int(v), -5) for v in x], dtype=val_np)
    got = run_onyx(save(model, "le4"), {"X": x})[0]
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_label_encoder_tensor_strings_default_implicit():
    x = np.array([1, 5], dtype=np.int64)
    model = ml_model("LabelEncoder", {"X": x}, [("Y", TensorProto.STRING)], ml_opset=4,
                     keys_int64s=[1],
                     values_tensor=helper.make_tensor("values_tensor", TensorProto.STRING, [1], [b"one"]))
    compare_with_ort(model, {"X": x}, "le4")


def test_category_mapper_both_directions():
    cats = dict(cats_strings=["cat", "dog", "eel"], cats_int64s=[3, 7, 11])
    x = np.array([["dog", "cow"], ["eel", "cat"]])
    model = ml_model("CategoryMapper", {"X": x}, [("Y", TensorProto.INT64)], ml_opset=1, default_int64=-9, **cats)
    compare_with_ort(model, {"X": x}, "catmap")
    x = np.array([7, 3, 4, 11], dtype=np.int64)
    model = ml_model("CategoryMapper", {"X": x}, [("Y", TensorProto.STRING)], ml_opset=1, default_string="?",
                     **cats)
    compare_with_ort(model, {"X": x}, "catmap")
    model = ml_model("CategoryMapper", {"X": x}, [("Y", TensorProto.STRING)], ml_opset=1, **cats)
    compare_with_ort(model, {"X": x}, "catmap")


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.float64])
def test_one_hot_encoder_numbers(dtype):
    x = np.array([[1, 4], [3, 9]], dtype=dtype)
    model = ml_model("OneHotEncoder", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     cats_int64s=[1, 3, 4, 8], zeros=1)
    compare_with_ort(model, {"X": x}, "ohe")


def test_one_hot_encoder_strings():
    x = np.array(["b", "a", "z"])
    model = ml_model("OneHotEncoder", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1,
                     cats_strings=["a", "b", "c"])
    compare_with_ort(model, {"X": x}, "ohe")


def test_one_hot_encoder_zeros_0_rejects_unknown():
    from ml_util import save
    from onyx_harness import run_onyx
    x = np.array([1, 2], dtype=np.int64)
    model = ml_model("OneHotEncoder", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, cats_int64s=[1], zeros=0)
    path = save(model, "ohe")
    with pytest.raises(RuntimeError, match="not a category"):
        run_onyx(path, {"X": x})
    ok = np.array([1, 1], dtype=np.int64)
    compare_with_ort(model, {"X": ok}, "ohe")


def test_one_hot_encoder_int32_reference():
    # ONNX Runtime has no int32 kernel: numpy is the reference.
    from ml_util import save
    from onyx_harness import run_onyx
    cats = [1, 3, 4, 8]
    x = np.array([[1, 4], [3, 9]], dtype=np.int32)
    model = ml_model("OneHotEncoder", {"X": x}, [("Y", TensorProto.FLOAT)], ml_opset=1, cats_int64s=cats)
    expected = (x[..., None] == np.array(cats)).astype(np.float32)
    got = run_onyx(save(model, "ohe"), {"X": x})[0]
    np.testing.assert_array_equal(got, expected)
