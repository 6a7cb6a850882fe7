"""ONNX Runtime's quantization enums and the calibration data reader interface, under the same
names and values (onnxruntime.quantization.QuantType, QuantFormat, CalibrationMethod)."""
import abc
from enum import Enum

import numpy as np

# ONNX TensorProto element types (numbers from onnx.proto), so this module needs no onnx import.
_UINT8, _INT8 = 2, 3


class QuantType(Enum):
    QInt8 = 0
    QUInt8 = 1
    QFLOAT8E4M3FN = 2
    QInt16 = 3
    QUInt16 = 4
    QInt4 = 5
    QUInt4 = 6

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(t):
        try:
            return QuantType[t]
        except KeyError:
            raise ValueError(f"unknown QuantType {t!r}") from None

    @property
    def tensor_type(self):
        if self == QuantType.QInt8:
            return _INT8
        if self == QuantType.QUInt8:
            return _UINT8
        raise ValueError(f"QuantType.{self.name} is not supported by onyx.quantization (QInt8 and QUInt8 are)")


class QuantFormat(Enum):
    QOperator = 0
    QDQ = 1

    def __str__(self):
        return self.name

    @staticmethod
    def from_string(t):
        try:
            return QuantFormat[t]
        except KeyError:
            raise ValueError(f"unknown QuantFormat {t!r}") from None


class CalibrationMethod(Enum):
    MinMax = 0
    Entropy = 1
    Percentile = 2
    Distribution = 3


class CalibrationDataReader(metaclass=abc.ABCMeta):
    """Yields one input feed (a dict: input name -> numpy array) per call of get_next, then None."""

    @classmethod
    def __subclasshook__(cls, subclass):
        # Any class with a callable get_next counts, as in ONNX Runtime (duck-typed readers).
        return callable(getattr(subclass, "get_next", None))

    @abc.abstractmethod
    def get_next(self) -> dict:
        """The next feed, or None when there are no more."""

    def __iter__(self):
        return self

    def __next__(self):
        result = self.get_next()
        if result is None:
            raise StopIteration
        return result


def qtype_range(tensor_type, reduce_range=False, symmetric=False):
    """(qmin, qmax) of an 8-bit type: the full range, the narrowed symmetric int8 range
    [-127, 127], or the 7-bit range reduce_range asks for."""
    if tensor_type == _INT8:
        if reduce_range:
            return -64, 64
        return (-127, 127) if symmetric else (-128, 127)
    if tensor_type == _UINT8:
        return (0, 127) if reduce_range else (0, 255)
    raise ValueError(f"element type {tensor_type} is not an 8-bit integer type")


def np_dtype(tensor_type):
    return np.int8 if tensor_type == _INT8 else np.uint8
