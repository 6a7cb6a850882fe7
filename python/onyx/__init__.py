"""Onyx, an ONNX inference engine, with ONNX Runtime's Python API: `import onyx as ort` runs programs
written for `import onnxruntime as ort`. What is supported and what is left out: docs/python_api.md."""
import contextlib  # noqa: F401 - ONNX Runtime's top level has it too

from onyx import _C
from onyx.capi import onnxruntime_pybind11_state as _state  # noqa: F401 - the exception classes
from onyx.inference_session import InferenceSession, ModelMetadata, NodeArg
from onyx.ortvalue import IOBinding, OrtDevice, OrtDeviceVendorId, OrtValue, copy_tensors
from onyx.providers import (
    get_all_providers,
    get_available_providers,
    get_build_info,
    get_device,
    get_version_string,
    set_default_logger_severity,
    set_default_logger_verbosity,
    set_global_thread_pool_sizes,
)
from onyx.session_options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions

__version__ = _C.__version__
version = __version__
package_name = "onyx"
cuda_version = ""  # built without CUDA
import_capi_exception = None
SessionIOBinding = IOBinding

__all__ = [
    "ExecutionMode", "ExecutionOrder", "GraphOptimizationLevel", "IOBinding", "InferenceSession", "ModelMetadata",
    "NodeArg", "OrtDevice", "OrtDeviceVendorId", "OrtValue", "RunOptions", "SessionIOBinding", "SessionOptions",
    "copy_tensors", "get_all_providers", "get_available_providers", "get_build_info", "get_device",
    "get_version_string", "set_default_logger_severity", "set_default_logger_verbosity",
    "set_global_thread_pool_sizes", "__version__",
]


def has_collective_ops():
    return False  # no collective (multi-device) ops in Onyx


def disable_telemetry_events():
    """Onyx sends no telemetry, so there is nothing to turn off."""


def enable_telemetry_events():
    """Onyx has no telemetry to turn on; kept so ORT programs run unchanged."""
    raise _C.NotImplemented("enable_telemetry_events: Onyx has no telemetry")


def print_debug_info():
    print(f"onyx {__version__}: {get_build_info()}")
