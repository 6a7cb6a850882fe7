#include "profile_summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/json_string.h"
#include "node_cost.h"

namespace onyx::cli {
namespace {

double P90(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const double rank = 0.9 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank)), hi = std::min(v.size() - 1, lo + 1);
  return static_cast<double>(v[lo]) + static_cast<double>(v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

std::string ShapeList(const std::vector<TensorShape>& shapes) {
  std::string text;
  for (const auto& s : shapes) {
    if (!text.empty()) text += ", ";
    text += s.type + "[";
    for (size_t i = 0; i < s.dims.size(); ++i) text += (i ? "," : "") + std::to_string(s.dims[i]);
    text += "]";
  }
  return text;
}

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Rate(double amount, double mean_us, double scale, const char* fmt) {
  if (amount < 0 || mean_us <= 0) return "-";
  return Format(fmt, amount / (mean_us * 1e-6) / scale);
}

}  // namespace

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

namespace {

std::string Json(double v) { return v < 0 ? "null" : Format("%.6g", v); }

}  // namespace

ProfileSummary Summarize(const std::vector<TraceEvent>& events, int skip_runs) {
  ProfileSummary s;
  int64_t skip_until = INT64_MIN;
  int seen = 0;
  for (const auto& e : events) {
    if (e.name != "model_run") continue;
    if (seen++ < skip_runs) {
      skip_until = std::max(skip_until, e.ts + e.dur);
      continue;
    }
    s.runs++;
    s.run_us += e.dur;
    s.run_events.push_back(e);
  }
  std::map<std::string, std::vector<int64_t>> op_durs, node_durs;
  std::map<std::string, const TraceEvent*> node_first;
  for (const auto& e : events) {
    if (!IsKernelEvent(e) || e.ts < skip_until) continue;
    s.kernels.push_back(e);
    s.kernel_us += e.dur;
    s.threads = std::max(s.threads, e.threads);
    op_durs[e.op].push_back(e.dur);
    node_durs[e.node].push_back(e.dur);
    s.provider_us[e.provider] += e.dur;
    if (e.op == "MemcpyFromHost" || e.op == "MemcpyToHost") {
      s.copies++;
      s.copy_us += e.dur;
    }
  }
  for (const auto& e : s.kernels) node_first.emplace(e.node, &e);
  const int64_t whole = s.run_us > 0 ? s.run_us : s.kernel_us;
  if (s.run_us == 0) s.run_us = s.kernel_us;
  auto stat = [&](const std::string& key, const std::vector<int64_t>& durs) {
    TimeStat t;
    t.key = key;
    t.calls = static_cast<int64_t>(durs.size());
    for (int64_t d : durs) t.total_us += d;
    t.mean_us = static_cast<double>(t.total_us) / static_cast<double>(t.calls);
    t.p90_us = P90(durs);
    t.percent = whole > 0 ? 100.0 * static_cast<double>(t.total_us) / static_cast<double>(whole) : 0;
    return t;
  };
  for (const auto& [op, durs] : op_durs) s.op_types.push_back(stat(op, durs));
  for (const auto& [node, durs] : node_durs) {
    TimeStat t = stat(node, durs);
    const TraceEvent& first = *node_first[node];
    t.op = first.op;
    t.provider = first.provider;
    t.flops = NodeFlops(first);
    t.bytes = NodeBytes(first);
    t.shapes = ShapeList(first.inputs) + " -> " + ShapeList(first.outputs);
    t.kernel = first.kernel;
    s.nodes.push_back(t);
  }
  auto slowest_first = [](const TimeStat& a, const TimeStat& b) {
    return a.total_us != b.total_us ? a.total_us > b.total_us : a.key < b.key;
  };
  std::sort(s.op_types.begin(), s.op_types.end(), slowest_first);
  std::sort(s.nodes.begin(), s.nodes.end(), slowest_first);
  return s;
}

std::string SummaryText(const ProfileSummary& s, int top, const MachinePeak& peak) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "runs: %d  total %.3f ms  (%.3f ms per run; kernels %.3f ms)\n", s.runs,
                s.run_us / 1e3, s.runs > 0 ? s.run_us / 1e3 / s.runs : s.run_us / 1e3, s.kernel_us / 1e3);
  out += line;
  std::snprintf(line, sizeof line, "peak of this machine: %.1f GFLOP/s (%d thread%s, %s), %.1f GB/s (memcpy)\n",
                peak.gflops, peak.threads, peak.threads == 1 ? "" : "s", peak.gemm_kernel.c_str(), peak.gbytes_per_s);
  out += line;
  out += "\nby op type:\n";
  std::snprintf(line, sizeof line, "  %-28s %11s %7s %7s %10s %10s\n", "op", "total ms", "%", "calls", "mean us",
                "p90 us");
  out += line;
  for (const auto& t : s.op_types) {
    std::snprintf(line, sizeof line, "  %-28s %11.3f %7.2f %7lld %10.1f %10.1f\n", t.key.c_str(), t.total_us / 1e3,
                  t.percent, static_cast<long long>(t.calls), t.mean_us, t.p90_us);
    out += line;
  }
  std::snprintf(line, sizeof line, "\ntop %d nodes (of %zu):\n", std::min<int>(top, static_cast<int>(s.nodes.size())),
                s.nodes.size());
  out += line;
  std::snprintf(line, sizeof line, "  %-36s %-18s %9s %6s %6s %9s %9s %9s %8s %8s %7s %7s  %s\n", "node", "op",
                "total ms", "%", "calls", "mean us", "p90 us", "MFLOP", "MB", "GFLOP/s", "GB/s", "%peak", "kernel");
  out += line;
  for (int i = 0; i < top && i < static_cast<int>(s.nodes.size()); ++i) {
    const auto& t = s.nodes[i];
    const std::string gflops = Rate(t.flops, t.mean_us, 1e9, "%.1f");
    const std::string peak_pct =
        t.flops < 0 || peak.gflops <= 0 ? "-" : Format("%.0f", 100.0 * t.flops / (t.mean_us * 1e-6) / 1e9 / peak.gflops);
    std::snprintf(line, sizeof line, "  %-36s %-18s %9.3f %6.2f %6lld %9.1f %9.1f %9s %8s %8s %7s %7s  %s\n",
                  t.key.substr(0, 36).c_str(), t.op.substr(0, 18).c_str(), t.total_us / 1e3, t.percent,
                  static_cast<long long>(t.calls), t.mean_us, t.p90_us,
                  t.flops < 0 ? "-" : Format("%.2f", t.flops / 1e6).c_str(),
                  t.bytes < 0 ? "-" : Format("%.2f", t.bytes / 1e6).c_str(), gflops.c_str(),
                  Rate(t.bytes, t.mean_us, 1e9, "%.1f").c_str(), peak_pct.c_str(),
                  t.kernel.empty() ? "-" : t.kernel.substr(0, 48).c_str());
    out += line;
  }
  out += "\nby provider:\n";
  for (const auto& [provider, us] : s.provider_us) {
    std::snprintf(line, sizeof line, "  %-28s %11.3f ms %7.2f %%\n", provider.c_str(), us / 1e3,
                  s.run_us > 0 ? 100.0 * us / s.run_us : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line, "host<->device copies: %lld (%.3f ms)\n", static_cast<long long>(s.copies),
                s.copy_us / 1e3);
  out += line;
  return out;
}

