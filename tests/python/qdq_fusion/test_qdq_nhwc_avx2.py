"""QdqNhwcLayout where the int8 kernels run AVX2 (ONYX_LINALG_ISA=avx2: CPUs without AVX-512
VNNI). The channels-last region forms there too, its convs on the AVX2 tile
(src/linalg/q8_conv_nhwc_avx2.cc; vpdpbusd on 256 bits where the CPU has AVX-VNNI), and the
integer outputs must still equal ONNX Runtime 1.31.1's exactly: a ResNet-like chain (convs,
residual adds, pool) in uint8 / int8, per-tensor and per-channel weights, and the YOLO-like net
(SiLU tables, channel concats, nearest upsampling)."""
import pytest

import qdq_models as qm
import test_qdq_nhwc_layout as layout
import test_qdq_nhwc_yolo as yolo


def _has_avx2():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx2" in f.read()
    except OSError:
        return False


AVX2 = _has_avx2()


@pytest.fixture(autouse=True)
def _avx2(monkeypatch):
    monkeypatch.setenv("ONYX_LINALG_ISA", "avx2")  # read by the onyx processes the helpers start


def _channels_last_convs(model):
    return sum(1 for n in model.graph.node if n.op_type.startswith("QLinearConv")
               and any(a.name == "channels_last" and a.i == 1 for a in n.attribute))


@pytest.mark.parametrize("signed,per_channel", [(False, True), (False, False), (True, True)])
def test_chain_runs_channels_last_on_avx2(signed, per_channel):
    path = layout._chain(f"nhwc_avx2_chain_{signed}_{per_channel}", signed=signed, per_channel=per_channel)
    model = qm.onyx_optimize(path)
    ops = qm.op_counts(model)
    if AVX2:
        assert _channels_last_convs(model) == 12 and ops.get("Transpose") == 2, ops
    layout._check(path)


def test_yolo_like_region_on_avx2():
    path = yolo._net("nhwc_avx2_yolo")
    model = qm.onyx_optimize(path)
    if AVX2:
        assert _channels_last_convs(model) == yolo.CONVS and qm.op_counts(model).get("Transpose") == 4
    yolo._check(path)
