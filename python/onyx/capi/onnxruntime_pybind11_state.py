"""Where ONNX Runtime keeps its C-level names: the exception classes (raised by onyx.capi._C for
the C++ error codes, with ONNX Runtime's names and message layout) and the C-level classes."""
from onyx._C import (  # noqa: F401
    EngineError,
    EPFail,
    Fail,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    ModelLoaded,
    NoModel,
    NoSuchFile,
    NotImplemented,  # noqa: A004 - ONNX Runtime's name
    RuntimeException,
)
from onyx._C import OrtValue  # noqa: F401
from onyx._C import RunOptions as _CRunOptions  # noqa: F401
from onyx._C import Session as InferenceSession  # noqa: F401
from onyx.session_options import (  # noqa: F401
    ExecutionMode,
    ExecutionOrder,
    GraphOptimizationLevel,
    RunOptions,
    SessionOptions,
)
from onyx.inference_session import ModelMetadata, NodeArg  # noqa: F401
from onyx.providers import (  # noqa: F401
    get_all_providers,
    get_available_providers,
    get_device,
    get_version_string,
    set_default_logger_severity,
    set_default_logger_verbosity,
)
