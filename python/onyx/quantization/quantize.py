"""quantize_static and quantize_dynamic with ONNX Runtime's arguments and defaults
(onnxruntime.quantization.quantize_static / quantize_dynamic, 1.31)."""
import json
import os

from onyx.quantization._onnx import onnx_module
from onyx.quantization.calibrate import calibrate, read_feeds
from onyx.quantization.quant_types import CalibrationMethod, QuantFormat, QuantType
from onyx.quantization.quantizer import (DYNAMIC_OPS, STATIC_OPS, Options, ai_onnx_opset, assign_params,
                                         build_plan, write_dynamic, write_qdq, write_qoperator)

# extra_options keys onyx.quantization honours, with their defaults (None: computed).
STATIC_KEYS = {
    "ActivationSymmetric": False, "WeightSymmetric": None, "EnableSubgraph": False,
    "ForceQuantizeNoInputCheck": False, "MatMulConstBOnly": False, "AddQDQPairToWeight": False,
    "OpTypesToExcludeOutputQuantization": [], "DedicatedQDQPair": False, "QDQOpTypePerChannelSupportToAxis": {},
    "QDQKeepRemovableActivations": False, "QuantizeBias": True, "MinimumRealRange": None,
    "CalibTensorRangeSymmetric": False, "CalibMovingAverage": False, "CalibMovingAverageConstant": 0.01,
    "CalibPercentile": 99.999, "CalibNumBins": None, "CalibNumQuantizedBins": 128,
}
DYNAMIC_KEYS = {"WeightSymmetric": None, "EnableSubgraph": False, "MatMulConstBOnly": True,
                "ActivationSymmetric": False}
# QDQ only: the QOperator ops fix the per-channel axis (QLinearConv: output channels, QGemm: N)
QDQ_ONLY_KEYS = ("AddQDQPairToWeight", "OpTypesToExcludeOutputQuantization", "DedicatedQDQPair",
                 "QDQOpTypePerChannelSupportToAxis")


class QuantizeResult:
    """What the quantizer wrote and why: the quantized model, the plan (nodes, roles,
    parameters) and the calibrated ranges. The command's report reads it."""

    def __init__(self, model, plan, ranges):
        self.model = model
        self.plan = plan
        self.ranges = ranges


def _load(model_input):
    onnx = onnx_module()
    if isinstance(model_input, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(model_input)
        return model
    return onnx.load(os.fspath(model_input))


def _save(model, path, external):
    onnx = onnx_module()
    path = os.fspath(path)
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(path) + ".data", size_threshold=1024)
    else:
        onnx.save_model(model, path)


def _check_extra(extra, allowed, what):
    extra = dict(extra or {})
    unknown = sorted(k for k in extra if k not in allowed)
    if unknown:
        raise ValueError(f"{what}: extra_options {unknown} are not supported by onyx.quantization "
                         f"(supported: {sorted(allowed)}; docs/quantization.md)")
    merged = dict(allowed)
    merged.update(extra)
    if merged["EnableSubgraph"]:
        raise ValueError(f"{what}: extra_options EnableSubgraph=True is not supported (subgraphs stay float)")
    return merged


def _check_types(types, what, allowed):
    types = list(types) if types is not None else None
    if types is not None:
        bad = sorted(set(types) - allowed)
        if bad:
            raise ValueError(f"{what}: op_types_to_quantize {bad} cannot be quantized by onyx.quantization "
                             f"(it quantizes {sorted(allowed)})")
    return types


def _weight_symmetric(weight_type, extra):
    """WeightSymmetric, by default True for signed weights (ONNX Runtime's default)."""
    if extra["WeightSymmetric"] is None:
        return weight_type == QuantType.QInt8
    return bool(extra["WeightSymmetric"])


def _qtype(value, name):
    if not isinstance(value, QuantType):
        raise TypeError(f"{name} must be a QuantType, got {value!r}")
    if value not in (QuantType.QInt8, QuantType.QUInt8):
        raise ValueError(f"{name}=QuantType.{value.name} is not supported by onyx.quantization (QInt8, QUInt8 are)")
    return value.tensor_type


