// The kernel seam. A kernel is created once per node when a session is built (parse
// attributes, pre-pack constant weights) and then computes any number of times, possibly from
// several threads at once: Compute is const and keeps per-run state on the stack or in the
// workspace the context gives it.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/check.h"
#include "ir/graph.h"
#include "onyx/value.h"

namespace onyx {

class ThreadPool;

// A subgraph compiled by the runtime (If/Loop/Scan bodies). Kernels run it through
// KernelContext::RunSubgraph; its values from enclosing scopes are supplied automatically.
class Subgraph {
 public:
  virtual ~Subgraph() = default;
  virtual const std::vector<std::string>& input_names() const = 0;
  virtual const std::vector<std::string>& output_names() const = 0;
  virtual const ir::Graph& graph() const = 0;
};

// Packed forms of constant weights that outlive one session creation (the session's creation
// cache, runtime/creation_cache.h). A kernel asks for a pack by key; the store answers with the
// bytes an earlier creation made (a view into the cache file's mapping: fill is not called) or
// with fresh memory that `fill` writes, which the store then remembers for the cache.
class PackedWeightStore {
 public:
  struct Blob {
    void* data = nullptr;  // 64-byte aligned; read-only when it came from the cache
    size_t bytes = 0;
    std::shared_ptr<const void> owner;  // keeps data alive; never null
  };
  virtual ~PackedWeightStore() = default;
  virtual Blob Get(const std::string& key, size_t bytes, const std::function<void(void*)>& fill) = 0;
  // Fresh memory for a pack the store does not keep (one whose packing also computes data kept
  // beside it, as an int8 pack's column sums), placed where the store puts its own packs.
  virtual Blob Fresh(size_t bytes);
};

// What a kernel may look at while it is being created.
// Facts kernels derive from their whole graph (whether it quantizes, who produces and reads each
// value): computed on the first kernel that asks and kept for the others, so that creation does
// not rescan the graph per node (quadratic in its size). One per graph build, where kernels are
// created one at a time. A key always holds one type; another type under it throws.
class GraphFacts {
 public:
  template <typename T>
  const T& Get(const std::string& key, const std::function<T()>& compute) {
    auto it = values_.find(key);
    if (it == values_.end()) it = values_.emplace(key, compute()).first;
    return std::any_cast<const T&>(it->second);
  }

 private:
  std::unordered_map<std::string, std::any> values_;
};

class KernelInfo {
 public:
  KernelInfo(const ir::Node& node, const ir::Graph* graph,
             std::function<const Tensor*(const std::string&)> constant_lookup,
             std::function<const Subgraph*(const std::string&)> subgraph_lookup,
             std::function<std::shared_ptr<const TypeInfo>(const std::string&)> type_lookup, ThreadPool* pool)
      : node_(node),
        graph_(graph),
        constant_lookup_(std::move(constant_lookup)),
        subgraph_lookup_(std::move(subgraph_lookup)),
        type_lookup_(std::move(type_lookup)),
        pool_(pool) {}

