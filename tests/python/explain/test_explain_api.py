"""InferenceSession.explain() in the onyx package: the same explanations as `onyx explain`, as
data (dicts and lists) with ONNX Runtime's provider names; a session made from bytes says the
original graph is not kept (so no "replaces") and still names the passes."""
import json
import subprocess

import onyx

from explain_models import bert_tiny, conv_bn_model, misses
from onyx_harness import ONYX_BIN


def test_explain_returns_data_matching_the_command():
    model = conv_bn_model("explain_api_twice.onnx", conv_read_twice=True)
    e = onyx.InferenceSession(model, providers=["CPUExecutionProvider"]).explain()
    assert isinstance(e["nodes"], list) and all(isinstance(n, dict) for n in e["nodes"])
    assert e["providers"] == ["CPUExecutionProvider"] and e["level"] == "all"
    assert [(n["name"], n["provider"]) for n in e["nodes"]] == [("conv", "CPUExecutionProvider"),
                                                               ("bn", "CPUExecutionProvider"),
                                                               ("side", "CPUExecutionProvider")]
    (miss,) = misses(e, "Conv+BatchNormalization")
    assert "read by 2 nodes (bn, side)" in miss["reason"]
    cli = json.loads(subprocess.run([ONYX_BIN, "explain", model, "--json"], capture_output=True, text=True,
                                    check=True).stdout)
    assert e["fusion_misses"] == cli["fusion_misses"]
    assert [n["created_by"] for n in e["nodes"]] == [n["created_by"] for n in cli["nodes"]]


def test_level_and_removed_nodes():
    model = conv_bn_model("explain_api.onnx")
    so = onyx.SessionOptions()
    so.graph_optimization_level = onyx.GraphOptimizationLevel.ORT_ENABLE_BASIC
    basic = onyx.InferenceSession(model, so, providers=["CPUExecutionProvider"]).explain()
    assert basic["level"] == "basic"
    assert "runs from level extended" in misses(basic, "Conv+BatchNormalization")[0]["reason"]
    full = onyx.InferenceSession(model, providers=["CPUExecutionProvider"]).explain()
    assert "ConvBatchNormFusion" in full["removed"]["bn"] and full["fusion_misses"] == []


def test_attention_and_bytes_sessions():
    model = bert_tiny()
    e = onyx.InferenceSession(model, providers=["CPUExecutionProvider"]).explain()
    attention = [n for n in e["nodes"] if n["op"] == "Attention"]
    assert len(attention) == 2 and attention[0]["created_by"] == "pass AttentionFusion"
    assert attention[0]["kernel"].startswith("GEMM microkernel")
    with open(model, "rb") as f:
        from_bytes = onyx.InferenceSession(f.read(), providers=["CPUExecutionProvider"]).explain()
    assert from_bytes["model"] == "" and any("from bytes" in n for n in from_bytes["notes"])
    assert [n["name"] for n in from_bytes["nodes"]] == [n["name"] for n in e["nodes"]]
    assert all(n["replaces"] == [] for n in from_bytes["nodes"])
    # Which pass removed what is the optimizer's record, kept for bytes too; only what replaced
    # each node needs the original graph.
    assert sorted(from_bytes["removed"]) == sorted(e["removed"]) and from_bytes["removed"]
    assert all(e["removed"][name].startswith(why) for name, why in from_bytes["removed"].items())
    assert [n["created_by"] for n in from_bytes["nodes"]] == [n["created_by"] for n in e["nodes"]]
