#include "runtime/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "base/check.h"
#include "base/json_string.h"
#include "platform/timer.h"
#include "providers/kernel_variant.h"
#include "providers/provider.h"

namespace onyx {

namespace {

// A profiled session that runs forever must not grow without bound (ONNX Runtime caps too).
constexpr size_t kMaxEvents = 1'000'000;

int ThreadId() {
  static thread_local const int tid = static_cast<int>(syscall(SYS_gettid));
  return tid;
}

int64_t EpochNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ONNX Runtime's profile file suffix: local time of the start, "YYYY-MM-DD_HH-MM-SS_mmm".
std::string FileTimestamp(int64_t epoch_ns) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d_%02d-%02d-%02d_%03d", local.tm_year + 1900, local.tm_mon + 1,
                local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
                static_cast<int>((epoch_ns / 1'000'000) % 1000));
  return buf;
}

// [{"float":[1,3,224,224]},...]: ONNX Runtime's input_type_shape / output_type_shape.
void AppendTypeShapes(std::string& out, const std::vector<ProfiledTensor>& tensors) {
  out += '[';
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i) out += ',';
    out += '{';
    AppendJsonString(out, DataTypeName(tensors[i].dtype));
    out += ":[";
    for (size_t d = 0; d < tensors[i].shape.size(); ++d) {
      if (d) out += ',';
      out += std::to_string(tensors[i].shape[d]);
    }
    out += "]}";
  }
  out += ']';
}

// Tensors only, as ONNX Runtime lists them; sequences, maps and absent values are left out.
const Tensor* TensorIn(const std::vector<Value>& slots, int slot) {
  if (slot < 0 || static_cast<size_t>(slot) >= slots.size() || !slots[slot].is_tensor()) return nullptr;
  const Tensor& t = slots[slot].tensor();
  return t.defined() ? &t : nullptr;
}

}  // namespace

Profiler::Profiler(std::string file_prefix)
    : file_prefix_(std::move(file_prefix)),
      start_epoch_ns_(EpochNanos()),
      start_steady_ns_(NowNanos()),
      pid_(static_cast<int>(getpid())) {
  KernelVariantListenerAdded();
}

Profiler::~Profiler() {
  KernelVariantListenerRemoved();
  try {
    End();
  } catch (...) {
    // A destructor cannot report it; End() called by the user does.
  }
}

bool Profiler::recording() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !ended_;
}

void Profiler::SetIntraOpPool(const ThreadPool* pool, std::string name) {
  pool_ = pool;
  pool_name_ = std::move(name);
  worker_ids_json_ = "{";
  if (pool != nullptr) {
    const std::vector<int> ids = pool->WorkerThreadIds();
    for (size_t i = 0; i < ids.size(); ++i) worker_ids_json_ += (i ? ",\"" : "\"") + std::to_string(ids[i]) + "\":{}";
  }
  worker_ids_json_ += '}';
}

void Profiler::RecordSessionEvent(const char* name, int64_t start_ns, int64_t end_ns) {
  Event e;
  e.session_name = name;
  e.tid = ThreadId();
  e.start_ns = start_ns;
  e.end_ns = end_ns;
  Add(std::move(e));
}

Profiler::NodeStart Profiler::StartNode() const {
  TakeKernelVariant();  // a note left by a kernel run while nothing profiled it
  NodeStart s;
  if (pool_ != nullptr) s.pool = pool_->stats();
  s.ns = NowNanos();
  return s;
}

void Profiler::RecordNode(const NodeStart& start, const ir::Node& node, int node_index, const std::string& provider,
                          const std::vector<int>& input_slots, const std::vector<int>& output_slots,
                          const std::vector<Value>& slots, const std::vector<ProfiledTensor>& constant_inputs) {
  Event e;
  e.end_ns = NowNanos();
  e.start_ns = start.ns;
  // The variant the kernel noted on this thread during Compute (kernels with one path note none).
  const KernelVariant variant = TakeKernelVariant();
  if (variant.algorithm != nullptr) {
    e.kernel = variant.algorithm;
    if (variant.isa != nullptr && *variant.isa != '\0') e.kernel += std::string(" ") + variant.isa;
  }
  if (pool_ != nullptr) {
    const ThreadPool::Stats now = pool_->stats();
    e.pool_delta.found_work_spinning = now.found_work_spinning - start.pool.found_work_spinning;
    e.pool_delta.sleeps = now.sleeps - start.pool.sleeps;
  }
  e.node = &node;
  e.node_index = node_index;
  e.provider = &provider;
  e.tid = ThreadId();
  e.inputs.reserve(input_slots.size());
  for (size_t i = 0; i < input_slots.size(); ++i) {
    if (i < constant_inputs.size() && constant_inputs[i].dtype != DataType::kUndefined) {
      const ProfiledTensor& c = constant_inputs[i];
      int64_t count = 1;
      for (int64_t d : c.shape) count *= d;
      e.parameter_bytes += StorageBytes(c.dtype, count);
      e.inputs.push_back(c);
    } else if (const Tensor* t = TensorIn(slots, input_slots[i])) {
      e.activation_bytes += t->byte_size();
      e.inputs.push_back(ProfiledTensor{t->dtype(), t->shape()});
    }
  }
  e.outputs.reserve(output_slots.size());
  for (int slot : output_slots)
    if (const Tensor* t = TensorIn(slots, slot)) {
      e.output_bytes += t->byte_size();
      e.outputs.push_back(ProfiledTensor{t->dtype(), t->shape()});
    }
  Add(std::move(e));
}

