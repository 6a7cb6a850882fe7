"""int8, float16 and bfloat16 variants of a float32 bench model, for bench/compare (--variants),
bench/int8_forms.py and bench/half_precision.py.

  int8-qdq      quantize_static (ONNX Runtime's quantizer), QDQ: uint8 activations, int8 weights,
                per-tensor, after quant_pre_process (shape inference, BatchNormalization folded)
  int8-qop      the same in QOperator form (QLinearConv, com.microsoft QLinearAdd, ...)
  int8-dynamic  quantize_dynamic, int8 weights: MatMulInteger for transformers; for CNNs Conv only
                (ConvInteger) after quant_pre_process
  fp16          onnxruntime.transformers.float16.convert_float_to_float16, float32 inputs and
                outputs (an exporter's Casts around a float16 body)
  bf16          the fp16 model with every float16 type, initializer and Cast made bfloat16

Static forms calibrate on 8 samples with fixed seeds: CNNs on N(0,1) images, transformers on
random token ids (bench_feeds with seeds 1..8, other seeds than the bench inputs), so a variant
is the same model every time it is built. Each variant is built once into a work folder and reused
while its float model is unchanged (same path, size and modification time)."""
import json
import os
import tempfile

import numpy as np

CNNS = ("resnet50", "mobilenetv2", "yolo_like")
TRANSFORMERS_INT8 = ("bert_base", "bert_tiny")
HALF_MODELS = ("resnet50", "mobilenetv2", "efficientnet_b0", "yolo_like",
               "bert_base", "bert_tiny", "gpt2_small", "vit_tiny")

# variant -> (models it applies to, family of its rows in bench/compare's summary)
VARIANTS = {
    "int8-qdq": (CNNS + TRANSFORMERS_INT8, "int8"),
    "int8-qop": (CNNS, "int8"),
    "int8-dynamic": (CNNS + TRANSFORMERS_INT8, "int8"),
    "fp16": (HALF_MODELS, "fp16"),
    "bf16": (HALF_MODELS, "bf16"),
}
CALIBRATION_SAMPLES = 8


def family(variant):
    return VARIANTS[variant][1]


def unknown_variants(names):
    return [n for n in names if n not in VARIANTS]


def skip_reason(variant, model):
    """None where the variant applies to the bench model `model`, else why it does not."""
    models = VARIANTS[variant][0]
    if model in models:
        return None
    return f"{variant} is built for {', '.join(models)} only"


# --- int8 (ONNX Runtime's quantizer) ---

def quantize_static(float_path, out_path, calibration, fmt):
    """ORT's recommended flow: quant_pre_process, then quantize_static on the calibration feeds."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType
    from onnxruntime.quantization import quantize_static as ort_quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.feeds = iter(calibration)

        def get_next(self):
            return next(self.feeds, None)

    with tempfile.TemporaryDirectory(dir=os.path.dirname(out_path)) as tmp:
        prepared = os.path.join(tmp, "prepared.onnx")
        quant_pre_process(float_path, prepared, skip_symbolic_shape=True)
        ort_quantize_static(prepared, out_path, Reader(),
                            quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def quantize_dynamic(float_path, out_path, cnn=False):
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization import quantize_dynamic as ort_quantize_dynamic
    if not cnn:
        ort_quantize_dynamic(float_path, out_path, weight_type=QuantType.QInt8)
        return
    from onnxruntime.quantization.shape_inference import quant_pre_process
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out_path)) as tmp:
        prepared = os.path.join(tmp, "prepared.onnx")  # BatchNormalization folded first
        quant_pre_process(float_path, prepared, skip_symbolic_shape=True)
        ort_quantize_dynamic(prepared, out_path, weight_type=QuantType.QInt8, op_types_to_quantize=["Conv"])


def image_calibration(feeds, samples=CALIBRATION_SAMPLES):
    """N(0,1) images of the first input's shape, seed 0."""
    name, value = next(iter(feeds.items()))
    rng = np.random.default_rng(0)
    return [{name: rng.standard_normal(value.shape).astype(np.float32)} for _ in range(samples)]


