// The CUDA provider's checks on a GPU (tests/gpu/run_gpu_checks.sh builds and runs this; CI has no
// GPU). Each kernel runs as a single-node model with CUDA first and is compared with the CPU
// provider on the same values (float32 reference: rtol 1e-3 / atol 1e-4 for float, looser for
// float16 and bfloat16 as their precision allows); the node must have been placed on CUDA. Inputs
// and CUDA outputs are also written as .npy with a manifest, so gpu_checks.py recomputes every case
// with NumPy, a reference independent of Onyx. Then the options (gpu_mem_limit's out-of-memory
// error, both arena strategies, device_id, use_tf32, user_compute_stream) and the copies per Run.
// Prints one PASS/FAIL line per check and a summary line; exits non-zero on any failure.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "base/float_types.h"
#include "model_builder.h"
#include "onyx/session.h"
#include "providers/cuda/device_arena.h"
#include "runtime/session_impl.h"
#include "tensor/npy.h"

namespace onyx {
namespace {

int g_passed = 0, g_failed = 0;
std::string g_out;       // folder for the .npy files and manifest.jsonl
std::ofstream g_manifest;

void Report(bool ok, const std::string& name, const std::string& detail) {
  (ok ? g_passed : g_failed)++;
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stdout);
}

Tensor FromFloats(const std::vector<float>& v, DataType t, const Shape& shape) {
  Tensor out(t, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t) {
      case DataType::kFloat: out.data<float>()[i] = v[i]; break;
      case DataType::kFloat16: out.data<uint16_t>()[i] = FloatToHalfBits(v[i]); break;
      case DataType::kBFloat16: out.data<uint16_t>()[i] = FloatToBFloat16Bits(v[i]); break;
      case DataType::kInt32: out.data<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
      case DataType::kInt64: out.data<int64_t>()[i] = static_cast<int64_t>(v[i]); break;
      default: ONYX_THROW(kNotImplemented, "no conversion to ", DataTypeName(t));
    }
  }
  return out;
}

std::vector<float> ToFloats(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.size()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t.dtype()) {
      case DataType::kFloat: v[i] = t.data<float>()[i]; break;
      case DataType::kFloat16: v[i] = HalfBitsToFloat(t.data<uint16_t>()[i]); break;
      case DataType::kBFloat16: v[i] = BFloat16BitsToFloat(t.data<uint16_t>()[i]); break;
      case DataType::kInt32: v[i] = static_cast<float>(t.data<int32_t>()[i]); break;
      case DataType::kInt64: v[i] = static_cast<float>(t.data<int64_t>()[i]); break;
      default: ONYX_THROW(kNotImplemented, "no conversion from ", DataTypeName(t.dtype()));
    }
  }
  return v;
}