void Profiler::Add(Event event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ended_ || truncated_) return;
  if (events_.size() >= kMaxEvents) {
    truncated_ = true;
    std::fprintf(stderr, "onyx: the profile reached %zu events; later ones are not recorded\n", kMaxEvents);
    return;
  }
  events_.push_back(std::move(event));
}

void Profiler::RecordCopy(const NodeStart& start, const ir::Node& node, const std::string& value, bool to_device,
                          const std::string& provider, const Tensor& copied) {
  Event e;
  e.end_ns = NowNanos();
  e.start_ns = start.ns;
  e.node = &node;
  e.provider = &provider;
  e.tid = ThreadId();
  e.copy_op = to_device ? "MemcpyFromHost" : "MemcpyToHost";
  e.copy_value = value;
  e.activation_bytes = copied.byte_size();
  e.output_bytes = copied.byte_size();
  e.inputs.push_back(ProfiledTensor{copied.dtype(), copied.shape()});
  e.outputs.push_back(ProfiledTensor{copied.dtype(), copied.shape()});
  Add(std::move(e));
}

void Profiler::AppendEvent(std::string& out, const Event& e) const {
  // Both ends are floored to whole microseconds, so nested events stay nested in the file.
  const int64_t ts = (e.start_ns - start_steady_ns_) / 1000;
  const int64_t dur = (e.end_ns - start_steady_ns_) / 1000 - ts;
  out += e.session_name != nullptr ? "{\"cat\":\"Session\"" : "{\"cat\":\"Node\"";
  out += ",\"pid\":" + std::to_string(pid_) + ",\"tid\":" + std::to_string(e.tid) + ",\"dur\":" +
         std::to_string(dur) + ",\"ts\":" + std::to_string(ts) + ",\"ph\":\"X\",\"name\":";
  if (e.session_name != nullptr) {
    AppendJsonString(out, e.session_name);
    out += ",\"args\":{}}";
    return;
  }
  const ir::Node& node = *e.node;
  // Unnamed nodes get "<op>_<index>", as ONNX Runtime names them.
  const std::string node_name = node.name.empty() ? node.op_type + "_" + std::to_string(e.node_index) : node.name;
  AppendJsonString(out, e.copy_op != nullptr ? node_name + "_Memcpy_" + e.copy_value + "_kernel_time"
                                             : node_name + "_kernel_time");
  out += ",\"args\":{\"op_name\":";
  AppendJsonString(out, e.copy_op != nullptr ? std::string(e.copy_op) : node.op_type);
  out += ",\"provider\":";
  AppendJsonString(out, OrtProviderName(*e.provider));
  if (!e.kernel.empty()) {  // Onyx's extra arg (trace viewers show any args)
    out += ",\"kernel\":";
    AppendJsonString(out, e.kernel);
  }
  out += ",\"node_index\":\"" + std::to_string(e.node_index) + "\"";
  out += ",\"activation_size\":\"" + std::to_string(e.activation_bytes) + "\"";
  out += ",\"parameter_size\":\"" + std::to_string(e.parameter_bytes) + "\"";
  out += ",\"output_size\":\"" + std::to_string(e.output_bytes) + "\"";
  out += ",\"input_type_shape\":";
  AppendTypeShapes(out, e.inputs);
  out += ",\"output_type_shape\":";
  AppendTypeShapes(out, e.outputs);
  // What the intra-op pool can tell: the thread that ran the kernel, the pool's size and
  // workers, and how its idle workers picked up loops while the kernel ran (counted pool-wide,
  // so concurrent Runs' loops are included).
  out += ",\"thread_scheduling_stats\":{\"main_thread\":{\"thread_pool_name\":";
  AppendJsonString(out, pool_name_);
  out += ",\"thread_id\":\"" + std::to_string(e.tid) + "\"";
  out += ",\"num_threads\":" + std::to_string(pool_ != nullptr ? pool_->num_threads() : 1);
  out += ",\"workers_found_work_spinning\":" + std::to_string(e.pool_delta.found_work_spinning);
  out += ",\"workers_woke_from_sleep\":" + std::to_string(e.pool_delta.sleeps);
  out += "},\"sub_threads\":" + (worker_ids_json_.empty() ? std::string("{}") : worker_ids_json_) + "}}}";
}

std::string Profiler::ToJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out = "[\n";
  for (size_t i = 0; i < events_.size(); ++i) {
    AppendEvent(out, events_[i]);
    out += i + 1 < events_.size() ? ",\n" : "\n";
  }
  out += "]\n";
  return out;
}

std::string Profiler::End() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return "";
    ended_ = true;
  }
  const std::string path = file_prefix_ + "_" + FileTimestamp(start_epoch_ns_) + ".json";
  const std::string json = ToJson();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  ONYX_CHECK(file.good(), kRuntime, "profiling: cannot create the profile file '", path, "'");
  file << json;
  file.close();
  ONYX_CHECK(!file.fail(), kRuntime, "profiling: could not write the profile file '", path, "'");
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  events_.shrink_to_fit();
  return path;
}

}  // namespace onyx
