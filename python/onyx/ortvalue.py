"""OrtValue, IOBinding and OrtDevice as ONNX Runtime has them. Values live on the CPU (the one
device this build has); a NumPy array given to an OrtValue or a binding is used in place."""
from enum import IntEnum

import numpy as np

from onyx import _C


def _check_cpu(device_type, device_id=0, what="device"):
    if str(device_type).lower() != "cpu":
        raise _C.InvalidArgument(f"{what} '{device_type}': Onyx keeps values on the CPU only (device 'cpu')")


class OrtDeviceVendorId(IntEnum):
    NONE = 0x0000
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


class OrtDevice:
    """A device description (ORT's OrtDevice); Onyx's values are on device 'cpu', id 0."""

    _TYPES = {"cpu": 0, "gpu": 1, "cuda": 1, "npu": 2}

    def __init__(self, device_type="cpu", device_id=0, vendor_id=OrtDeviceVendorId.NONE):
        self._type, self._id, self._vendor = device_type, device_id, vendor_id

    @staticmethod
    def make(ort_device_name, device_id, vendor_id=-1):
        if ort_device_name.lower() not in OrtDevice._TYPES:
            raise Exception("Unsupported device type: " + ort_device_name)
        return OrtDevice(ort_device_name.lower(), device_id, max(vendor_id, 0))

    def device_id(self):
        return self._id

    def device_type(self):
        return self._TYPES[self._type]

    def device_vendor_id(self):
        return int(self._vendor)

    def device_mem_type(self):
        return 0


class OrtValue:
    """A tensor, sequence, map or None held by Onyx. From NumPy, the tensor views the array."""

    def __init__(self, ortvalue, numpy_obj=None):
        if not isinstance(ortvalue, _C.OrtValue):
            raise ValueError("`Provided ortvalue` needs to be of type `onyx.capi.onnxruntime_pybind11_state.OrtValue`")
        self._ortvalue = ortvalue
        self._numpy_obj = numpy_obj  # as ORT: the array backing the value stays referenced here too

    def _get_c_value(self):
        return self._ortvalue

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj, /, device_type="cpu", device_id=0, vendor_id=-1):
        _check_cpu(device_type, device_id, "ortvalue_from_numpy")
        return cls(_C.OrtValue.ortvalue_from_numpy(numpy_obj), numpy_obj)

    @classmethod
    def ortvalue_from_numpy_with_onnx_type(cls, data, /, onnx_element_type):
        """`data`'s bytes read as the ONNX type (same element size): e.g. uint16 bits as bfloat16."""
        return cls(_C.OrtValue.ortvalue_from_numpy_with_onnx_type(data, int(onnx_element_type)), data)

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape, element_type, device_type="cpu", device_id=0, vendor_id=-1,
                                     memory_info=None):
        """A new tensor (uninitialized); element_type: a NumPy type or an ONNX TensorProto type number."""
        _check_cpu(device_type, device_id, "ortvalue_from_shape_and_type")
        if memory_info is not None:
            raise _C.NotImplemented("ortvalue_from_shape_and_type(memory_info=...): Onyx has no OrtMemoryInfo")
        return cls(_C.OrtValue.ortvalue_from_shape_and_type([int(d) for d in shape], element_type))

    @classmethod
    def from_dlpack(cls, data, /):
        """A value over a DLPack producer's memory (no copy): NumPy reads the capsule."""
        array = np.from_dlpack(data)
        return cls(_C.OrtValue.ortvalue_from_numpy(array), array)

    def __dlpack__(self, *, stream=None):
        return self.numpy().__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if copy is not None:
            return np.array(arr, dtype=dtype, copy=copy)
        return arr if dtype is None else np.asarray(arr, dtype=dtype)

    def data_ptr(self):
        return self._ortvalue.data_ptr()

    def device_name(self):
        return self._ortvalue.device_name().lower()

    def shape(self):
        return self._ortvalue.shape()

    def data_type(self):
        return self._ortvalue.data_type()

    def element_type(self):
        return self._ortvalue.element_type()

    def tensor_size_in_bytes(self):
        return self._ortvalue.tensor_size_in_bytes()

    def has_value(self):
        return self._ortvalue.has_value()

    def is_tensor(self):
        return self._ortvalue.is_tensor()

    def is_sparse_tensor(self):
        return False  # Onyx has no sparse values at run time

    def is_tensor_sequence(self):
        return self._ortvalue.is_tensor_sequence()

    def numpy(self):
        """The tensor as a NumPy array over the same bytes (no copy)."""
        return self._ortvalue.numpy()

    def update_inplace(self, data):
        """Copies `data` (array or OrtValue of the same dtype and shape) into this value's buffer."""
        if isinstance(data, OrtValue):
            self._ortvalue.update_inplace(data._ortvalue)
            return
        if not isinstance(data, np.ndarray):
            raise TypeError("data must be a numpy.ndarray or an OrtValue.")
        self._ortvalue.update_inplace(np.ascontiguousarray(data))