std::string SummaryJson(const ProfileSummary& s, const MachinePeak& peak) {
  auto stats = [](const std::vector<TimeStat>& rows, bool nodes) {
    std::string out = "[";
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& t = rows[i];
      out += (i ? ", " : "") + std::string("{\"name\": ") + JsonString(t.key) +
             ", \"total_us\": " + std::to_string(t.total_us) + ", \"calls\": " + std::to_string(t.calls) +
             ", \"percent\": " + Json(t.percent) + ", \"mean_us\": " + Json(t.mean_us) + ", \"p90_us\": " + Json(t.p90_us);
      if (nodes) {
        out += ", \"op\": " + JsonString(t.op) + ", \"provider\": " + JsonString(t.provider) + ", \"flops\": " +
               Json(t.flops) + ", \"bytes\": " + Json(t.bytes) + ", \"shapes\": " + JsonString(t.shapes) +
               ", \"kernel\": " + JsonString(t.kernel);
      }
      out += "}";
    }
    return out + "]";
  };
  std::string providers;
  for (const auto& [p, us] : s.provider_us)
    providers += (providers.empty() ? "" : ", ") + JsonString(p) + ": " + std::to_string(us);
  return "{\"runs\": " + std::to_string(s.runs) + ", \"run_us\": " + std::to_string(s.run_us) +
         ", \"kernel_us\": " + std::to_string(s.kernel_us) + ", \"threads\": " + std::to_string(s.threads) +
         ", \"peak\": {\"gflops\": " + Json(peak.gflops) + ", \"gbytes_per_s\": " + Json(peak.gbytes_per_s) +
         ", \"threads\": " + std::to_string(peak.threads) + ", \"gemm_kernel\": " + JsonString(peak.gemm_kernel) +
         "}, \"op_types\": " + stats(s.op_types, false) + ", \"nodes\": " + stats(s.nodes, true) +
         ", \"providers_us\": {" + providers + "}, \"copies\": " + std::to_string(s.copies) +
         ", \"copy_us\": " + std::to_string(s.copy_us) + "}";
}

}  // namespace onyx::cli
