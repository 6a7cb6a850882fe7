// Reads a profile in ONNX Runtime's Chrome-trace format: Onyx's own (docs/profiling.md) and ONNX
// Runtime's (a JSON array of events, or an object holding them under "traceEvents").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onyx::cli {

struct TensorShape {
  std::string type;             // ONNX's type name: "float", "int64", ...
  std::vector<int64_t> dims;
};

struct TraceEvent {
  std::string cat;   // "Session", "Node", ...
  std::string name;  // "model_run", "<node>_kernel_time", ...
  int64_t ts = 0, dur = 0;  // microseconds
  int64_t pid = 0, tid = 0;
  // Node events only (empty otherwise).
  std::string node;      // the name without "_kernel_time"
  std::string op;        // args.op_name
  std::string provider;  // args.provider
  std::string kernel;    // args.kernel: the kernel variant Onyx ran ("" in ONNX Runtime's traces)
  int64_t activation_bytes = -1, parameter_bytes = -1, output_bytes = -1;  // -1: not in the file
  std::vector<TensorShape> inputs, outputs;
  int threads = 0;  // the intra-op pool's size when the trace says (Onyx's num_threads), else 0
};

// Every complete ("ph": "X") event of the file, in file order. Throws Error(kInvalidArgument)
// naming the file when it is not such a trace.
std::vector<TraceEvent> ReadTrace(const std::string& path);

// The kernel runs: Node events named "<node>_kernel_time" (ONNX Runtime's fence events and
// others are left out).
bool IsKernelEvent(const TraceEvent& e);

}  // namespace onyx::cli
