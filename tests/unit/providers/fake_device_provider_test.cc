// The runtime's device boundaries, proven without a GPU: a test-only provider "FakeDevice" claims
// a few ops and lives on its own device (kCuda id 7) whose memory is host memory, so CPU kernels
// compute on it; its CopyTensor counts copies. Checks that copies are inserted exactly where a
// value crosses between the CPU and the device, that their number matches copies_per_run(), and
// that results equal a scalar reference and the CPU-only session's.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>

#include "model_builder.h"
#include "onyx/session.h"
#include "providers/provider.h"
#include "runtime/session_impl.h"

namespace onyx {
namespace {

constexpr Device kFakeDevice{DeviceType::kCuda, 7};
std::atomic<int> g_copies{0};

class FakeDeviceAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override { return CpuAllocator()->Allocate(bytes); }
  void Free(void* p) override { CpuAllocator()->Free(p); }
  Device device() const override { return kFakeDevice; }
};

// Runs the CPU kernel of the node, after checking every input it reads on the device is there.
class OnDeviceKernel final : public OpKernel {
 public:
  OnDeviceKernel(std::unique_ptr<OpKernel> cpu, std::set<size_t> host_inputs)
      : cpu_(std::move(cpu)), host_inputs_(std::move(host_inputs)) {}
  void Compute(KernelContext& ctx) const override {
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) continue;
      const Device want = host_inputs_.count(i) ? Device{} : kFakeDevice;
      if (t->device() != want) ctx.Fail(StrCat("input ", i, " is on ", t->device().ToString(), ", not ", want.ToString()));
    }
    cpu_->Compute(ctx);
  }

 private:
  std::unique_ptr<OpKernel> cpu_;
  std::set<size_t> host_inputs_;
};

class FakeDeviceProvider final : public ExecutionProvider {
 public:
  const std::string& name() const override { return name_; }
  Device device() const override { return kFakeDevice; }
  Allocator* allocator() const override { return &allocator_; }
  std::vector<NodeClaim> GetCapability(const ir::Graph& graph) const override {
    static const std::set<std::string> ops = {"Relu", "Add", "Mul", "Reshape"};
    std::vector<NodeClaim> claims;
    for (const auto& node : graph.nodes)
      claims.push_back(ops.count(node->op_type) ? NodeClaim{true, ""}
                                                : NodeClaim{false, "FakeDevice has no kernel for " + node->op_type});
    return claims;
  }
  std::unique_ptr<OpKernel> CreateKernel(const KernelInfo& info) const override {
    const ir::Node& node = info.node();
    const KernelDef* def = KernelRegistry::Global().Find("CPU", node.domain, node.op_type, node.opset);
    std::set<size_t> host;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (InputOnCpu(node, i)) host.insert(i);
    return std::make_unique<OnDeviceKernel>(def->factory(info), host);
  }
  void CopyTensor(const Tensor& src, Tensor& dst) const override {
    const bool up = src.device() == Device{} && dst.device() == kFakeDevice;
    const bool down = src.device() == kFakeDevice && dst.device() == Device{};
    ONYX_CHECK(up || down, kInvalidArgument, "FakeDevice copies ", src.device().ToString(), " -> ",
               dst.device().ToString());
    std::memcpy(dst.raw_data(), src.raw_data(), static_cast<size_t>(src.byte_size()));
    ++g_copies;
  }
  bool InputOnCpu(const ir::Node& node, size_t input) const override {
    return node.op_type == "Reshape" && input == 1;  // the shape is read on the host
  }

 private:
  std::string name_ = "FakeDevice";
  mutable FakeDeviceAllocator allocator_;
};

const ProviderRegistrar kRegisterFake("FakeDevice", ProviderFactory{
    [](const ProviderOptions& options, bool) -> std::unique_ptr<ExecutionProvider> {
      ONYX_CHECK(options.empty(), kInvalidArgument, "FakeDevice takes no options");
      return std::make_unique<FakeDeviceProvider>();
    },
    [] { return std::string(); }});

// y = Reshape(sigmoid(relu(x) + w) * x, [3, 2]), with Sigmoid left to the CPU.
std::string Model() {
  test::ModelBuilder b;
  b.Input("x", DataType::kFloat, {2, 3}).Output("y", DataType::kFloat, {3, 2});
  b.Initializer("w", Tensor::FromVector<float>(DataType::kFloat, {2, 3}, {0.5f, -1, 2, 0, 1, -2}));
  b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {3, 2}));
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Add", {"r", "w"}, {"a"});
  b.Node("Sigmoid", {"a"}, {"s"});
  b.Node("Mul", {"s", "x"}, {"m"});
  b.Node("Reshape", {"m", "shape"}, {"y"});
  return b.Bytes();
}

const std::vector<float> kX = {-1, 2, -3, 4, -5, 6};

std::vector<float> Reference() {
  const std::vector<float> w = {0.5f, -1, 2, 0, 1, -2};
  std::vector<float> y;
  for (size_t i = 0; i < kX.size(); ++i) {
    const float a = std::max(kX[i], 0.0f) + w[i];
    y.push_back(kX[i] / (1.0f + std::exp(-a)));
  }
  return y;
}

SessionOptions Options(std::vector<std::string> providers) {
  SessionOptions o;
  o.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  o.execution_providers = std::move(providers);
  return o;
}

std::vector<float> Values(const Value& v) {
  EXPECT_EQ(v.tensor().device(), Device{});  // outputs come back to the CPU
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << i;
}

