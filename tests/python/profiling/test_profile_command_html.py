"""The HTML report of `onyx profile -o` for ResNet-50 and BERT, opened in headless Chromium
(Debian's, installed by scripts/install_chromium.sh when absent): it renders with no console
message at all, loads nothing from the network, lists the slowest op type first (summed by hand
from the trace), draws one graph element per node of the optimized graph (written independently
by `onyx optimize --require-kernels`) and one timeline bar per kernel run, and "#node=NAME"
shows that node's attributes and shapes. A screenshot is taken of each."""
import collections
import glob
import json
import os
import re
import subprocess
from html.parser import HTMLParser

import numpy as np
import onnx
import pytest

import onyx_harness
from onyx_harness import ONYX_BIN, REPO, bench_feeds, bench_manifest


@pytest.fixture(scope="module")
def chromium():
    proc = subprocess.run([os.path.join(REPO, "scripts", "install_chromium.sh")], capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, f"scripts/install_chromium.sh failed: {proc.stderr}"
    return proc.stdout.strip().splitlines()[-1]


def browse(chromium, url, *mode):
    """(stdout, console lines) of headless Chromium on url."""
    proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--window-size=1400,2000", *mode, url], capture_output=True, text=True, timeout=180)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


class Dom(HTMLParser):
    """Just what the assertions need: table rows' cell texts, and element counts by class."""

    def __init__(self):
        super().__init__()
        self.tables = collections.defaultdict(list)
        self.classes = collections.Counter()
        self.details = []
        self._table = None
        self._row = None
        self._cell = None
        self._in_details = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for c in (a.get("class") or "").split():
            self.classes[(tag, c)] += 1
        if tag == "table":
            self._table = a.get("id")
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        if a.get("id") == "details":
            self._in_details = 1
        elif self._in_details and tag not in ("br",):
            self._in_details += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None
        if self._in_details:
            self._in_details -= 1

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._in_details:
            self.details.append(data)


def make_report(name, work, runs="1"):
    folder, models = bench_manifest()
    entry = models[name]
    model = os.path.join(folder, entry["file"])
    args = []
    for input_name, array in bench_feeds(entry).items():
        path = os.path.join(work, f"{input_name}.npy")
        np.save(path, array)
        args += ["--input", f"{input_name}={path}"]
    html = os.path.join(work, f"{name}.html")
    prefix = os.path.join(work, name)
    proc = subprocess.run([ONYX_BIN, "profile", model, *args, "--runs", runs, "--warmup", "1", "--trace", prefix,
                           "-o", html], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    (trace,) = glob.glob(prefix + "_*.json")
    optimized = os.path.join(work, f"{name}_optimized.onnx")
    proc = subprocess.run([ONYX_BIN, "optimize", model, "-o", optimized, "--require-kernels"], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return html, trace, onnx.load(optimized, load_external_data=False).graph


def slowest_op_by_hand(trace):
    import json
    with open(trace) as f:
        events = json.load(f)
    runs = [e for e in events if e["name"] == "model_run"]
    warm_end = runs[0]["ts"] + runs[0]["dur"]  # --warmup 1
    total = collections.Counter()
    count = 0
    for e in events:
        if e["cat"] == "Node" and e["name"].endswith("_kernel_time") and e["ts"] >= warm_end:
            total[e["args"]["op_name"]] += e["dur"]
            count += 1
    return total.most_common(1)[0][0], count


@pytest.mark.parametrize("name", ["resnet50", "bert_base"])
def test_report_renders_in_chromium(chromium, name):
    work = onyx_harness.SCRATCH
    html, trace, graph = make_report(name, work)
    text = open(html, encoding="utf-8").read()
    # Self-contained: no external scripts, styles, images or fetches.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text.split('id="data">')[0] + text.split("</script>", 1)[1])
    assert "fetch(" not in text and "XMLHttpRequest" not in text
    url = "file://" + html
    dom_text, console = browse(chromium, url, "--dump-dom")
    assert console == [], console
    dom = Dom()
    dom.feed(dom_text)
    slowest, kernel_runs = slowest_op_by_hand(trace)
    op_rows = dom.tables["op-table"]
    assert op_rows[0][0] == "op type" and op_rows[1][0] == slowest, op_rows[:3]
    node_names = {(n.name or f"{n.op_type}_{i}") for i, n in enumerate(graph.node)}
    assert dom.classes[("g", "gnode")] == len(graph.node)
    assert len(dom.tables["node-table"]) - 1 == len(node_names)
    assert dom.classes[("rect", "kernel")] == kernel_runs
    # A node's details: attributes and shapes.
    conv_like = next(n for n in graph.node if n.attribute)
    dom_text, console = browse(chromium, url + "#node=" + conv_like.name, "--dump-dom")
    assert console == [], console
    dom = Dom()
    dom.feed(dom_text)
    details = " ".join(dom.details)
    assert conv_like.name in details and "attr " + conv_like.attribute[0].name in details
    assert "created by" in details and "shapes" in details and "provider" in details
    # A convolution's details: the variant the trace recorded and the pass that made the node.
    with open(trace) as f:
        events = [e for e in json.load(f) if e["cat"] == "Node" and e["args"].get("op_name") == "NchwcConv"]
    if name == "resnet50":  # level all puts ResNet-50's convolutions in the NCHWc layout
        assert events and all(e["args"]["kernel"] for e in events)
        conv = events[-1]
        conv_name = conv["name"][:-len("_kernel_time")]
        dom_text, console = browse(chromium, url + "#node=" + conv_name, "--dump-dom")
        assert console == [], console
        dom = Dom()
        dom.feed(dom_text)
        details = " ".join(dom.details)
        assert "NchwcConv \u2014 " + conv["args"]["kernel"] in details, details
        assert "pass NchwcLayout" in details, details
    shot = os.path.join(work, f"{name}.png")
    _, console = browse(chromium, url, f"--screenshot={shot}")
    assert console == [], console
    with open(shot, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(shot) > 20000  # something was drawn
