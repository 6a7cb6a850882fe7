// What `onyx profile` prints: a trace's time per op type, per node and per provider, with % of
// the run, calls, mean and p90, and per node the FLOPs and bytes of one call and the rates they
// reach against the machine's peak.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "machine_peak.h"
#include "trace_reader.h"

namespace onyx::cli {

struct TimeStat {
  std::string key;       // op type, or node name
  std::string op;        // node rows: the op that ran
  std::string provider;  // node rows
  int64_t calls = 0;
  int64_t total_us = 0;
  double mean_us = 0, p90_us = 0;
  double percent = 0;    // of the runs' time
  double flops = -1;     // node rows: one call's, -1 unknown
  double bytes = -1;     // node rows: one call's, -1 unknown
  std::string shapes;    // node rows: "float[1,3,224,224], ... -> float[...]"
  std::string kernel;    // node rows: the kernel variant of its first call ("" when the trace has none)
};

struct ProfileSummary {
  int runs = 0;              // model_run events counted
  int64_t run_us = 0;        // their total (the kernels' total when there are none)
  int64_t kernel_us = 0;     // all kernel events
  int threads = 0;           // intra-op threads the trace names (0: it does not say)
  std::vector<TimeStat> op_types;  // slowest first
  std::vector<TimeStat> nodes;     // slowest first
  std::map<std::string, int64_t> provider_us;
  int64_t copies = 0, copy_us = 0;  // MemcpyFromHost / MemcpyToHost kernels
  std::vector<TraceEvent> kernels;  // the kernel events counted, for the report's timeline
  std::vector<TraceEvent> run_events;
};

// Skips the first `skip_runs` model_run events and everything that started before the last of
// them ended (warm-up runs).
ProfileSummary Summarize(const std::vector<TraceEvent>& events, int skip_runs);

std::string SummaryText(const ProfileSummary& s, int top, const MachinePeak& peak);
std::string SummaryJson(const ProfileSummary& s, const MachinePeak& peak);

// s as a quoted JSON string.
std::string JsonString(std::string_view s);

}  // namespace onyx::cli