  const ir::Node& node() const { return node_; }
  // The graph holding the node (e.g. for ops that read other nodes, like Gradient).
  const ir::Graph* graph() const { return graph_; }
  int opset() const { return node_.opset; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  bool has_output(size_t i) const { return i < node_.outputs.size() && !node_.outputs[i].empty(); }

  // Attributes. The *Or forms return the default when absent; the others throw naming the node.
  bool HasAttr(const std::string& name) const { return node_.FindAttribute(name) != nullptr; }
  int64_t GetInt(const std::string& name) const;
  int64_t GetIntOr(const std::string& name, int64_t fallback) const;
  float GetFloat(const std::string& name) const;
  float GetFloatOr(const std::string& name, float fallback) const;
  std::string GetString(const std::string& name) const;
  std::string GetStringOr(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> GetInts(const std::string& name) const;
  std::vector<int64_t> GetIntsOr(const std::string& name, std::vector<int64_t> fallback) const;
  std::vector<float> GetFloats(const std::string& name) const;
  std::vector<float> GetFloatsOr(const std::string& name, std::vector<float> fallback) const;
  std::vector<std::string> GetStrings(const std::string& name) const;
  std::vector<std::string> GetStringsOr(const std::string& name, std::vector<std::string> fallback) const;
  const Tensor& GetTensor(const std::string& name) const;
  const ir::Attribute* FindAttr(const std::string& name) const { return node_.FindAttribute(name); }

  // The value of input i when it is a constant the session owns (an initializer that cannot be
  // overridden by a feed), so it can be pre-packed; null otherwise. The pointer is valid only
  // while the kernel is being created: copy the Tensor (cheap, it shares the bytes) to keep it.
  const Tensor* ConstantInput(size_t i) const;
  // Static type of input i when the model or inference knows it; null otherwise.
  std::shared_ptr<const TypeInfo> InputType(size_t i) const;
  std::shared_ptr<const TypeInfo> OutputType(size_t i) const;
  // The compiled subgraph held in a graph attribute (throws when absent).
  const Subgraph& GetSubgraph(const std::string& attr_name) const;
  ThreadPool* thread_pool() const { return pool_; }

  // The session's packed-weight store, or null (no creation cache: pack into fresh memory).
  const std::shared_ptr<PackedWeightStore>& packed_weight_store() const { return packed_weights_; }
  void set_packed_weight_store(std::shared_ptr<PackedWeightStore> store) { packed_weights_ = std::move(store); }
  // The store key of a pack of input i: the node and the value it packs, then the pack's form
  // (what makes two packs of one weight differ). Unique per graph; the store drops keys that a
  // model with duplicate node names makes twice.
  std::string PackKey(size_t i, const std::string& form) const;

  // The graph build's memo of whole-graph facts, or null (a lone kernel, e.g. constant folding).
  GraphFacts* graph_facts() const { return graph_facts_; }
  void set_graph_facts(GraphFacts* facts) { graph_facts_ = facts; }

  // "node 'x' (Conv, opset 11)" for messages.
  std::string Describe() const { return node_.Describe(); }
  [[noreturn]] void Fail(const std::string& message) const;

 private:
  const ir::Attribute& Require(const std::string& name, ir::AttrType type) const;

  const ir::Node& node_;
  const ir::Graph* graph_;
  std::function<const Tensor*(const std::string&)> constant_lookup_;
  std::function<const Subgraph*(const std::string&)> subgraph_lookup_;
  std::function<std::shared_ptr<const TypeInfo>(const std::string&)> type_lookup_;
  ThreadPool* pool_;
  std::shared_ptr<PackedWeightStore> packed_weights_;
  GraphFacts* graph_facts_ = nullptr;
};

// What a kernel sees while computing. Implemented by the runtime.
class KernelContext {
 public:
  virtual ~KernelContext() = default;

  virtual size_t num_inputs() const = 0;
  virtual size_t num_outputs() const = 0;
  // Null when the optional input is omitted.
  virtual const Value* input_value(size_t i) const = 0;
  // Whether output i is wanted (optional outputs may be omitted: then skip computing them).
  virtual bool has_output(size_t i) const = 0;

  // The tensor input i, or null when omitted; throws when the input is not a tensor.
  const Tensor* input(size_t i) const;
  // The tensor input i; throws naming the node when omitted.
  const Tensor& required_input(size_t i) const;

  // Allocates output i. When output i is not wanted the tensor is scratch that gets dropped,
  // so kernels need not check has_output before writing a mandatory output.
  virtual Tensor& AllocateOutput(size_t i, DataType dtype, const Shape& shape) = 0;
  // Sets output i to an existing value (a sequence, or a tensor sharing an input's bytes:
  // values are immutable once produced, so sharing is safe).
  virtual void SetOutput(size_t i, Value value) = 0;

  // Runs a compiled subgraph of this node with the given formal inputs.
  virtual std::vector<Value> RunSubgraph(const Subgraph& subgraph, std::vector<Value> inputs) = 0;

  virtual ThreadPool* thread_pool() const = 0;
  virtual Allocator* allocator() const = 0;
  virtual const ir::Node& node() const = 0;

  // Throws Error(kRuntime) naming the node, its op and opset, and its inputs' types/shapes.
  [[noreturn]] void Fail(const std::string& message) const;
  std::string DescribeInputs() const;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual void Compute(KernelContext& ctx) const = 0;
  // False when the kernel copied or pre-packed constant input i at creation and never reads the
  // original again: the session can then free it ("weights are not copied after loading":
  // the packed form replaces the original).
  virtual bool ReadsConstantInputAtRun(size_t input) const { return true; }
  // Bit i set: output `output` may take over input i's buffer (in-place reuse). Only for kernels
  // where output element k depends on input element k alone, read before element k of the output
  // is written and never after. The runtime decides whether to hand the buffer over (the input is
  // an intermediate this node reads last, nothing else refers to its bytes, same dtype and shape).
  virtual uint32_t InPlaceInputsFor(size_t output) const { return 0; }
};

// Registration: one static object per kernel file.
struct KernelDef {
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  int since = 1;
  int until = 1 << 30;  // inclusive
  std::string provider = "CPU";
  std::function<std::unique_ptr<OpKernel>(const KernelInfo&)> factory;
};

class KernelRegistry {
 public:
  static KernelRegistry& Global();
  void Register(KernelDef def);
  // The kernel for the node's (domain, op, opset) on `provider`, or null.
  const KernelDef* Find(const std::string& provider, const std::string& domain, const std::string& op_type,
                        int opset) const;
  // All opset ranges registered for an op (for "why not" messages).
  std::vector<const KernelDef*> FindAll(const std::string& provider, const std::string& domain,
                                        const std::string& op_type) const;
  const std::vector<KernelDef>& all() const { return defs_; }

 private:
  std::vector<KernelDef> defs_;
  // Indices into defs_ by op type, in registration order: a session looks up every node, and a
  // scan of every definition was a tenth of a small model's creation.
  std::unordered_map<std::string, std::vector<size_t>> by_op_type_;
};

struct KernelRegistrar {
  explicit KernelRegistrar(KernelDef def) { KernelRegistry::Global().Register(std::move(def)); }
};

#define ONYX_CONCAT_INNER(a, b) a##b
#define ONYX_CONCAT(a, b) ONYX_CONCAT_INNER(a, b)

// ONYX_REGISTER_KERNEL("CPU", "", "Relu", 6, 13, ReluKernel): KernelClass(const KernelInfo&).
#define ONYX_REGISTER_KERNEL(provider_name, domain_name, op, since_version, until_version, KernelClass) \
  static ::onyx::KernelRegistrar ONYX_CONCAT(onyx_kernel_registrar_, __COUNTER__)(::onyx::KernelDef{     \
      op, domain_name, since_version, until_version, provider_name,                                     \
      [](const ::onyx::KernelInfo& info) -> std::unique_ptr<::onyx::OpKernel> {                           \
        return std::make_unique<KernelClass>(info);                                                     \
      }})

// The same with a lambda factory, for one class serving several ops.
#define ONYX_REGISTER_KERNEL_FN(provider_name, domain_name, op, since_version, until_version, factory_fn) \
  static ::onyx::KernelRegistrar ONYX_CONCAT(onyx_kernel_registrar_, __COUNTER__)(                        \
      ::onyx::KernelDef{op, domain_name, since_version, until_version, provider_name, factory_fn})

#define ONYX_CPU_KERNEL(op, since_version, until_version, KernelClass) \
  ONYX_REGISTER_KERNEL("CPU", "", op, since_version, until_version, KernelClass)

inline constexpr int kOpsetMax = 1 << 30;

}  // namespace onyx