TEST(FakeDeviceProvider, CopiesOnlyAtTheBoundariesAndCountsThem) {
  const std::string bytes = Model();
  g_copies = 0;
  Session s(bytes.data(), bytes.size(), Options({"FakeDevice", "CPU"}));
  // The constant w went to the device once, at creation; the shape stays on the host.
  EXPECT_EQ(g_copies.load(), 1);
  // x up (shared by Relu and Mul), a down for Sigmoid, s up for Mul, y down: 4 per Run.
  EXPECT_EQ(s.copies_per_run(), 4);
  const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {2, 3}, kX);
  g_copies = 0;
  auto out = s.Run({{"x", Value(x)}});
  EXPECT_EQ(g_copies.load(), 4);
  ExpectNear(Values(out[0]), Reference());
  s.Run({{"x", Value(x)}});
  EXPECT_EQ(g_copies.load(), 8);

  Session cpu(bytes.data(), bytes.size(), Options({"CPU"}));
  EXPECT_EQ(cpu.copies_per_run(), 0);
  ExpectNear(Values(out[0]), Values(cpu.Run({{"x", Value(x)}})[0]));
}

// ONNX Runtime's profiles show its copies as MemcpyFromHost / MemcpyToHost nodes; Onyx's show the
// copies the runtime made the same way, one event per copy, on the provider that copied.
TEST(FakeDeviceProvider, ProfileShowsEachCopy) {
  const std::string bytes = Model();
  SessionOptions o = Options({"FakeDevice", "CPU"});
  o.enable_profiling = true;
  o.profile_file_prefix = ::testing::TempDir() + "fake_device_copies";
  Session s(bytes.data(), bytes.size(), o);
  s.Run({{"x", Value(Tensor::FromVector<float>(DataType::kFloat, {2, 3}, kX))}});
  const std::string path = s.EndProfiling();
  std::ifstream file(path);
  const std::string json((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  auto count = [&](const std::string& text) {
    int n = 0;
    for (size_t at = json.find(text); at != std::string::npos; at = json.find(text, at + 1)) ++n;
    return n;
  };
  // x and s go up, a and y come down (CopiesOnlyAtTheBoundariesAndCountsThem).
  EXPECT_EQ(count("\"op_name\":\"MemcpyFromHost\""), 2) << json;
  EXPECT_EQ(count("\"op_name\":\"MemcpyToHost\""), 2) << json;
  EXPECT_EQ(count("_Memcpy_x_kernel_time"), 1) << json;
}

TEST(FakeDeviceProvider, PlacesByPriorityWithReasons) {
  const std::string bytes = Model();
  Session s(bytes.data(), bytes.size(), Options({"FakeDevice", "CPU"}));
  EXPECT_EQ(s.providers(), (std::vector<std::string>{"FakeDeviceExecutionProvider", "CPUExecutionProvider"}));
  for (const auto& node : s.impl().model().graph->nodes) {
    const Placement* p = s.impl().plan().PlacementOf(node.get());
    ASSERT_NE(p, nullptr);
    if (node->op_type == "Sigmoid") {
      EXPECT_EQ(p->provider->name(), "CPU");
      ASSERT_EQ(p->declined.size(), 1u);
      EXPECT_EQ(p->declined[0].second, "FakeDevice has no kernel for Sigmoid");
    } else {
      EXPECT_EQ(p->provider->name(), "FakeDevice") << node->op_type;
    }
  }
  // CPU first: the fake device gets nothing, no copies.
  Session cpu_first(bytes.data(), bytes.size(), Options({"CPU", "FakeDevice"}));
  EXPECT_EQ(cpu_first.copies_per_run(), 0);
}

TEST(FakeDeviceProvider, ParallelModeMakesTheSameCopies) {
  const std::string bytes = Model();
  SessionOptions o = Options({"FakeDevice", "CPU"});
  o.execution_mode = ExecutionMode::kParallel;
  o.inter_op_num_threads = 2;
  Session s(bytes.data(), bytes.size(), o);
  g_copies = 0;
  auto out = s.Run({{"x", Value(Tensor::FromVector<float>(DataType::kFloat, {2, 3}, kX))}});
  EXPECT_EQ(g_copies.load(), s.copies_per_run());
  ExpectNear(Values(out[0]), Reference());
}

TEST(FakeDeviceProvider, PlacementOnlySessionPlacesButRefusesToRun) {
  const std::string bytes = Model();
  SessionOptions o = Options({"FakeDevice", "CPU"});
  o.placement_only = true;
  g_copies = 0;
  Session s(bytes.data(), bytes.size(), o);
  EXPECT_EQ(g_copies.load(), 0);  // nothing built, nothing copied
  EXPECT_EQ(s.copies_per_run(), 4);  // but the copies a Run would make are counted
  const auto& nodes = s.impl().model().graph->nodes;
  EXPECT_EQ(s.impl().plan().PlacementOf(nodes[0].get())->provider->name(), "FakeDevice");
  try {
    s.Run({{"x", Value(Tensor::FromVector<float>(DataType::kFloat, {2, 3}, kX))}});
    ADD_FAILURE() << "a placement-only session ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("placement-only"), std::string::npos) << e.what();
  }
}

TEST(FakeDeviceProvider, OptionsForAProviderNotAskedForAreAnError) {
  const std::string bytes = Model();
  SessionOptions o = Options({"CPU"});
  o.provider_options["FakeDeviceExecutionProvider"] = {{"a", "1"}};
  try {
    Session s(bytes.data(), bytes.size(), o);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FakeDeviceExecutionProvider"), std::string::npos) << e.what();
  }
  o.execution_providers = {"FakeDevice", "CPU"};
  try {
    Session s(bytes.data(), bytes.size(), o);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FakeDevice takes no options"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onyx