std::vector<float> Random(int64_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Tolerance {
  double rtol, atol;
};
Tolerance TolFor(DataType t) {
  if (t == DataType::kFloat16) return {1e-2, 1e-3};
  if (t == DataType::kBFloat16) return {2e-2, 1e-2};
  return {1e-3, 1e-4};
}

struct Input {
  std::string name;
  Shape shape;
  std::vector<float> values;  // rounded to the case's dtype before use
  DataType dtype;
};

// A single-node model over `inputs`, output "y" of dtype out_type.
using Build = std::function<void(test::ModelBuilder&, DataType)>;

SessionOptions Options(std::vector<std::string> providers, std::map<std::string, std::string> cuda = {}) {
  SessionOptions o;
  o.graph_optimization_level = GraphOptimizationLevel::kDisabled;
  o.execution_providers = std::move(providers);
  if (!cuda.empty()) o.provider_options["CUDA"] = std::move(cuda);
  return o;
}

std::string ModelBytes(int opset, const std::vector<Input>& inputs, DataType dtype, DataType out_type, const Build& build) {
  test::ModelBuilder b(opset);
  for (const auto& in : inputs) b.Input(in.name, in.dtype == DataType::kUndefined ? dtype : in.dtype, in.shape);
  b.model().graph->outputs.push_back({"y", TypeInfo::Tensor(out_type, std::nullopt), ""});
  build(b, dtype);
  return b.Bytes();
}

// Runs the case with CUDA first and on the CPU in float32 (ref_dtype) and compares.
void KernelCase(const std::string& name, const std::string& op, int opset, std::vector<Input> inputs, DataType dtype,
                const Build& build, std::map<std::string, std::string> cuda_options = {},
                DataType ref_dtype = DataType::kFloat, DataType out_type = DataType::kUndefined,
                std::string attrs_json = "{}", Tolerance tol = {-1, -1}) {
  if (out_type == DataType::kUndefined) out_type = dtype;
  if (tol.rtol < 0) tol = TolFor(dtype);
  try {
    NamedValues cuda_feeds, ref_feeds;
    for (auto& in : inputs) {
      const DataType t = in.dtype == DataType::kUndefined ? dtype : in.dtype;
      const Tensor typed = FromFloats(in.values, t, in.shape);
      in.values = ToFloats(typed);  // what the kernel really sees
      cuda_feeds.emplace_back(in.name, Value(typed));
      const DataType rt = in.dtype == DataType::kUndefined ? ref_dtype : in.dtype;
      ref_feeds.emplace_back(in.name, Value(FromFloats(in.values, rt, in.shape)));
    }
    const std::string bytes = ModelBytes(opset, inputs, dtype, out_type, build);
    Session cuda(bytes.data(), bytes.size(), Options({"CUDA", "CPU"}, cuda_options));
    for (const auto& node : cuda.impl().model().graph->nodes) {
      const Placement* p = cuda.impl().plan().PlacementOf(node.get());
      if (p->provider->name() != "CUDA") return Report(false, name, "placed on CPU: " + p->Explain());
    }
    std::vector<Input> ref_inputs = inputs;
    for (auto& in : ref_inputs)
      if (in.dtype == DataType::kUndefined) in.dtype = ref_dtype;
    const DataType ref_out = out_type == dtype ? ref_dtype : out_type;
    const std::string ref_bytes = ModelBytes(opset, ref_inputs, ref_dtype, ref_out, build);
    Session cpu(ref_bytes.data(), ref_bytes.size(), Options({"CPU"}));
    const Tensor got = cuda.Run(cuda_feeds)[0].tensor();
    const Tensor want = cpu.Run(ref_feeds)[0].tensor();
    if (got.shape() != want.shape())
      return Report(false, name, "shape " + ShapeToString(got.shape()) + " vs CPU " + ShapeToString(want.shape()));
    const auto g = ToFloats(got), w = ToFloats(want);
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      const double excess = std::fabs(double(g[i]) - w[i]) - (tol.atol + tol.rtol * std::fabs(double(w[i])));
      if (!(excess <= worst) || std::isnan(g[i]) != std::isnan(w[i])) {
        worst = std::isnan(excess) ? 1e30 : excess;
        worst_i = i;
      }
    }
    // For gpu_checks.py: the inputs as the kernel saw them and CUDA's output, in float32.
    const std::string dir = g_out + "/" + name;
    std::filesystem::create_directories(dir);
    std::string in_names;
    for (const auto& in : inputs) {
      WriteNpy(dir + "/" + in.name + ".npy", FromFloats(in.values, DataType::kFloat, in.shape));
      in_names += std::string(in_names.empty() ? "" : ", ") + "\"" + in.name + "\"";
    }
    WriteNpy(dir + "/y.npy", FromFloats(g, DataType::kFloat, got.shape()));
    g_manifest << "{\"name\": \"" << name << "\", \"op\": \"" << op << "\", \"opset\": " << opset << ", \"dtype\": \""
               << DataTypeName(dtype) << "\", \"out_dtype\": \"" << DataTypeName(out_type) << "\", \"inputs\": ["
               << in_names << "], \"attrs\": " << attrs_json << ", \"rtol\": " << tol.rtol << ", \"atol\": " << tol.atol
               << "}\n";
    g_manifest.flush();
    if (worst > 0)
      return Report(false, name, StrCat("element ", worst_i, ": CUDA ", g[worst_i], " vs CPU ", w[worst_i]));
    Report(true, name, StrCat(g.size(), " elements within rtol ", tol.rtol, " atol ", tol.atol));
  } catch (const std::exception& e) {
    Report(false, name, e.what());
  }
}