def token_calibration(entry, samples=CALIBRATION_SAMPLES):
    """Bench inputs (manifest entry) drawn with seeds 1..samples: random token ids."""
    from onyx_harness import bench_feeds
    return [bench_feeds(entry, seed=1 + i) for i in range(samples)]


def calibration_for(model, feeds, entry):
    """The static forms' calibration feeds of a bench model (its bench feeds, manifest entry)."""
    return image_calibration(feeds) if model in CNNS else token_calibration(entry)


# --- float16 / bfloat16 ---

def to_bfloat16_bits(a):
    """float32 array -> uint16 bfloat16 bits, rounded to nearest even."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def bfloat16_twin(half_model):
    """The float16 model with bfloat16 in place of float16 everywhere."""
    import onnx
    from onnx import TensorProto, numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(half_model)

    def convert_tensor(t):
        if t.data_type != TensorProto.FLOAT16:
            return
        values = numpy_helper.to_array(t).astype(np.float32)
        name = t.name
        t.Clear()
        t.name = name
        t.data_type = TensorProto.BFLOAT16
        t.dims.extend(values.shape)
        t.raw_data = to_bfloat16_bits(values).tobytes()

    def convert_type(tp):
        if tp.HasField("tensor_type") and tp.tensor_type.elem_type == TensorProto.FLOAT16:
            tp.tensor_type.elem_type = TensorProto.BFLOAT16

    def convert_graph(g):
        for t in g.initializer:
            convert_tensor(t)
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            convert_type(vi.type)
        for n in g.node:
            for a in n.attribute:
                if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT16:
                    a.i = TensorProto.BFLOAT16
                if a.type == onnx.AttributeProto.TENSOR:
                    convert_tensor(a.t)
                if a.type == onnx.AttributeProto.GRAPH:
                    convert_graph(a.g)
                for sub in a.graphs:
                    convert_graph(sub)

    convert_graph(m.graph)
    return m


def float16_model(float_path):
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16
    return convert_float_to_float16(onnx.load(float_path), keep_io_types=True)


def _save_half(float_path, out_path, bf16):
    import onnx
    half = float16_model(float_path)
    onnx.save(bfloat16_twin(half) if bf16 else half, out_path)


# --- the cache ---

def _source_stamp(float_path):
    st = os.stat(float_path)
    return {"source": os.path.abspath(float_path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def variant_path(variant, float_path, work):
    stem = os.path.splitext(os.path.basename(float_path))[0]
    return os.path.join(work, f"{stem}_{variant}.onnx")


def build(variant, float_path, work, calibration=None, model=None):
    """The path of `variant` of the float model, built into `work` unless already there from the
    same float model. calibration: a function returning the static forms' calibration feeds (only
    called when an int8-qdq/int8-qop model is built); model: the bench model's name, which says
    whether int8-dynamic quantizes Conv (CNNs) or everything (default: the file's stem)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant '{variant}' (known: {', '.join(VARIANTS)})")
    os.makedirs(work, exist_ok=True)
    path = variant_path(variant, float_path, work)
    stamp_file = path + ".source.json"
    stamp = _source_stamp(float_path)
    if os.path.exists(path) and os.path.exists(stamp_file):
        with open(stamp_file) as f:
            if json.load(f) == stamp:
                return path
    model = model or os.path.splitext(os.path.basename(float_path))[0]
    # Built under another name and renamed, so an interrupted build never looks finished.
    partial = path + f".partial-{os.getpid()}.onnx"
    try:
        if variant in ("int8-qdq", "int8-qop"):
            if calibration is None:
                raise ValueError(f"{variant} of {float_path} needs calibration feeds")
            quantize_static(float_path, partial, calibration(), variant.split("-")[1])
        elif variant == "int8-dynamic":
            quantize_dynamic(float_path, partial, cnn=model in CNNS)
        else:
            _save_half(float_path, partial, bf16=variant == "bf16")
        os.replace(partial, path)
    finally:
        for leftover in (partial, partial + ".data"):
            if os.path.exists(leftover):
                os.remove(leftover)
    with open(stamp_file, "w") as f:
        json.dump(stamp, f)
    return path
