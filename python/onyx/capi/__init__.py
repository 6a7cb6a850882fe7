"""onyx.capi mirrors onnxruntime.capi, where programs import ONNX Runtime's exception classes."""