Input In(const std::string& name, Shape shape, uint32_t seed, DataType t = DataType::kUndefined, float lo = -2,
         float hi = 2) {
  return Input{name, shape, Random(ShapeSize(shape), seed, lo, hi), t};
}

Build Node(const std::string& op, std::vector<std::string> ins, std::vector<ir::Attribute> attrs = {},
           const std::string& domain = "") {
  return [=](test::ModelBuilder& b, DataType) {
    auto& n = b.Node(op, ins, {"y"}, domain);
    n.attributes = attrs;
  };
}

const DataType kTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};

void KernelChecks() {
  uint32_t seed = 1;
  for (DataType t : kTypes) {
    const std::string ts(DataTypeName(t));
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      const float lo = std::string(op) == "Div" ? 0.5f : -2.0f;  // divisors away from 0
      KernelCase(StrCat(op, "_", ts, "_same"), op, 17, {In("a", {4, 33}, seed++), In("b", {4, 33}, seed++, {}, lo)}, t,
                 Node(op, {"a", "b"}));
      KernelCase(StrCat(op, "_", ts, "_broadcast"), op, 17,
                 {In("a", {2, 3, 1, 5}, seed++), In("b", {4, 1}, seed++, {}, lo)}, t, Node(op, {"a", "b"}));
      KernelCase(StrCat(op, "_", ts, "_scalar"), op, 17, {In("a", {3, 7}, seed++), In("b", {}, seed++, {}, lo)}, t,
                 Node(op, {"a", "b"}));
    }
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf"})
      KernelCase(StrCat(op, "_", ts), op, 17, {In("x", {5, 67}, seed++, {}, -4, 4)}, t, Node(op, {"x"}));
    KernelCase("Gelu_" + ts, "Gelu", 20, {In("x", {5, 67}, seed++, {}, -4, 4)}, t, Node("Gelu", {"x"}));
    KernelCase("GeluTanh_" + ts, "Gelu", 20, {In("x", {5, 67}, seed++, {}, -4, 4)}, t,
               Node("Gelu", {"x"}, {test::StringAttr("approximate", "tanh")}), {}, DataType::kFloat,
               DataType::kUndefined, "{\"approximate\": \"tanh\"}");
    KernelCase("Softmax_last_" + ts, "Softmax", 13, {In("x", {3, 4, 50}, seed++, {}, -5, 5)}, t, Node("Softmax", {"x"}),
               {}, DataType::kFloat, DataType::kUndefined, "{\"axis\": -1}");
    KernelCase("Softmax_axis1_" + ts, "Softmax", 13, {In("x", {3, 4, 5}, seed++, {}, -5, 5)}, t,
               Node("Softmax", {"x"}, {test::IntAttr("axis", 1)}), {}, DataType::kFloat, DataType::kUndefined,
               "{\"axis\": 1}");
    KernelCase("Softmax_opset11_" + ts, "Softmax", 11, {In("x", {3, 4, 5}, seed++, {}, -5, 5)}, t,
               Node("Softmax", {"x"}, {test::IntAttr("axis", 1)}), {}, DataType::kFloat, DataType::kUndefined,
               "{\"axis\": 1, \"coerce_2d\": true}");
    KernelCase("LogSoftmax_" + ts, "LogSoftmax", 13, {In("x", {6, 40}, seed++, {}, -5, 5)}, t,
               Node("LogSoftmax", {"x"}), {}, DataType::kFloat, DataType::kUndefined, "{\"axis\": -1}");
    KernelCase("LayerNorm_" + ts, "LayerNormalization", 17,
               {In("x", {4, 3, 64}, seed++), In("s", {64}, seed++), In("b", {64}, seed++)}, t,
               Node("LayerNormalization", {"x", "s", "b"}), {}, DataType::kFloat, DataType::kUndefined,
               "{\"axis\": -1, \"epsilon\": 1e-5}");
    KernelCase("LayerNorm_nobias_axis1_" + ts, "LayerNormalization", 17,
               {In("x", {4, 3, 16}, seed++), In("s", {3, 16}, seed++)}, t,
               Node("LayerNormalization", {"x", "s"}, {test::IntAttr("axis", 1)}), {}, DataType::kFloat,
               DataType::kUndefined, "{\"axis\": 1, \"epsilon\": 1e-5}");
    KernelCase("Transpose_" + ts, "Transpose", 17, {In("x", {2, 3, 4, 5}, seed++)}, t,
               Node("Transpose", {"x"}, {test::IntsAttr("perm", {2, 0, 3, 1})}), {}, DataType::kFloat,
               DataType::kUndefined, "{\"perm\": [2, 0, 3, 1]}", {0, 1e-30});
    KernelCase("Transpose_default_" + ts, "Transpose", 17, {In("x", {3, 7}, seed++)}, t, Node("Transpose", {"x"}), {},
               DataType::kFloat, DataType::kUndefined, "{}", {0, 1e-30});
    KernelCase("Reshape_family_" + ts, "Reshape", 17, {In("x", {2, 3, 4}, seed++)}, t,
               [](test::ModelBuilder& b, DataType) {
                 b.Initializer("shape", Tensor::FromVector<int64_t>(DataType::kInt64, {2}, {6, 4}));
                 b.Initializer("axes0", Tensor::FromVector<int64_t>(DataType::kInt64, {1}, {0}));
                 b.Node("Reshape", {"x", "shape"}, {"r"});
                 b.Node("Unsqueeze", {"r", "axes0"}, {"u"});
                 b.Node("Squeeze", {"u", "axes0"}, {"q"});
                 b.Node("Flatten", {"q"}, {"y"}).attributes = {test::IntAttr("axis", 1)};
               },
               {}, DataType::kFloat, DataType::kUndefined, "{\"shape\": [6, 4]}", {0, 1e-30});
  }
  // MatMul / Gemm: float without TF32 at 1e-3, float with TF32 (the default) looser, float16.
  struct MatMulShape {
    const char* name;
    Shape a, b;
  };
  for (const auto& s : {MatMulShape{"2d", {7, 33}, {33, 9}}, MatMulShape{"batchA", {2, 5, 16}, {16, 8}},
                        MatMulShape{"batched", {3, 4, 8}, {3, 8, 6}}, MatMulShape{"broadcast", {2, 1, 4, 8}, {3, 8, 5}},
                        MatMulShape{"vector", {8}, {8, 5}}, MatMulShape{"bcast_a", {4, 8}, {2, 8, 3}}}) {
    KernelCase(StrCat("MatMul_", s.name, "_float_notf32"), "MatMul", 17, {In("a", s.a, seed++), In("b", s.b, seed++)},
               DataType::kFloat, Node("MatMul", {"a", "b"}), {{"use_tf32", "0"}});
    KernelCase(StrCat("MatMul_", s.name, "_float_tf32"), "MatMul", 17, {In("a", s.a, seed++), In("b", s.b, seed++)},
               DataType::kFloat, Node("MatMul", {"a", "b"}), {}, DataType::kFloat, DataType::kUndefined, "{}",
               {5e-3, 5e-3});
    KernelCase(StrCat("MatMul_", s.name, "_float16"), "MatMul", 17, {In("a", s.a, seed++), In("b", s.b, seed++)},
               DataType::kFloat16, Node("MatMul", {"a", "b"}), {}, DataType::kFloat, DataType::kUndefined, "{}",
               {1e-2, 1e-2});
  }
  for (DataType t : {DataType::kFloat, DataType::kFloat16}) {
    const std::map<std::string, std::string> options =
        t == DataType::kFloat ? std::map<std::string, std::string>{{"use_tf32", "0"}} : std::map<std::string, std::string>{};
    const Tolerance tol = t == DataType::kFloat ? Tolerance{1e-3, 1e-4} : Tolerance{1e-2, 1e-2};
    const std::string ts(DataTypeName(t));
    KernelCase("Gemm_plain_" + ts, "Gemm", 13, {In("a", {6, 10}, seed++), In("b", {10, 4}, seed++)}, t,
               Node("Gemm", {"a", "b"}), options, DataType::kFloat, DataType::kUndefined, "{}", tol);
    KernelCase("Gemm_trans_bias_" + ts, "Gemm", 13,
               {In("a", {10, 6}, seed++), In("b", {4, 10}, seed++), In("c", {4}, seed++)}, t,
               Node("Gemm", {"a", "b", "c"},
                    {test::IntAttr("transA", 1), test::IntAttr("transB", 1), test::FloatAttr("alpha", 0.5f),
                     test::FloatAttr("beta", 2.0f)}),
               options, DataType::kFloat, DataType::kUndefined,
               "{\"transA\": 1, \"transB\": 1, \"alpha\": 0.5, \"beta\": 2.0}", tol);
    KernelCase("Gemm_column_bias_" + ts, "Gemm", 13,
               {In("a", {6, 10}, seed++), In("b", {10, 4}, seed++), In("c", {6, 1}, seed++)}, t,
               Node("Gemm", {"a", "b", "c"}), options, DataType::kFloat, DataType::kUndefined, "{}", tol);
    KernelCase("Gemm_full_bias_" + ts, "Gemm", 13,
               {In("a", {6, 10}, seed++), In("b", {10, 4}, seed++), In("c", {6, 4}, seed++)}, t,
               Node("Gemm", {"a", "b", "c"}), options, DataType::kFloat, DataType::kUndefined, "{}", tol);
  }
  // Cast: compared with the CPU's Cast between the same types.
  struct CastCase {
    DataType from, to;
  };
  for (const auto& c : {CastCase{DataType::kFloat, DataType::kFloat16}, CastCase{DataType::kFloat16, DataType::kFloat},
                        CastCase{DataType::kFloat, DataType::kBFloat16}, CastCase{DataType::kBFloat16, DataType::kFloat},
                        CastCase{DataType::kFloat, DataType::kInt32}, CastCase{DataType::kInt64, DataType::kFloat},
                        CastCase{DataType::kInt32, DataType::kInt64}, CastCase{DataType::kFloat16, DataType::kInt64}}) {
    KernelCase(StrCat("Cast_", DataTypeName(c.from), "_to_", DataTypeName(c.to)), "Cast", 17,
               {In("x", {3, 41}, seed++, c.from, -100, 100)}, c.from,
               Node("Cast", {"x"}, {test::IntAttr("to", static_cast<int64_t>(c.to))}), {}, c.from, c.to,
               StrCat("{\"to\": \"", DataTypeName(c.to), "\"}"), {1e-30, 1e-30});
  }
}

