"""`onyx quantize dynamic|static MODEL -o OUT ...`: the quantizer on the command line, with the
per-layer error report (--report) and --keep-float N (the N worst nodes stay float)."""
import argparse
import json
import sys

from onyx.quantization.quant_types import CalibrationMethod, QuantFormat, QuantType

_METHODS = {"minmax": CalibrationMethod.MinMax, "entropy": CalibrationMethod.Entropy,
            "percentile": CalibrationMethod.Percentile}
_FORMATS = {"qdq": QuantFormat.QDQ, "qoperator": QuantFormat.QOperator}
_TYPES = {"qint8": QuantType.QInt8, "quint8": QuantType.QUInt8}


def _names(text):
    return [s for s in text.split(",") if s] if text else None


def _extra(pairs):
    out = {}
    for pair in pairs or ():
        if "=" not in pair:
            raise SystemExit(f"onyx quantize: --extra takes KEY=VALUE, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            out[key] = json.loads(value)
        except ValueError:
            lowered = value.lower()
            out[key] = True if lowered == "true" else False if lowered == "false" else value
    return out


def parser():
    p = argparse.ArgumentParser(prog="onyx quantize", description="Quantize an ONNX model to 8 bits (QDQ or "
                                "QOperator form, as ONNX Runtime's quantizer writes), optionally with a per-layer "
                                "error report against the float model.")
    p.add_argument("mode", choices=["dynamic", "static"])
    p.add_argument("model", help="the float ONNX model")
    p.add_argument("-o", "--output", required=True, help="where to write the quantized model")
    p.add_argument("--calibration-data", metavar="DIR", help="calibration inputs: test_data_set_*/input_*.pb, "
                   "<input>.npy or <sample>/<input>.npy (docs/quantization.md); static needs it, and so do "
                   "--report and --keep-float")
    p.add_argument("--max-samples", type=int, help="use at most this many calibration feeds")
    p.add_argument("--format", choices=sorted(_FORMATS), default="qdq", help="static: QDQ pairs (default) or "
                   "QOperator ops")
    p.add_argument("--activation-type", choices=sorted(_TYPES), default="qint8")
    p.add_argument("--weight-type", choices=sorted(_TYPES), default="qint8")
    p.add_argument("--calibrate-method", choices=sorted(_METHODS), default="minmax")
    p.add_argument("--per-channel", action="store_true")
    p.add_argument("--reduce-range", action="store_true")
    p.add_argument("--op-types", help="comma-separated op types to quantize (default: all it can)")
    p.add_argument("--nodes-to-quantize", help="comma-separated node names: only these")
    p.add_argument("--nodes-to-exclude", help="comma-separated node names to keep float")
    p.add_argument("--extra", action="append", metavar="KEY=VALUE", help="an extra_options entry (repeatable), "
                   "e.g. --extra ActivationSymmetric=true")
    p.add_argument("--external-data", action="store_true", help="write weights to OUT.data")
    p.add_argument("--report", action="store_true", help="print each quantized node's error against float "
                   "(SNR, relative error), worst first, and the end-to-end output error")
    p.add_argument("--report-json", metavar="PATH", help="also write the report as JSON")
    p.add_argument("--keep-float", type=int, default=0, metavar="N", help="keep the N nodes with the worst "
                   "error in float")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return _run(args)
    except Exception as e:  # noqa: BLE001 - a command reports the error and exits non-zero
        kind = "" if isinstance(e, (ValueError, TypeError, FileNotFoundError)) else f"{type(e).__name__}: "
        sys.stderr.write(f"onyx quantize: {kind}{e}\n")
        return 1


def _run(args):
    from onyx.quantization._onnx import onnx_module
    from onyx.quantization.data import read_folder
    from onyx.quantization.quantize import _save, dynamic_quantize, static_quantize
    from onyx.quantization.report import build_report

    onnx = onnx_module()
    model = onnx.load(args.model)
    needs_data = args.mode == "static" or args.report or args.report_json or args.keep_float
    if needs_data and not args.calibration_data:
        raise ValueError("--calibration-data DIR is needed for static quantization, --report and --keep-float")
    if args.keep_float < 0:
        raise ValueError("--keep-float takes a count >= 0")
    feeds = read_folder(args.calibration_data, model, args.max_samples) if args.calibration_data else None
    exclude = _names(args.nodes_to_exclude) or []

    def quantize(excluded):
        common = dict(op_types_to_quantize=_names(args.op_types), per_channel=args.per_channel,
                      reduce_range=args.reduce_range, weight_type=_TYPES[args.weight_type],
                      nodes_to_quantize=_names(args.nodes_to_quantize), nodes_to_exclude=excluded,
                      extra_options=_extra(args.extra))
        if args.mode == "dynamic":
            if args.format != "qdq" or args.activation_type != "qint8" or args.calibrate_method != "minmax":
                raise ValueError("dynamic quantization takes no --format, --activation-type or --calibrate-method")
            return dynamic_quantize(model, **common)
        return static_quantize(model, quant_format=_FORMATS[args.format],
                               activation_type=_TYPES[args.activation_type],
                               calibrate_method=_METHODS[args.calibrate_method], feeds=feeds, **common)

    result = quantize(exclude)
    report = None
    if args.keep_float:
        report = build_report(result, feeds)
        worst = report.worst(args.keep_float)
        print(f"keeping in float the {len(worst)} worst node(s): {', '.join(worst)}")
        result = quantize(exclude + worst)
        report = None
    if args.report or args.report_json:
        report = build_report(result, feeds)
    _save(result.model, args.output, args.external_data)
    plan = result.plan
    print(f"quantized {len(plan.nodes)} node(s) ({args.mode}"
          f"{'' if args.mode == 'dynamic' else ', ' + args.format}) -> {args.output}")
    for name, op, why in plan.skipped:
        print(f"  left float: {name} ({op}): {why}")
    if report is not None and args.report:
        print(report.text())
    if report is not None and args.report_json:
        with open(args.report_json, "w") as f:
            json.dump(report.as_dict(), f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