def copy_tensors(src, dst, stream=None):
    """Copies each source tensor into the destination of the same index, in place."""
    if len(src) != len(dst):
        raise ValueError(f"copy_tensors: {len(src)} sources for {len(dst)} destinations")
    for s, d in zip(src, dst):
        d.update_inplace(s)


class IOBinding:
    """Inputs and outputs bound to a session before running it. A bound output buffer (an OrtValue
    or a pointer) is written in place by run_with_iobinding, not copied."""

    def __init__(self, session):
        self._session = session._sess
        self._inputs = {}  # name -> _C.OrtValue
        self._outputs = {}  # name -> _C.OrtValue (preallocated) or None (Onyx allocates)
        self._numpy_obj_references = {}
        self._results = None

    def bind_cpu_input(self, name, arr_on_cpu):
        self._numpy_obj_references[name] = arr_on_cpu
        self._inputs[name] = _C.OrtValue.ortvalue_from_numpy(np.asarray(arr_on_cpu))

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds memory at `buffer_ptr` (the caller keeps it alive until the run)."""
        _check_cpu(device_type, device_id, f"bind_input('{name}')")
        self._inputs[name] = _C.OrtValue.from_raw_pointer(element_type, [int(d) for d in shape], int(buffer_ptr))

    def bind_ortvalue_input(self, name, ortvalue):
        self._inputs[name] = ortvalue._ortvalue

    def synchronize_inputs(self):
        pass  # CPU values: nothing is in flight

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        _check_cpu(device_type, device_id, f"bind_output('{name}')")
        if buffer_ptr is None:
            self._outputs[name] = None
            return
        if element_type is None or shape is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
        self._outputs[name] = _C.OrtValue.from_raw_pointer(element_type, [int(d) for d in shape], int(buffer_ptr))

    def bind_ortvalue_output(self, name, ortvalue):
        self._outputs[name] = ortvalue._ortvalue

    def synchronize_outputs(self):
        pass

    def get_outputs(self):
        """The outputs of the last run, as OrtValues (bound buffers are the ones given)."""
        return [OrtValue(v) for v in (self._results or [])]

    def get_outputs_as_ortvaluevector(self):
        return list(self._results or [])

    def copy_outputs_to_cpu(self):
        """The outputs as NumPy arrays, copied (ORT's semantics: they outlive later runs)."""
        return [_copy(v.to_python()) for v in (self._results or [])]

    def clear_binding_inputs(self):
        self._inputs.clear()
        self._numpy_obj_references.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._results = None

    def _run(self, sess, run_options):
        names = list(self._outputs) or [name for name, _, _ in sess.outputs]
        preallocated = [self._outputs.get(name) for name in names]
        self._results = sess.run_bound(self._inputs, names, preallocated, run_options)


def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
