"""The `onnx` package, imported only when the quantizer runs (it is an optional dependency)."""


def onnx_module():
    try:
        import onnx
    except ImportError as e:
        raise ImportError(
            "onyx.quantization needs the `onnx` package to read and write models: "
            "pip install onnx (or pip install 'onyx[quantization]')") from e
    return onnx
