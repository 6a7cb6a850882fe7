"""Providers, device, version and the process-wide logger and thread-pool settings."""
from onyx import _C

# ONNX Runtime 1.31.1's get_all_providers(): every provider name a program may ask for. Onyx runs
# the ones get_available_providers() lists; asking for another falls back to CPU (see
# inference_session.normalize_providers).
_ALL_PROVIDERS = [
    "NvTensorRTRTXExecutionProvider", "TensorrtExecutionProvider", "CUDAExecutionProvider",
    "MIGraphXExecutionProvider", "OpenVINOExecutionProvider", "DnnlExecutionProvider",
    "VitisAIExecutionProvider", "QNNExecutionProvider", "NnapiExecutionProvider",
    "VSINPUExecutionProvider", "JsExecutionProvider", "CoreMLExecutionProvider", "ACLExecutionProvider",
    "DmlExecutionProvider", "RknpuExecutionProvider", "WebNNExecutionProvider", "WebGpuExecutionProvider",
    "XnnpackExecutionProvider", "CANNExecutionProvider", "AzureExecutionProvider", "CPUExecutionProvider",
]

# ONNX Runtime's default logger: warnings and above (2), verbosity 0. Sessions and runs whose
# log_severity_level is -1 take these.
_logger = {"severity": 2, "verbosity": 0}


def get_all_providers():
    return list(_ALL_PROVIDERS)


def get_available_providers():
    return list(_C.available_providers())


def get_device():
    return "GPU" if "CUDAExecutionProvider" in _C.available_providers() else "CPU"


def get_version_string():
    return _C.__version__


def get_build_info():
    return f"Onyx Build Info: version={_C.__version__}, providers={','.join(get_available_providers())}"


def _check_severity(level, what):
    if not isinstance(level, int) or isinstance(level, bool) or not 0 <= level <= 4:
        raise ValueError(f"{what} must be an int in [0, 4] (0 verbose ... 4 fatal), got {level!r}")


def set_default_logger_severity(severity):
    """Severity of the default logger: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal."""
    _check_severity(severity, "set_default_logger_severity")
    _logger["severity"] = severity


def set_default_logger_verbosity(verbosity):
    """Verbose messages up to this level are shown when the severity is 0."""
    if not isinstance(verbosity, int) or verbosity < 0:
        raise ValueError(f"set_default_logger_verbosity needs an int >= 0, got {verbosity!r}")
    _logger["verbosity"] = verbosity


def default_logger_severity():
    return _logger["severity"]


def default_logger_verbosity():
    return _logger["verbosity"]


def set_global_thread_pool_sizes(intra_op_num_threads=0, inter_op_num_threads=0):
    """Process-wide thread pools for sessions with use_per_session_threads = False."""
    _C.set_global_thread_pools(int(intra_op_num_threads), int(inter_op_num_threads))
