#include "profile_html.h"

#include <cstdio>
#include <set>

#include "node_cost.h"
#include "runtime/pass_provenance.h"
#include "profile_html_page.h"

namespace onyx::cli {
namespace {

std::string Num(double v) {
  if (v < 0) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

template <typename T>
std::string JoinNumbers(const std::vector<T>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

std::string AttributeText(const ir::Attribute& a) {
  switch (a.type) {
    case ir::AttrType::kFloat: return Num(a.f);
    case ir::AttrType::kInt: return std::to_string(a.i);
    case ir::AttrType::kString: return "\"" + a.s + "\"";
    case ir::AttrType::kTensor: return "tensor " + a.t.Describe();
    case ir::AttrType::kGraph: return "graph of " + std::to_string(a.g ? a.g->nodes.size() : 0) + " nodes";
    case ir::AttrType::kFloats: {
      std::string out;
      for (size_t i = 0; i < a.floats.size(); ++i) out += (i ? "," : "") + Num(a.floats[i]);
      return "[" + out + "]";
    }
    case ir::AttrType::kInts: return "[" + JoinNumbers(a.ints) + "]";
    case ir::AttrType::kStrings: {
      std::string out;
      for (size_t i = 0; i < a.strings.size(); ++i) out += (i ? "," : "") + ("\"" + a.strings[i] + "\"");
      return "[" + out + "]";
    }
    default: return "(attribute of type " + std::to_string(static_cast<int>(a.type)) + ")";
  }
}

// For traces without Onyx's args.kernel (ONNX Runtime's): GEMM-backed ops name this machine's GEMM
// microkernel.
std::string KernelNote(const std::string& op, const MachinePeak& peak) {
  static const std::set<std::string> gemm_ops = {"MatMul", "FusedMatMul", "Gemm", "Attention", "MultiHeadAttention"};
  if (gemm_ops.count(op)) return "GEMM microkernel on this machine: " + peak.gemm_kernel;
  return "";
}

std::string GraphJson(const ReportSources& sources) {
  if (sources.graph == nullptr) {
    return "{\"nodes\": [], \"note\": " +
           JsonString("No graph: the report was made from a trace alone (give the MODEL too to draw it).") + "}";
  }
  std::string out = "{\"nodes\": [";
  bool first = true;
  for (const auto& node : sources.graph->nodes) {
    out += first ? "" : ",\n";
    first = false;
    std::string inputs, outputs, attrs;
    for (const auto& v : node->inputs) inputs += (inputs.empty() ? "" : ",") + JsonString(v);
    for (const auto& v : node->outputs) outputs += (outputs.empty() ? "" : ",") + JsonString(v);
    for (const auto& a : node->attributes) attrs += (attrs.empty() ? "" : ",") + JsonString(a.name) + ":" + JsonString(AttributeText(a));
    out += "{\"name\":" + JsonString(node->name) + ",\"op\":" + JsonString(node->op_type) +
           ",\"domain\":" + JsonString(node->domain) + ",\"inputs\":[" + inputs + "],\"outputs\":[" + outputs +
           "],\"attrs\":{" + attrs + "},\"pass\":" + JsonString(CreatedBy(*node, sources.optimization)) + "}";
  }
  const std::string note =
      "The optimized graph of " + sources.model_path + " (" + std::to_string(sources.graph->nodes.size()) +
      " nodes; subgraphs of If/Loop/Scan are not drawn). The creating pass is the one the optimizer recorded for "
      "the node; the kernel is the variant the trace recorded for its first call (algorithm and ISA).";
  return out + "], \"note\": " + JsonString(note) + "}";
}

// "</" would end the <script> block holding the data.
std::string ScriptSafe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += json[i];
    }
  }
  return out;
}

}  // namespace

std::string ProfileHtml(const ProfileSummary& summary, const MachinePeak& peak, const ReportSources& sources) {
  // The summary's own JSON, with the pieces only the page needs added.
  std::string data = SummaryJson(summary, peak);
  data.pop_back();  // its closing brace
  std::string nodes_kernels = "{";
  for (const auto& t : summary.nodes) {
    const std::string note = t.kernel.empty() ? KernelNote(t.op, peak) : "";
    if (!note.empty()) nodes_kernels += (nodes_kernels.size() > 1 ? "," : "") + JsonString(t.key) + ":" + JsonString(note);
  }
  nodes_kernels += "}";
  std::string timeline = "[";
  constexpr size_t kMaxTimelineEvents = 50000;  // keeps the page responsive
  for (size_t i = 0; i < summary.kernels.size() && i < kMaxTimelineEvents; ++i) {
    const auto& e = summary.kernels[i];
    timeline += (i ? ",\n" : "") + std::string("{\"tid\":") + std::to_string(e.tid) + ",\"ts\":" + std::to_string(e.ts) +
                ",\"dur\":" + std::to_string(e.dur) + ",\"node\":" + JsonString(e.node) + ",\"op\":" + JsonString(e.op) + "}";
  }
  timeline += "]";
  std::string runs = "[";
  for (size_t i = 0; i < summary.run_events.size(); ++i) {
    const auto& e = summary.run_events[i];
    runs += (i ? "," : "") + std::string("{\"ts\":") + std::to_string(e.ts) + ",\"dur\":" + std::to_string(e.dur) + "}";
  }
  runs += "]";
  data += ", \"model\": " + JsonString(sources.model_path) + ", \"trace\": " + JsonString(sources.trace_path) +
          ", \"kernels\": " + nodes_kernels + ", \"timeline\": " + timeline + ", \"run_events\": " + runs +
          ", \"graph\": " + GraphJson(sources) + "}";
  return std::string(kProfilePageHead) + ScriptSafe(data) + kProfilePageTail;
}

}  // namespace onyx::cli
