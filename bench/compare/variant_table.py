"""bench/compare's table of the variant rows (--variants): one row per `model@variant` and thread
count, and per variant and per family (int8, fp16, bf16) the geometric means of the other engines'
medians over Onyx's and of Onyx's float32 twin's median over Onyx's on the variant."""
import math

import model_variants


def geomean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values))


def _cell(r, engine, key, fmt):
    return format(r[f"{engine}_{key}"], fmt) if f"{engine}_{key}" in r else "-"


def row(r, engines, ratios):
    """The row's cells; appends (ratio, row label) to ratios[(variant, engine)], engine onyx_fp32
    standing for Onyx fp32/variant."""
    label = f"{r['model']}, {r['threads']} thr"
    all_engines = ["onyx"] + engines
    cells = [_cell(r, e, "median", ".2f") for e in all_engines]
    for e in engines:
        if f"{e}_median" in r:
            ratio = r[f"{e}_median"] / r["onyx_median"]
            ratios.setdefault((r["variant"], e), []).append((ratio, label))
            cells.append(f"{ratio:.2f}")
        else:
            cells.append("-")
    cells.append(_cell(r, "onyx_fp32", "median", ".2f"))
    if "onyx_fp32_median" in r:
        speedup = r["onyx_fp32_median"] / r["onyx_median"]
        ratios.setdefault((r["variant"], "onyx_fp32"), []).append((speedup, label))
        cells.append(f"{speedup:.2f}")
    else:
        cells.append("-")
    cells += [_cell(r, e, "p90", ".2f") for e in all_engines] + [_cell(r, e, "create_ms", ".0f") for e in all_engines]
    cells += [_cell(r, e, "rss_mb", ".0f") for e in all_engines]
    check = f"{'yes' if r['agree'] else 'NO'} ({r['agree_detail']})"
    if "ort_error" in r:
        check = f"ORT cannot run it: {r['ort_error']}; {check}"
    cells.append(check.replace("|", "/"))
    if "openvino" in engines:
        if "openvino_error" in r:
            cells.append(f"cannot run: {r['openvino_error']}".replace("|", "/"))
        else:
            cells.append(f"{'yes' if r['openvino_agree'] else 'no'} ({r['openvino_agree_detail']})".replace("|", "/"))
    return f"| {r['model']} | {r['threads']} | " + " | ".join(cells) + " |"


def _summary(pairs):
    if not pairs:
        return "-", "-"
    value, label = min(pairs)
    return f"{geomean([p[0] for p in pairs]):.3f}", f"{value:.3f} ({label})"


def section(results, engines, labels):
    """Markdown lines of the variant rows' table and summary. engines: those beside Onyx."""
    lines = [
        "", "## int8, float16 and bfloat16 variants", "",
        "Each `model@variant` row is measured like the rows above (same workers, rounds and rotation), with "
        "one more worker in the rotation: Onyx on the model's float32 twin, so \"Onyx fp32/variant\" is the "
        "variant's speedup over Onyx's own float32 model, measured alternately. Variants (bench/model_variants.py): "
        "int8-qdq / int8-qop = ONNX Runtime's quantize_static (uint8 activations, int8 weights, per-tensor; "
        "8 calibration samples with fixed seeds) in QDQ / QOperator form; int8-dynamic = quantize_dynamic "
        "(CNNs: Conv only); fp16 = convert_float_to_float16 with float32 I/O; bf16 = that model with bfloat16 "
        "for float16. Output check (bench/compare/variant_check.py): int8 integer outputs equal, float outputs "
        "within one step of their DequantizeLinear's scale (others within rtol 1e-3 / atol 1e-4); fp16 within 3% of the "
        "largest |value| or nearer ORT's float32 twin than ORT's own float16 run; bf16 within 24% (8x fp16's bound) of "
        "ORT's outputs on the float32 twin, since ORT cannot run it.",
        "",
    ]
    all_engines = ["onyx"] + engines
    columns = ([f"{labels[e]} median" for e in all_engines] + [f"{labels[e]}/Onyx" for e in engines]
               + ["Onyx fp32 median", "Onyx fp32/variant"] + [f"{labels[e]} p90" for e in all_engines]
               + [f"{labels[e]} create" for e in all_engines] + [f"{labels[e]} RSS MB" for e in all_engines]
               + ["Onyx vs ORT"] + (["OV vs ORT"] if "openvino" in engines else []))
    n_text = 1 + ("openvino" in engines)
    lines.append("| model | threads | " + " | ".join(columns) + " |")
    lines.append("|---|" + "---:|" * (1 + len(columns) - n_text) + "---|" * n_text)
    ratios = {}
    for r in results:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['threads']} | error: {r['error']} |" + " |" * (len(columns) - 1))
        else:
            lines.append(row(r, engines, ratios))
    if not ratios:
        return lines
    variants = list(dict.fromkeys(r["variant"] for r in results))
    groups = [(v, [v]) for v in variants]
    for fam in dict.fromkeys(model_variants.family(v) for v in variants):
        members = [v for v in variants if model_variants.family(v) == fam]
        if len(members) > 1:
            groups.append((f"all {fam}", members))
    head = ["variant", "rows"]
    for e in engines + ["onyx_fp32"]:
        name = f"{labels[e]}/Onyx" if e != "onyx_fp32" else "Onyx fp32/variant"
        head += [f"{name} geomean", f"{name} lowest"]
    lines += ["", "Geometric means of the variant rows (three decimals: the targets are thresholds):", "",
              "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name, members in groups:
        cells = [name, str(sum(1 for r in results if r.get("variant") in members and "error" not in r))]
        for e in engines + ["onyx_fp32"]:
            cells += _summary([p for v in members for p in ratios.get((v, e), [])])
        lines.append("| " + " | ".join(cells) + " |")
    return lines
