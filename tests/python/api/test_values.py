"""Values in and out of onyx sessions: every tensor element type (bfloat16, float8, 4- and 2-bit
types through ml_dtypes), strings, sequences, maps and optionals, checked against ONNX Runtime or
against ml_dtypes' own conversions; feeds viewed without a copy, outputs handed out without one."""
import ml_dtypes
import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto as TP
from onnx import helper

import onyx
from api_models import identity_model, map_model, model_bytes, optional_model, relu_model, sequence_model

NUMPY_TYPES = [
    (TP.FLOAT, np.float32), (TP.DOUBLE, np.float64), (TP.FLOAT16, np.float16), (TP.INT8, np.int8),
    (TP.UINT8, np.uint8), (TP.INT16, np.int16), (TP.UINT16, np.uint16), (TP.INT32, np.int32),
    (TP.UINT32, np.uint32), (TP.INT64, np.int64), (TP.UINT64, np.uint64), (TP.BOOL, np.bool_),
]


@pytest.mark.parametrize("elem_type,dtype", NUMPY_TYPES, ids=lambda v: str(v))
def test_numpy_types_match_onnxruntime(elem_type, dtype):
    model = identity_model(elem_type, opset=18)
    x = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    expected = onnxruntime.InferenceSession(model).run(None, {"x": x})[0]
    got = onyx.InferenceSession(model).run(None, {"x": x})[0]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def cast_model(src, dst, opset):
    x = helper.make_tensor_value_info("x", src, None)
    y = helper.make_tensor_value_info("y", dst, None)
    return model_bytes([helper.make_node("Cast", ["x"], ["y"], to=dst)], [x], [y], opsets=(("", opset),),
                       ir_version=11)


ML_TYPES = [
    (TP.BFLOAT16, ml_dtypes.bfloat16, 21), (TP.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, 21),
    (TP.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, 21), (TP.FLOAT8E5M2, ml_dtypes.float8_e5m2, 21),
    (TP.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, 21), (TP.INT4, ml_dtypes.int4, 21),
    (TP.UINT4, ml_dtypes.uint4, 21), (TP.FLOAT4E2M1, ml_dtypes.float4_e2m1fn, 23),
    (TP.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu, 24), (TP.INT2, ml_dtypes.int2, 25), (TP.UINT2, ml_dtypes.uint2, 25),
]


def values_for(elem_type):
    if elem_type in (TP.INT2,):
        return np.array([1, -2, 0, 1, -1, -2, 1], np.float32)
    if elem_type in (TP.UINT2,):
        return np.array([1, 2, 0, 3, 1, 2, 3], np.float32)
    if elem_type in (TP.UINT4, TP.FLOAT8E8M0):
        return np.array([0.5, 1, 2, 4, 6, 1, 2], np.float32) if elem_type == TP.FLOAT8E8M0 else \
            np.array([0, 1, 2, 7, 15, 3, 9], np.float32)
    return np.array([0.5, -1.5, 2, 3, -4, 6, 0], np.float32)  # odd length: a half-filled last byte


@pytest.mark.parametrize("elem_type,dtype,opset", ML_TYPES, ids=lambda v: str(v))
def test_ml_dtypes_in_and_out(elem_type, dtype, opset):
    # The reference is ml_dtypes' own conversion of the same numbers.
    values = values_for(elem_type)
    narrow = values.astype(dtype)
    got_in = onyx.InferenceSession(cast_model(elem_type, TP.FLOAT, opset)).run(None, {"x": narrow})[0]
    np.testing.assert_array_equal(got_in, narrow.astype(np.float32))
    got_out = onyx.InferenceSession(cast_model(TP.FLOAT, elem_type, opset)).run(None, {"x": values})[0]
    assert got_out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got_out.astype(np.float32), narrow.astype(np.float32))


def test_raw_bits_with_onnx_type():
    # bfloat16 as uint16 bits: ORT's ortvalue_from_numpy_with_onnx_type reads the same bytes.
    bits = np.array([1.5, -2.0, 3.0], ml_dtypes.bfloat16).view(np.uint16)
    value = onyx.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, TP.BFLOAT16)
    assert value.data_type() == "tensor(bfloat16)" and value.element_type() == TP.BFLOAT16
    out = onyx.InferenceSession(cast_model(TP.BFLOAT16, TP.FLOAT, 21)).run_with_ort_values(None, {"x": value})
    np.testing.assert_array_equal(out[0].numpy(), [1.5, -2.0, 3.0])
    with pytest.raises(onyx.capi.onnxruntime_pybind11_state.InvalidArgument, match="element sizes differ"):
        onyx.OrtValue.ortvalue_from_numpy_with_onnx_type(np.zeros(3, np.float32), TP.BFLOAT16)


@pytest.mark.parametrize("feed", [np.array(["a", "bé", ""], dtype=object), np.array(["a", "xyz"]),
                                  np.array([1, 2.5], dtype=object)], ids=["object", "unicode", "numbers"])
def test_strings_match_onnxruntime(feed):
    model = identity_model(TP.STRING, opset=18)
    expected = onnxruntime.InferenceSession(model).run(None, {"x": feed})[0]
    got = onyx.InferenceSession(model).run(None, {"x": feed})[0]
    assert got.dtype == object and got.tolist() == expected.tolist()


