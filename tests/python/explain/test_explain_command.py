"""`onyx explain`: planted reasons are named. A Conv+BatchNormalization fuses when nothing else
reads the Conv (the BatchNormalization is reported removed by ConvBatchNormFusion) and does not
when the Conv's output is read twice, when the running statistics are read, or below level
extended; BERT's attention fuses with its [batch, sequence] padding mask and does not with a
[batch, 1, sequence, sequence] mask (the reason names the shape); asking for CUDA on a build
without it says so for every node (test_explain_cuda.py checks a build with it)."""
import json
import subprocess

import onnx
from onnx import TensorProto, helper

from explain_models import bert_tiny, conv_bn_model, misses
from onyx_harness import ONYX_BIN, save_model


def explain(*args):
    proc = subprocess.run([ONYX_BIN, "explain", *args, "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_conv_batchnorm_fused_and_why_not():
    fused = explain(conv_bn_model("explain_cbn.onnx"))
    assert [n["op"] for n in fused["nodes"]] == ["Conv"]
    assert "ConvBatchNormFusion" in fused["removed"]["bn"]
    assert fused["nodes"][0]["created_by"] == "the model, rewritten by pass ConvBatchNormFusion"
    assert misses(fused, "Conv+BatchNormalization") == []

    twice = explain(conv_bn_model("explain_cbn_twice.onnx", conv_read_twice=True))
    (miss,) = misses(twice, "Conv+BatchNormalization")
    assert miss["nodes"] == ["conv", "bn"]
    assert "output 'c' is read by 2 nodes (bn, side)" in miss["reason"]

    basic = explain(conv_bn_model("explain_cbn.onnx"), "--level", "basic")
    (miss,) = misses(basic, "Conv+BatchNormalization")
    assert "runs from level extended" in miss["reason"] and "basic" in miss["reason"]


def test_conv_batchnorm_statistics_read():
    report = explain(conv_bn_model("explain_cbn_stats.onnx", stats_read=True))
    (miss,) = misses(report, "Conv+BatchNormalization")
    assert "running statistics (running_mean) are read" in miss["reason"]


def test_attention_mask_shape_blocks_the_fusion():
    model = bert_tiny()
    fused = explain(model)
    assert sum(n["op"] == "Attention" and n["domain"] == "com.microsoft" for n in fused["nodes"]) == 2
    attention = next(n for n in fused["nodes"] if n["op"] == "Attention")
    assert attention["created_by"] == "pass AttentionFusion"
    assert any(r.endswith("attention/self/Softmax") for r in attention["replaces"])
    assert misses(fused, "Attention") == []

    # The same model with a [batch, 1, seq, seq] mask added to the scores instead.
    m = onnx.load(model)
    producers = {o: n for n in m.graph.node for o in n.output}
    for n in m.graph.node:
        if n.op_type == "Softmax":
            producers[n.input[0]].input[1] = "mask4d"
    m.graph.input.append(helper.make_tensor_value_info("mask4d", TensorProto.FLOAT, ["batch", 1, "sequence", "sequence"]))
    planted = save_model(m, "explain_bert_mask4d.onnx")
    report = explain(planted)
    assert not any(n["op"] == "Attention" for n in report["nodes"])
    found = misses(report, "Attention")
    assert len(found) == 2
    for miss in found:
        assert miss["reason"].startswith("unsupported mask shape")
        assert "'mask4d' of shape [batch, 1, sequence, sequence]" in miss["reason"]
        assert miss["nodes"][-2].endswith("Softmax") and miss["nodes"][-1].endswith("MatMul_1")


def test_providers_and_placements():
    report = explain(conv_bn_model("explain_cbn_twice.onnx", conv_read_twice=True), "--providers", "CUDA,CPU")
    assert report["providers"] == ["CUDA", "CPU"]
    model = conv_bn_model("explain_cbn.onnx")
    cuda_built = subprocess.run([ONYX_BIN, "perf", model, "-e", "cuda", "-r", "1"], capture_output=True).returncode == 0
    if not cuda_built and any(note.startswith("CUDA: not in this build") for note in report["notes"]):
        for node in report["nodes"]:
            assert node["provider"] == "CPU"
            assert "not in this build" in node["declined"]["CUDA"]
    text = subprocess.run([ONYX_BIN, "explain", conv_bn_model("explain_cbn.onnx")], capture_output=True, text=True)
    assert text.returncode == 0 and "conv (Conv) on CPU" in text.stdout and "bn: BatchNormalization" in text.stdout
    bad = subprocess.run([ONYX_BIN, "explain", conv_bn_model("explain_cbn.onnx"), "--level", "max"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "max" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
