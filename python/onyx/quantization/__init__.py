"""onyx.quantization: ONNX Runtime's quantization tool under the same names (quantize_dynamic,
quantize_static, quantize with StaticQuantConfig / DynamicQuantConfig, CalibrationDataReader,
QuantType, QuantFormat, CalibrationMethod, quant_pre_process), writing standard QDQ or QOperator
models. Needs the `onnx` package (pip install onnx). What it supports and what it leaves out:
docs/quantization.md."""
from onyx.quantization.preprocess import quant_pre_process
from onyx.quantization.quant_types import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType
from onyx.quantization.quantize import (DynamicQuantConfig, StaticQuantConfig, quantize, quantize_dynamic,
                                        quantize_static)

__all__ = ["CalibrationDataReader", "CalibrationMethod", "DynamicQuantConfig", "QuantFormat", "QuantType",
           "StaticQuantConfig", "quant_pre_process", "quantize", "quantize_dynamic", "quantize_static"]
