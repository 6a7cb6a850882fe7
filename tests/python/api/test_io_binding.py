"""IO binding: inputs from arrays, OrtValues or pointers; outputs into the caller's buffers, in place."""
import numpy as np
import onnxruntime
import pytest

import onyx
from api_models import relu_model, two_output_model
from onyx.capi import onnxruntime_pybind11_state as state

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.full((2, 3), -2, np.float32)


def expected():
    return onnxruntime.InferenceSession(two_output_model()).run(None, {"a": A, "b": B})


def test_preallocated_buffers_are_written_in_place():
    session = onyx.InferenceSession(two_output_model())
    binding = session.io_binding()
    binding.bind_cpu_input("a", A)
    binding.bind_ortvalue_input("b", onyx.OrtValue.ortvalue_from_numpy(B))
    total = np.zeros((2, 3), np.float32)
    product = np.zeros((2, 3), np.float32)
    binding.bind_output("sum", "cpu", 0, np.float32, list(total.shape), total.ctypes.data)
    binding.bind_ortvalue_output("prod", onyx.OrtValue.ortvalue_from_numpy(product))
    session.run_with_iobinding(binding)
    want = expected()
    np.testing.assert_allclose(total, want[0])  # the caller's own arrays hold the results
    np.testing.assert_allclose(product, want[1])
    outs = binding.get_outputs()
    assert [o.data_ptr() for o in outs] == [total.ctypes.data, product.ctypes.data]
    copies = binding.copy_outputs_to_cpu()
    assert not np.shares_memory(copies[0], total)
    np.testing.assert_allclose(copies[1], want[1])


def test_outputs_onyx_allocates():
    session = onyx.InferenceSession(two_output_model())
    binding = session.io_binding()
    binding.bind_cpu_input("a", A)
    binding.bind_cpu_input("b", B)
    binding.bind_output("prod")
    session.run_with_iobinding(binding)
    outs = binding.get_outputs()
    assert len(outs) == 1 and outs[0].device_name() == "cpu" and outs[0].shape() == [2, 3]
    np.testing.assert_allclose(outs[0].numpy(), expected()[1])


def test_raw_pointer_input_and_rebinding():
    session = onyx.InferenceSession(relu_model())
    x = np.array([[-1, 2, -3]], np.float32)
    binding = session.io_binding()
    binding.bind_input("x", "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
    binding.bind_output("y")
    session.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], [[0, 2, 0]])
    binding.clear_binding_inputs()
    binding.bind_cpu_input("x", -x)
    session.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], [[1, 0, 3]])
    binding.synchronize_inputs()
    binding.synchronize_outputs()
    binding.clear_binding_outputs()
    assert binding.get_outputs() == []


def test_bad_bindings_are_named():
    session = onyx.InferenceSession(relu_model())
    binding = session.io_binding()
    binding.bind_cpu_input("x", np.ones((1, 3), np.float32))
    wrong = np.zeros((1, 3), np.float64)
    binding.bind_ortvalue_output("y", onyx.OrtValue.ortvalue_from_numpy(wrong))
    with pytest.raises(state.InvalidArgument, match="'y'"):
        session.run_with_iobinding(binding)
    with pytest.raises(state.InvalidArgument, match="CPU only"):
        binding.bind_output("y", "cuda", 0)
    with pytest.raises(ValueError, match="element_type"):
        binding.bind_output("y", "cpu", 0, None, None, 1234)
    other = onyx.InferenceSession(relu_model())
    with pytest.raises(ValueError, match="session that created it"):
        other.run_with_iobinding(binding)


def test_ortvalue_api():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    value = onyx.OrtValue.ortvalue_from_numpy(x)
    assert value.shape() == [2, 3] and value.data_type() == "tensor(int64)" and value.element_type() == 7
    assert value.is_tensor() and value.has_value() and not value.is_tensor_sequence() and not value.is_sparse_tensor()
    assert value.tensor_size_in_bytes() == 48 and value.device_name() == "cpu"
    assert np.shares_memory(value.numpy(), x)
    value.update_inplace(np.full((2, 3), 9, np.int64))
    assert (x == 9).all()  # update_inplace writes the viewed buffer
    blank = onyx.OrtValue.ortvalue_from_shape_and_type([2, 2], np.float32)
    assert blank.shape() == [2, 2] and blank.data_type() == "tensor(float)"
    by_onnx_type = onyx.OrtValue.ortvalue_from_shape_and_type([3], 16)  # TensorProto.BFLOAT16
    assert by_onnx_type.data_type() == "tensor(bfloat16)"
    np.testing.assert_array_equal(np.asarray(value), x)
    round_trip = onyx.OrtValue.from_dlpack(value)
    assert round_trip.data_ptr() == value.data_ptr()
    with pytest.raises(state.InvalidArgument, match="dtype and shape must match"):
        value.update_inplace(np.zeros(3, np.int64))


def test_run_with_ortvaluevector_fills_the_fetches():
    session = onyx.InferenceSession(two_output_model())
    fetches = []
    session.run_with_ortvaluevector(None, ["a", "b"], [onyx.OrtValue.ortvalue_from_numpy(A)._ortvalue,
                                                       onyx.OrtValue.ortvalue_from_numpy(B)._ortvalue],
                                    ["prod"], fetches, [])
    np.testing.assert_allclose(onyx.OrtValue(fetches[0]).numpy(), expected()[1])


def test_copy_tensors_and_session_made_values():
    session = onyx.InferenceSession(relu_model())
    dst = session.create_ortvalue_from_shape_and_type([1, 3], np.float32, "cpu")
    onyx.copy_tensors([onyx.OrtValue.ortvalue_from_numpy(np.array([[1, 2, 3]], np.float32))], [dst])
    np.testing.assert_array_equal(dst.numpy(), [[1, 2, 3]])
    device = onyx.OrtDevice.make("cpu", 0)
    assert (device.device_type(), device.device_id()) == (0, 0)
    with pytest.raises(state.InvalidArgument, match="CPU only"):
        onyx.OrtValue.ortvalue_from_numpy(np.zeros(2), "cuda", 0)