def static_quantize(model_input, calibration_data_reader=None, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=None, per_channel=False, reduce_range=False,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                    nodes_to_exclude=None, calibrate_method=CalibrationMethod.MinMax, calibration_providers=None,
                    extra_options=None, calibration_cache_path=None, feeds=None):
    """quantize_static without the save: returns a QuantizeResult."""
    what = "quantize_static"
    if not isinstance(quant_format, QuantFormat):
        raise TypeError(f"quant_format must be a QuantFormat, got {quant_format!r}")
    if calibration_providers not in (None, [], ["CPUExecutionProvider"]):
        raise ValueError(f"{what}: calibration_providers={calibration_providers!r}: calibration runs on Onyx's "
                         "CPU provider only")
    x = _check_extra(extra_options, STATIC_KEYS, what)
    if quant_format == QuantFormat.QOperator:
        for k in QDQ_ONLY_KEYS:
            if x[k] != STATIC_KEYS[k]:
                raise ValueError(f"{what}: extra_options {k} applies to QuantFormat.QDQ only")
    wtype = _qtype(weight_type, "weight_type")
    options = Options(
        quant_format=quant_format, op_types=_check_types(op_types_to_quantize, what, STATIC_OPS),
        per_channel=bool(per_channel), reduce_range=bool(reduce_range),
        activation_type=_qtype(activation_type, "activation_type"), weight_type=wtype,
        nodes_to_quantize=nodes_to_quantize, nodes_to_exclude=nodes_to_exclude,
        activation_symmetric=bool(x["ActivationSymmetric"]),
        weight_symmetric=_weight_symmetric(weight_type, x),
        force_quantize_no_input_check=bool(x["ForceQuantizeNoInputCheck"]),
        matmul_const_b_only=bool(x["MatMulConstBOnly"]), add_qdq_pair_to_weight=bool(x["AddQDQPairToWeight"]),
        op_types_no_output=x["OpTypesToExcludeOutputQuantization"], dedicated_qdq_pair=bool(x["DedicatedQDQPair"]),
        per_channel_axis=x["QDQOpTypePerChannelSupportToAxis"], keep_removable=bool(x["QDQKeepRemovableActivations"]),
        quantize_bias=bool(x["QuantizeBias"]), min_real_range=x["MinimumRealRange"])
    model = _load(model_input)
    _check_opset(model, per_channel, what, 10)
    plan = build_plan(model, options)
    tensors = plan.act_tensors()
    ranges = None
    if calibration_cache_path is not None and os.path.exists(calibration_cache_path):
        with open(calibration_cache_path) as f:
            ranges = {k: tuple(v) for k, v in json.load(f).items()}
        missing = [t for t in tensors if t not in ranges]
        if missing:
            raise ValueError(f"{what}: the calibration cache {os.fspath(calibration_cache_path)!r} has no range for "
                             f"{missing[:5]} (it was made for another model or other options)")
    else:
        if feeds is None:
            feeds = read_feeds(calibration_data_reader)
        ranges = calibrate(plan.float_model, tensors, feeds, method=calibrate_method,
                           symmetric=bool(x["CalibTensorRangeSymmetric"]),
                           moving_average=bool(x["CalibMovingAverage"]),
                           averaging_constant=float(x["CalibMovingAverageConstant"]),
                           num_bins=x["CalibNumBins"],
                           num_quantized_bins=x["CalibNumQuantizedBins"], percentile=x["CalibPercentile"])
        if calibration_cache_path is not None:
            with open(calibration_cache_path, "w") as f:
                json.dump({k: [float(a), float(b)] for k, (a, b) in ranges.items()}, f, indent=1)
    assign_params(plan, ranges)
    out = write_qdq(plan) if quant_format == QuantFormat.QDQ else write_qoperator(plan)
    return QuantizeResult(out, plan, ranges)


def quantize_static(model_input, model_output, calibration_data_reader=None, quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=None, per_channel=False, reduce_range=False,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, nodes_to_quantize=None,
                    nodes_to_exclude=None, use_external_data_format=False,
                    calibrate_method=CalibrationMethod.MinMax, calibration_providers=None, extra_options=None,
                    calibration_cache_path=None):
    """Quantizes weights and activations with ranges calibrated on the reader's inputs and writes
    model_output (QDQ or QOperator form)."""
    result = static_quantize(model_input, calibration_data_reader, quant_format, op_types_to_quantize, per_channel,
                             reduce_range, activation_type, weight_type, nodes_to_quantize, nodes_to_exclude,
                             calibrate_method, calibration_providers, extra_options, calibration_cache_path)
    _save(result.model, model_output, use_external_data_format)


def dynamic_quantize(model_input, op_types_to_quantize=None, per_channel=False, reduce_range=False,
                     weight_type=QuantType.QInt8, nodes_to_quantize=None, nodes_to_exclude=None,
                     extra_options=None):
    """quantize_dynamic without the save: returns a QuantizeResult."""
    what = "quantize_dynamic"
    x = _check_extra(extra_options, DYNAMIC_KEYS, what)
    if not x["MatMulConstBOnly"]:
        raise ValueError(f"{what}: extra_options MatMulConstBOnly=False is not supported (only MatMuls with a "
                         "constant B are quantized dynamically)")
    if x["ActivationSymmetric"]:
        raise ValueError(f"{what}: extra_options ActivationSymmetric=True is not supported: dynamic activations "
                         "are uint8 with a computed zero point (DynamicQuantizeLinear)")
    options = Options(
        dynamic=True, quant_format=QuantFormat.QOperator,
        op_types=_check_types(op_types_to_quantize, what, DYNAMIC_OPS),
        per_channel=bool(per_channel), reduce_range=bool(reduce_range), weight_type=_qtype(weight_type, "weight_type"),
        activation_type=QuantType.QUInt8.tensor_type, nodes_to_quantize=nodes_to_quantize,
        nodes_to_exclude=nodes_to_exclude,
        weight_symmetric=_weight_symmetric(weight_type, x))
    model = _load(model_input)
    _check_opset(model, per_channel, what, 11)
    plan = build_plan(model, options)
    return QuantizeResult(write_dynamic(plan), plan, {})