// gpu_mem_limit, the arena strategies, device_id, user_compute_stream and the copies per Run.
void OptionChecks() {
  // A 64 MiB output under a 16 MiB limit: a clear out-of-memory error naming the limit.
  {
    test::ModelBuilder b(17);
    b.Input("x", DataType::kFloat, {4096, 4096}).Output("y", DataType::kFloat, {4096, 4096});
    b.Node("Relu", {"x"}, {"y"});
    const std::string bytes = b.Bytes();
    try {
      Session s(bytes.data(), bytes.size(), Options({"CUDA", "CPU"}, {{"gpu_mem_limit", std::to_string(16 << 20)}}));
      s.Run({{"x", Value(Tensor::Zeros(DataType::kFloat, {4096, 4096}))}});
      Report(false, "gpu_mem_limit_oom", "a 64 MiB tensor fit a 16 MiB limit");
    } catch (const Error& e) {
      const std::string what = e.what();
      Report(e.code() == ErrorCode::kOutOfMemory && what.find("gpu_mem_limit is 16777216") != std::string::npos,
             "gpu_mem_limit_oom", what);
    }
  }
  // Arena strategies: region sizes as each strategy says.
  for (const char* strategy : {"kNextPowerOfTwo", "kSameAsRequested"}) {
    test::ModelBuilder b(17);
    b.Input("x", DataType::kFloat, {1000, 300}).Output("y", DataType::kFloat, {1000, 300});
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Sigmoid", {"r"}, {"y"});
    const std::string bytes = b.Bytes();
    try {
      Session s(bytes.data(), bytes.size(), Options({"CUDA", "CPU"}, {{"arena_extend_strategy", strategy}}));
      s.Run({{"x", Value(Tensor::Zeros(DataType::kFloat, {1000, 300}))}});
      auto* arena = dynamic_cast<DeviceArena*>(s.impl().providers()[0]->allocator());
      const auto sizes = arena->region_sizes();
      bool ok = !sizes.empty();
      for (size_t i = 0; i < sizes.size(); ++i) {
        if (std::string(strategy) == "kSameAsRequested") ok = ok && sizes[i] % 256 == 0 && sizes[i] < (2u << 20);
        else ok = ok && (sizes[i] & (sizes[i] - 1)) == 0 && sizes[i] >= DeviceArena::kFirstRegion;
      }
      std::string list;
      for (size_t sz : sizes) list += std::to_string(sz) + " ";
      Report(ok, std::string("arena_") + strategy, "regions " + list);
    } catch (const std::exception& e) {
      Report(false, std::string("arena_") + strategy, e.what());
    }
  }
  // device_id past the devices: an error naming it.
  {
    test::ModelBuilder b(17);
    b.Input("x", DataType::kFloat, {2}).Output("y", DataType::kFloat, {2});
    b.Node("Relu", {"x"}, {"y"});
    const std::string bytes = b.Bytes();
    try {
      Session s(bytes.data(), bytes.size(), Options({"CUDA", "CPU"}, {{"device_id", "999"}}));
      Report(false, "device_id_out_of_range", "accepted");
    } catch (const Error& e) {
      Report(std::string(e.what()).find("device_id=999") != std::string::npos, "device_id_out_of_range", e.what());
    }
  }
  // user_compute_stream: the session runs on the caller's stream.
  {
    cudaStream_t stream = nullptr;
    cudaStreamCreate(&stream);
    KernelCase("user_compute_stream_Add", "Add", 17, {In("a", {8, 8}, 900), In("b", {8, 8}, 901)}, DataType::kFloat,
               Node("Add", {"a", "b"}), {{"user_compute_stream", std::to_string(reinterpret_cast<uintptr_t>(stream))}});
    cudaStreamDestroy(stream);
  }
  // Copies: Relu (CUDA) -> Neg (CPU: no CUDA kernel) -> Relu (CUDA): x up, r down, n up, y down.
  {
    test::ModelBuilder b(17);
    b.Input("x", DataType::kFloat, {3, 5}).Output("y", DataType::kFloat, {3, 5});
    b.Node("Relu", {"x"}, {"r"});
    b.Node("Neg", {"r"}, {"n"});
    b.Node("Relu", {"n"}, {"y"});
    const std::string bytes = b.Bytes();
    try {
      Session s(bytes.data(), bytes.size(), Options({"CUDA", "CPU"}));
      const auto x = Random(15, 77);
      const auto y = ToFloats(s.Run({{"x", Value(FromFloats(x, DataType::kFloat, {3, 5}))}})[0].tensor());
      bool ok = s.copies_per_run() == 4;
      for (size_t i = 0; i < x.size(); ++i) ok = ok && y[i] == 0.0f;  // relu(-relu(x)) is 0
      Report(ok, "copies_per_run", StrCat(s.copies_per_run(), " copies per run (want 4)"));
    } catch (const std::exception& e) {
      Report(false, "copies_per_run", e.what());
    }
  }
}

}  // namespace
}  // namespace onyx

int main(int argc, char** argv) {
  onyx::g_out = argc > 1 ? argv[1] : "gpu-check-cases";
  std::filesystem::create_directories(onyx::g_out);
  onyx::g_manifest.open(onyx::g_out + "/manifest.jsonl");
  const std::string why = onyx::ProviderUnavailableReason("CUDA");
  if (!why.empty()) {
    std::printf("FAIL cuda_device: %s\nSUMMARY gpu_checks: 0 passed, 1 failed (no CUDA device)\n", why.c_str());
    return 1;
  }
  onyx::KernelChecks();
  onyx::OptionChecks();
  std::printf("SUMMARY gpu_checks: %d passed, %d failed\n", onyx::g_passed, onyx::g_failed);
  return onyx::g_failed == 0 ? 0 : 1;
}
