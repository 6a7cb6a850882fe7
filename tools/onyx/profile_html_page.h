// The page of the HTML report: CSS and script around a JSON block (profile_html.cc fills
// "@DATA@"). No network: everything it draws is inline SVG made by the script below.
#pragma once

namespace onyx::cli {

inline constexpr const char* kProfilePageHead = R"HTML(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Onyx profile</title>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}
.meta{color:#555}.note{color:#777;font-style:italic}
table{border-collapse:collapse;margin:4px 0}th,td{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
th{cursor:pointer;background:#f3f3f3;user-select:none}th.sorted-desc::after{content:" \25BC"}th.sorted-asc::after{content:" \25B2"}
td.l,th.l{text-align:left}.scroll{overflow:auto;max-height:420px;border:1px solid #ccc}
#timeline,#graph{overflow:auto;border:1px solid #ccc;max-height:600px}
#details{position:fixed;right:12px;top:12px;width:360px;max-height:90vh;overflow:auto;background:#fff;border:1px solid #888;
 padding:8px;box-shadow:0 2px 8px rgba(0,0,0,.2);display:none;font-size:12px}
#details td:first-child{width:86px;white-space:nowrap;word-break:normal;color:#555}
#details h3{margin:0 0 6px;font-size:14px;word-break:break-all}#details td{text-align:left;white-space:normal;word-break:break-all}
.gnode rect{stroke:#333;stroke-width:.6}.gnode text{font-size:10px;pointer-events:none}.gnode{cursor:pointer}
.gnode.selected rect{stroke:#06c;stroke-width:2.5}
</style></head><body>
<script type="application/json" id="data">)HTML";

inline constexpr const char* kProfilePageTail = R"HTML(</script>
<h1>Onyx profile</h1><div class="meta" id="meta"></div>
<h2>Time per op type</h2><div class="scroll"><table id="op-table"></table></div>
<h2>Time per node</h2><div class="scroll"><table id="node-table"></table></div>
<h2>Timeline per thread</h2><div id="timeline"></div>
<h2>Graph (colour: share of the time; click a node)</h2><div class="note" id="graph-note"></div><div id="graph"></div>
<div id="details"></div>
<script>
"use strict";
const D = JSON.parse(document.getElementById("data").textContent);
const SVG = "http://www.w3.org/2000/svg";
function el(tag, attrs, parent, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function num(v, digits) { return v === null || v === undefined || v < 0 ? "-" : Number(v).toFixed(digits); }
function rate(amount, meanUs) { return amount === null || amount < 0 || !(meanUs > 0) ? null : amount / (meanUs * 1e-6) / 1e9; }

const meta = document.getElementById("meta");
meta.textContent = (D.model ? "model " + D.model + " \u2014 " : "") + "trace " + D.trace + " \u2014 " + D.runs +
  " run(s), " + num(D.run_us / 1e3, 3) + " ms in all, " + num(D.run_us / 1e3 / Math.max(1, D.runs), 3) +
  " ms per run \u2014 machine peak " + num(D.peak.gflops, 1) + " GFLOP/s (" + D.peak.threads + " thread(s), " +
  D.peak.gemm_kernel + "), " + num(D.peak.gbytes_per_s, 1) + " GB/s \u2014 host\u2194device copies: " + D.copies +
  " \u2014 per provider: " + Object.keys(D.providers_us).map(p => p + " " + num(D.providers_us[p] / 1e3, 3) + " ms").join(", ");

// A table sorted by a column on click (again: the other way); starts on `initial`, descending.
function sortableTable(id, columns, rows, initial) {
  const table = document.getElementById(id);
  const head = el("tr", {}, el("thead", {}, table));
  const body = el("tbody", {}, table);
  let key = initial, desc = true;
  columns.forEach(c => {
    const th = el("th", {"class": c.left ? "l" : "", "data-key": c.key}, head, c.title);
    th.addEventListener("click", () => { desc = key === c.key ? !desc : !c.left; key = c.key; draw(); });
  });
  function draw() {
    const col = columns.find(c => c.key === key);
    const value = r => col.value ? col.value(r) : r[key];
    rows.sort((a, b) => {
      const x = value(a), y = value(b);
      const cmp = typeof x === "string" ? x.localeCompare(y) : (x === null ? -Infinity : x) - (y === null ? -Infinity : y);
      return desc ? -cmp : cmp;
    });
    head.querySelectorAll("th").forEach(th => th.className = (th.dataset.key === key ? (desc ? "sorted-desc" : "sorted-asc") : "") +
      (columns.find(c => c.key === th.dataset.key).left ? " l" : ""));
    body.textContent = "";
    rows.forEach(r => {
      const tr = el("tr", {"data-name": r.name}, body);
      columns.forEach(c => el("td", {"class": c.left ? "l" : ""}, tr, c.show(r)));
      if (r.op !== undefined) tr.addEventListener("click", () => showNode(r.name));
    });
  }
  draw();
}
sortableTable("op-table", [
  {key: "name", title: "op type", left: true, show: r => r.name},
  {key: "total_us", title: "total ms", show: r => num(r.total_us / 1e3, 3)},
  {key: "percent", title: "% of run", show: r => num(r.percent, 2)},
  {key: "calls", title: "calls", show: r => r.calls},
  {key: "mean_us", title: "mean \u00b5s", show: r => num(r.mean_us, 1)},
  {key: "p90_us", title: "p90 \u00b5s", show: r => num(r.p90_us, 1)},
], D.op_types.slice(), "total_us");
sortableTable("node-table", [
  {key: "name", title: "node", left: true, show: r => r.name},
  {key: "op", title: "op", left: true, show: r => r.op},
  {key: "provider", title: "provider", left: true, show: r => r.provider},
  {key: "total_us", title: "total ms", show: r => num(r.total_us / 1e3, 3)},
  {key: "percent", title: "% of run", show: r => num(r.percent, 2)},
  {key: "calls", title: "calls", show: r => r.calls},
  {key: "mean_us", title: "mean \u00b5s", show: r => num(r.mean_us, 1)},
  {key: "p90_us", title: "p90 \u00b5s", show: r => num(r.p90_us, 1)},
  {key: "flops", title: "MFLOP", show: r => num(r.flops === null ? null : r.flops / 1e6, 2)},
  {key: "bytes", title: "MB", show: r => num(r.bytes === null ? null : r.bytes / 1e6, 2)},
  {key: "gflops", title: "GFLOP/s", value: r => rate(r.flops, r.mean_us), show: r => num(rate(r.flops, r.mean_us), 1)},
  {key: "gbs", title: "GB/s", value: r => rate(r.bytes, r.mean_us), show: r => num(rate(r.bytes, r.mean_us), 1)},
  {key: "peak", title: "% peak", value: r => { const g = rate(r.flops, r.mean_us); return g === null ? null : 100 * g / D.peak.gflops; },
   show: r => { const g = rate(r.flops, r.mean_us); return g === null ? "-" : num(100 * g / D.peak.gflops, 0); }},
  {key: "shapes", title: "shapes", left: true, show: r => r.shapes},
], D.nodes.slice(), "total_us");

// Timeline: a lane per thread, one bar per kernel run, the runs above.
function opColour(op) {
  let h = 0;
  for (const ch of op) h = (h * 31 + ch.charCodeAt(0)) % 360;
  return "hsl(" + h + ",60%,60%)";
}
(function timeline() {
  const box = document.getElementById("timeline");
  const events = D.timeline;
  if (!events.length) { box.textContent = "no kernel events"; return; }
  const t0 = Math.min(...D.run_events.map(r => r.ts), ...events.map(e => e.ts));
  const t1 = Math.max(...D.run_events.map(r => r.ts + r.dur), ...events.map(e => e.ts + e.dur));
  const tids = [...new Set(events.map(e => e.tid))].sort((a, b) => a - b);
  const width = Math.max(1000, Math.min(20000, events.length * 3)), lane = 22, left = 110;
  const scale = (width - left - 10) / Math.max(1, t1 - t0);
  const svg = el("svg:svg", {width: width, height: (tids.length + 1) * lane + 30, id: "timeline-svg"}, box);
  el("svg:text", {x: 4, y: 15, "font-size": 11}, svg, "runs");
  D.run_events.forEach(r => {
    const g = el("svg:rect", {x: left + (r.ts - t0) * scale, y: 4, width: Math.max(1, r.dur * scale), height: lane - 8,
                              fill: "#bbb", "class": "run"}, svg);
    el("svg:title", {}, g, "model_run " + num(r.dur / 1e3, 3) + " ms");
  });
  tids.forEach((tid, i) => {
    const y = (i + 1) * lane + 4;
    el("svg:text", {x: 4, y: y + 12, "font-size": 11}, svg, "thread " + tid);
    const lanes = el("svg:g", {"class": "lane", "data-tid": tid}, svg);
    events.filter(e => e.tid === tid).forEach(e => {
      const r = el("svg:rect", {x: left + (e.ts - t0) * scale, y: y, width: Math.max(0.5, e.dur * scale), height: lane - 6,
                                fill: opColour(e.op), "class": "kernel"}, lanes);
      el("svg:title", {}, r, e.node + " (" + e.op + ") " + e.dur + " \u00b5s");
      r.addEventListener("click", () => showNode(e.node));
    });
  });
  const axis = (tids.length + 1) * lane + 20;
  for (let k = 0; k <= 10; ++k) {
    const t = (t1 - t0) * k / 10;
    el("svg:text", {x: left + t * scale - (k === 10 ? 40 : 0), y: axis, "font-size": 10}, svg, num(t / 1e3, 2) + " ms");
  }
})();

// Graph: nodes in rows by depth (longest path from the inputs), coloured by share of the time.
const nodeTime = {};
D.nodes.forEach(n => nodeTime[n.name] = n);
(function graph() {
  const box = document.getElementById("graph");
  const g = D.graph;
  document.getElementById("graph-note").textContent = g.note;
  if (!g.nodes.length) return;
  const producer = {};
  g.nodes.forEach((n, i) => n.outputs.forEach(o => producer[o] = i));
  const depth = [];
  g.nodes.forEach((n, i) => {  // nodes come in topological order
    let d = 0;
    n.inputs.forEach(v => { if (v in producer && producer[v] < i) d = Math.max(d, depth[producer[v]] + 1); });
    depth.push(d);
  });
  const rows = [];
  depth.forEach((d, i) => (rows[d] = rows[d] || []).push(i));
  const w = 150, h = 30, gapX = 20, gapY = 26;
  const pos = [];
  rows.forEach((row, d) => row.forEach((i, k) => pos[i] = {x: 10 + k * (w + gapX), y: 10 + d * (h + gapY)}));
  const maxRow = Math.max(...rows.map(r => r.length));
  const svg = el("svg:svg", {width: 20 + maxRow * (w + gapX), height: 20 + rows.length * (h + gapY), id: "graph-svg"}, box);
  const edges = el("svg:g", {stroke: "#999", "stroke-width": 1, fill: "none"}, svg);
  g.nodes.forEach((n, i) => n.inputs.forEach(v => {
    if (!(v in producer)) return;
    const a = pos[producer[v]], b = pos[i];
    el("svg:path", {d: "M" + (a.x + w / 2) + "," + (a.y + h) + " L" + (b.x + w / 2) + "," + b.y}, edges);
  }));
  const maxUs = Math.max(1, ...D.nodes.map(n => n.total_us));
  g.nodes.forEach((n, i) => {
    const t = nodeTime[n.name];
    const share = t ? t.total_us / maxUs : 0;
    const grp = el("svg:g", {"class": "gnode", "data-name": n.name, transform: "translate(" + pos[i].x + "," + pos[i].y + ")"}, svg);
    el("svg:rect", {width: w, height: h, rx: 4, fill: "hsl(" + (60 - 60 * share) + ",90%," + (92 - 42 * share) + "%)"}, grp);
    el("svg:text", {x: 5, y: 12}, grp, n.op.slice(0, 24));
    el("svg:text", {x: 5, y: 25, fill: "#555"}, grp, (t ? num(t.percent, 1) + "% " : "") + n.name.slice(0, 18));
    el("svg:title", {}, grp, n.name);
    grp.addEventListener("click", () => showNode(n.name));
  });
})();

function showNode(name) {
  const box = document.getElementById("details");
  box.textContent = "";
  box.style.display = "block";
  const close = el("button", {style: "float:right"}, box, "close");
  close.addEventListener("click", () => { box.style.display = "none"; });
  el("h3", {}, box, name);
  const table = el("table", {}, box);
  const row = (k, v) => { const tr = el("tr", {}, table); el("td", {}, tr, k); el("td", {}, tr, v); };
  const n = (D.graph.nodes.find(x => x.name === name)) || null;
  const t = nodeTime[name];
  if (n) { row("op", (n.domain ? n.domain + "." : "") + n.op); row("inputs", n.inputs.join(", ")); row("outputs", n.outputs.join(", ")); }
  if (t) {
    row("provider", t.provider); row("kernel", t.op + (t.kernel ? " \u2014 " + t.kernel : D.kernels[name] ? " \u2014 " + D.kernels[name] : ""));
    row("time", num(t.total_us / 1e3, 3) + " ms in " + t.calls + " call(s), " + num(t.percent, 2) + "% of the run; mean " +
        num(t.mean_us, 1) + " \u00b5s, p90 " + num(t.p90_us, 1) + " \u00b5s");
    row("shapes", t.shapes);
    row("work per call", num(t.flops === null ? null : t.flops / 1e6, 2) + " MFLOP, " + num(t.bytes === null ? null : t.bytes / 1e6, 2) + " MB");
  }
  if (n) {
    row("created by", n.pass);
    Object.keys(n.attrs).forEach(k => row("attr " + k, n.attrs[k]));
  }
  document.querySelectorAll(".gnode.selected").forEach(e => e.classList.remove("selected"));
  const g = document.querySelector('.gnode[data-name="' + CSS.escape(name) + '"]');
  if (g) g.classList.add("selected");
}
// "report.html#node=NAME" opens on that node's details.
if (location.hash.startsWith("#node=")) showNode(decodeURIComponent(location.hash.slice(6)));
</script></body></html>
)HTML";

}  // namespace onyx::cli