def test_bytes_are_raw_strings():
    # ORT stores str(b"ab") == "b'ab'"; onyx stores the bytes themselves (docs/python_api.md).
    got = onyx.InferenceSession(identity_model(TP.STRING, opset=18)).run(
        None, {"x": np.array([b"ab", b"c"], dtype=object)})[0]
    assert got.tolist() == ["ab", "c"]
    got = onyx.InferenceSession(identity_model(TP.STRING, opset=18)).run(None, {"x": np.array([b"ab", b"c"])})[0]
    assert got.tolist() == ["ab", "c"]


def both(model, feeds):
    return onnxruntime.InferenceSession(model).run(None, feeds), onyx.InferenceSession(model).run(None, feeds)


def test_sequences_in_and_out():
    feeds = {"s": [np.zeros(2, np.float32), np.ones(3, np.float32)], "x": np.arange(6, dtype=np.float32).reshape(3, 2)}
    expected, got = both(sequence_model(), feeds)
    assert int(got[0]) == int(expected[0]) == 2
    assert isinstance(got[1], list) and len(got[1]) == len(expected[1]) == 3
    for e, g in zip(expected[1], got[1]):
        np.testing.assert_array_equal(g, e)


def test_maps_in_and_out():
    feeds = {"m": {1: 1.5, 3: 2.5}, "p": np.array([[0.25, 0.75]], np.float32)}
    expected, got = both(map_model(), feeds)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1] == expected[1] == [{10: 0.25, 20: 0.75}]


@pytest.mark.parametrize("given", [np.array([1, 2], np.float32), None], ids=["value", "none"])
def test_optional_in_and_out(given):
    expected, got = both(optional_model(), {"o": given, "x": np.array([3, 4], np.float32)})
    assert bool(got[0]) == bool(expected[0]) == (given is not None)
    np.testing.assert_array_equal(got[1], expected[1])


def test_lists_and_scalars_take_the_model_type():
    # ORT converts non-array feeds to the input's element type; so does onyx.
    model = relu_model()
    expected = onnxruntime.InferenceSession(model).run(None, {"x": [[-1, 2, 3]]})[0]
    got = onyx.InferenceSession(model).run(None, {"x": [[-1, 2, 3]]})[0]
    assert got.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_feeds_are_viewed_not_copied():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = onyx.OrtValue.ortvalue_from_numpy(x)
    assert value.data_ptr() == x.ctypes.data  # the value views the array
    # Identity hands its input through, so the output is the feed's own buffer: never copied.
    out = onyx.InferenceSession(identity_model(TP.FLOAT, opset=18)).run_with_ort_values(None, {"x": value})[0]
    assert out.data_ptr() == x.ctypes.data


def test_non_contiguous_and_byteswapped_feeds_are_copied_once():
    model = relu_model()
    base = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    for x in (base[:, :3], base[:, :3].astype(">f4")):
        got = onyx.InferenceSession(model).run(None, {"x": x})[0]
        np.testing.assert_array_equal(got, np.maximum(np.asarray(x, np.float32), 0))


def test_outputs_view_the_engine_buffer():
    got = onyx.InferenceSession(relu_model()).run(None, {"x": np.array([[-1, 2, 3]], np.float32)})[0]
    assert not got.flags.owndata and type(got.base).__name__ == "PyCapsule"  # no copy: the tensor's bytes
    assert got.flags.writeable
    got[0, 0] = 5  # the array is the caller's to change


def test_output_that_is_a_feed_is_a_copy():
    # As in ORT, changing an output never changes the caller's input (or a weight).
    x = np.array([1, 2, 3], np.float32)
    got = onyx.InferenceSession(identity_model(TP.FLOAT, opset=18)).run(None, {"x": x})[0]
    assert not np.shares_memory(got, x)
    got[0] = 100
    assert x[0] == 1


def test_outputs_outlive_the_session():
    sess = onyx.InferenceSession(relu_model())
    got = sess.run(None, {"x": np.array([[-1, 2, 3]], np.float32)})[0]
    del sess
    np.testing.assert_array_equal(got, [[0, 2, 3]])


def test_wrong_dtype_names_both():
    with pytest.raises(onyx.capi.onnxruntime_pybind11_state.InvalidArgument, match="double.*float|float.*double"):
        onyx.InferenceSession(relu_model()).run(None, {"x": np.zeros((1, 3), np.float64)})


def test_type_without_onnx_counterpart_is_named():
    with pytest.raises(onyx.capi.onnxruntime_pybind11_state.InvalidArgument, match="datetime64"):
        onyx.OrtValue.ortvalue_from_numpy(np.zeros(2, "datetime64[s]"))


def weight_output_model():
    from onnx import numpy_helper

    y = helper.make_tensor_value_info("y", TP.FLOAT, [3])
    w = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "w")
    return model_bytes([helper.make_node("Identity", ["w"], ["y"])], [], [y], [w])


def test_writing_an_output_never_changes_the_model():
    # An output that is a weight comes out as a copy, from run and from run_with_ort_values.
    session = onyx.InferenceSession(weight_output_model())
    session.run(None, {})[0][:] = 0
    value = session.run_with_ort_values(None, {})[0]
    value.numpy()[:] = 0
    np.testing.assert_array_equal(session.run(None, {})[0], [1, 2, 3])