def quantize_dynamic(model_input, model_output, op_types_to_quantize=None, per_channel=False, reduce_range=False,
                     weight_type=QuantType.QInt8, nodes_to_quantize=None, nodes_to_exclude=None,
                     use_external_data_format=False, extra_options=None):
    """Quantizes the weights of MatMul and Conv ahead of time and their inputs at run time
    (DynamicQuantizeLinear), and writes model_output."""
    result = dynamic_quantize(model_input, op_types_to_quantize, per_channel, reduce_range, weight_type,
                              nodes_to_quantize, nodes_to_exclude, extra_options)
    _save(result.model, model_output, use_external_data_format)


def _check_opset(model, per_channel, what, minimum):
    opset = ai_onnx_opset(model)
    if opset < minimum:
        raise ValueError(f"{what}: the model's ai.onnx opset is {opset}; quantization needs {minimum} or later "
                         "(convert it with onnx.version_converter first)")
    if per_channel and opset < 13:
        raise ValueError(f"{what}: per_channel=True needs ai.onnx opset 13 or later (DequantizeLinear's axis); "
                         f"the model has {opset}")


class StaticQuantConfig:
    """quantize_static's arguments in one object, for quantize() (ONNX Runtime's class)."""

    def __init__(self, calibration_data_reader, calibrate_method=CalibrationMethod.MinMax,
                 quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                 op_types_to_quantize=None, nodes_to_quantize=None, nodes_to_exclude=None, per_channel=False,
                 reduce_range=False, use_external_data_format=False, calibration_providers=None, extra_options=None):
        self.calibration_data_reader = calibration_data_reader
        self.calibrate_method = calibrate_method
        self.quant_format = quant_format
        self.activation_type = activation_type
        self.weight_type = weight_type
        self.op_types_to_quantize = op_types_to_quantize
        self.nodes_to_quantize = nodes_to_quantize
        self.nodes_to_exclude = nodes_to_exclude
        self.per_channel = per_channel
        self.reduce_range = reduce_range
        self.use_external_data_format = use_external_data_format
        self.calibration_providers = calibration_providers
        self.extra_options = extra_options or {}


class DynamicQuantConfig:
    """quantize_dynamic's arguments in one object, for quantize() (ONNX Runtime's class)."""

    def __init__(self, weight_type=QuantType.QInt8, op_types_to_quantize=None, nodes_to_quantize=None,
                 nodes_to_exclude=None, per_channel=False, reduce_range=False, use_external_data_format=False,
                 extra_options=None):
        self.weight_type = weight_type
        self.op_types_to_quantize = op_types_to_quantize
        self.nodes_to_quantize = nodes_to_quantize
        self.nodes_to_exclude = nodes_to_exclude
        self.per_channel = per_channel
        self.reduce_range = reduce_range
        self.use_external_data_format = use_external_data_format
        self.extra_options = extra_options or {}


def quantize(model_input, model_output, quant_config):
    """quantize_static or quantize_dynamic, as the config's class says."""
    c = quant_config
    if isinstance(c, StaticQuantConfig):
        quantize_static(model_input, model_output, c.calibration_data_reader, quant_format=c.quant_format,
                        op_types_to_quantize=c.op_types_to_quantize, per_channel=c.per_channel,
                        reduce_range=c.reduce_range, activation_type=c.activation_type, weight_type=c.weight_type,
                        nodes_to_quantize=c.nodes_to_quantize, nodes_to_exclude=c.nodes_to_exclude,
                        use_external_data_format=c.use_external_data_format, calibrate_method=c.calibrate_method,
                        calibration_providers=c.calibration_providers, extra_options=c.extra_options)
    elif isinstance(c, DynamicQuantConfig):
        quantize_dynamic(model_input, model_output, op_types_to_quantize=c.op_types_to_quantize,
                         per_channel=c.per_channel, reduce_range=c.reduce_range, weight_type=c.weight_type,
                         nodes_to_quantize=c.nodes_to_quantize, nodes_to_exclude=c.nodes_to_exclude,
                         use_external_data_format=c.use_external_data_format, extra_options=c.extra_options)
    else:
        raise TypeError(f"quant_config must be a StaticQuantConfig or a DynamicQuantConfig, got {type(c).__name__}")
