// Session profiling (SessionOptions::enable_profiling): records the session's creation, each Run
// and each kernel run, and writes them in ONNX Runtime's format, a JSON array of Chrome trace
// events ("ph": "X", ts and dur in microseconds from the start of profiling), so the same tools
// (chrome://tracing, Perfetto, ORT's profile parsers) read it. See docs/profiling.md.
//
// Thread-safe: concurrent Runs, parallel-mode lanes and subgraphs record at once. A session
// without profiling has no Profiler, so a Run pays one null check per node.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onyx/value.h"
#include "platform/thread_pool.h"

namespace onyx {

// A node input's element type and shape as the profile shows it.
struct ProfiledTensor {
  DataType dtype = DataType::kUndefined;
  Shape shape;
};

class Profiler {
 public:
  // Profiling starts now; the file will be "<file_prefix>_<YYYY-MM-DD_HH-MM-SS_mmm>.json" (local time
  // of this start, as ONNX Runtime names it).
  explicit Profiler(std::string file_prefix);
  // Writes the file if EndProfiling was never called (as ONNX Runtime does when a profiling
  // session is destroyed); errors are swallowed there.
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // ns since the epoch when profiling started.
  int64_t start_time_ns() const { return start_epoch_ns_; }
  // False once End() ran: nothing is recorded after that.
  bool recording() const;
  // The intra-op pool kernels run their loops on, described in each node's
  // thread_scheduling_stats; may be null.
  void SetIntraOpPool(const ThreadPool* pool, std::string name);

  // A "Session" event over [start_ns, end_ns] (NowNanos() clock), on the calling thread.
  void RecordSessionEvent(const char* name, int64_t start_ns, int64_t end_ns);

  // A kernel run. StartNode() before Compute, RecordNode() after: the "Node" event
  // "<node name>_kernel_time" on the calling thread, with the kernel variant the kernel noted
  // (args.kernel, e.g. "winograd F(4x4,3x3) avx512"), the inputs' and outputs' types and
  // shapes taken from `slots` (input_slots/output_slots index it, -1 for omitted ones) and, for
  // constant inputs (which a pre-packing kernel may have left unbound), from constant_inputs
  // (one entry per input, dtype kUndefined for non-constants; empty when none is constant).
  struct NodeStart {
    int64_t ns = 0;
    ThreadPool::Stats pool;
  };
  NodeStart StartNode() const;
  void RecordNode(const NodeStart& start, const ir::Node& node, int node_index, const std::string& provider,
                  const std::vector<int>& input_slots, const std::vector<int>& output_slots,
                  const std::vector<Value>& slots, const std::vector<ProfiledTensor>& constant_inputs);

  // A host<->device copy the runtime made for a node (StartNode() before it): a "Node" event named
  // "<node>_Memcpy_<value>_kernel_time" with op_name MemcpyFromHost (to the device) or MemcpyToHost,
  // as ONNX Runtime's profiles show its copy nodes, on the provider that copied.
  void RecordCopy(const NodeStart& start, const ir::Node& node, const std::string& value, bool to_device,
                  const std::string& provider, const Tensor& copied);

  // Writes the events recorded so far to the file, stops recording and returns the file's path;
  // "" when it was already called. Throws Error(kRuntime) naming the file when it cannot be written.
  std::string End();

  // The JSON array of the events recorded so far (what End() writes).
  std::string ToJson() const;

 private:
  struct Event {
    const char* session_name = nullptr;  // a Session event when set, else a Node event
    const ir::Node* node = nullptr;
    int node_index = 0;
    const std::string* provider = nullptr;
    int tid = 0;
    int64_t start_ns = 0, end_ns = 0;
    std::vector<ProfiledTensor> inputs, outputs;
    std::string kernel;  // the variant the kernel noted (providers/kernel_variant.h), "" when none
    const char* copy_op = nullptr;  // MemcpyFromHost / MemcpyToHost for a copy event
    std::string copy_value;         // the value a copy event moved
    int64_t activation_bytes = 0, parameter_bytes = 0, output_bytes = 0;
    ThreadPool::Stats pool_delta;
  };
  void Add(Event event);
  void AppendEvent(std::string& out, const Event& e) const;

  const std::string file_prefix_;
  const int64_t start_epoch_ns_;
  const int64_t start_steady_ns_;
  const int pid_;
  const ThreadPool* pool_ = nullptr;
  std::string pool_name_;
  std::string worker_ids_json_;  // {"<tid>": {}, ...} for the pool's workers

  mutable std::mutex mutex_;
  bool ended_ = false;
  bool truncated_ = false;  // hit kMaxEvents; later events were dropped
  std::vector<Event> events_;
};

}  // namespace onyx
