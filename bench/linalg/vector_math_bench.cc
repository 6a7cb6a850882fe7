// Vector-math microbenchmarks: elements/s (items_per_second) and GB/s (bytes_per_second: bytes
// read + written) per function and ISA variant, one thread. Arrays of 1M floats (4 MB, larger
// than L2: close to what an activation over a real tensor sees) and the BERT-base row shapes:
// attention softmax rows of 128 / 384 / 512 (12 heads x 128 queries), layer-norm rows of 768
// over 128 tokens, and the attention-head transposes.
//
//   build/release/bench/vector_math_bench --benchmark_filter='Exp/'
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The "scalar" variant is the std:: reference loop; the speedup of a variant is its items/s over
// scalar's on the same row.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "linalg/transpose.h"
#include "linalg/vector_math.h"

namespace onyx::bench {
namespace {

constexpr size_t kBig = size_t{1} << 20;

// 64-byte aligned, as the engine's tensors are (an unaligned AVX-512 access splits a cache line).
template <typename T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  bool operator==(const AlignedAllocator&) const { return true; }
};
using Floats = std::vector<float, AlignedAllocator<float>>;
using Doubles = std::vector<double, AlignedAllocator<double>>;

Floats RandomFloats(size_t count, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(count);
  for (float& f : v) f = dist(rng);
  return v;
}

// Runs body once per iteration with the ISA forced; items and bytes are per call.
void Run(benchmark::State& state, const std::string& isa, double items, double bytes,
         const std::function<void()>& body) {
  if (!linalg::ForceVectorIsa(isa)) {
    state.SkipWithError("ISA not supported");
    return;
  }
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  linalg::ForceVectorIsa("auto");
  state.SetItemsProcessed(static_cast<int64_t>(items * static_cast<double>(state.iterations())));
  state.SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<double>(state.iterations())));
}

using UnaryFn = void (*)(const float*, float*, size_t);

void RegisterUnary(const std::string& isa) {
  const struct {
    const char* name;
    UnaryFn fn;
    float lo, hi;
  } kFns[] = {{"Exp", &linalg::VecExp, -10, 10},           {"Log", &linalg::VecLog, 1e-3f, 100},
              {"Tanh", &linalg::VecTanh, -5, 5},           {"Erf", &linalg::VecErf, -3, 3},
              {"Sigmoid", &linalg::VecSigmoid, -10, 10},   {"Silu", &linalg::VecSilu, -10, 10},
              {"Softplus", &linalg::VecSoftplus, -10, 10}, {"GeluErf", &linalg::VecGeluErf, -5, 5},
              {"GeluTanh", &linalg::VecGeluTanh, -5, 5}};
  for (const auto& f : kFns) {
    auto x = std::make_shared<Floats>(RandomFloats(kBig, f.lo, f.hi, 1));
    auto y = std::make_shared<Floats>(kBig);
    const UnaryFn fn = f.fn;
    benchmark::RegisterBenchmark((std::string(f.name) + "/" + isa + "/1M").c_str(), [=](benchmark::State& state) {
      Run(state, isa, kBig, 8.0 * kBig, [&] { fn(x->data(), y->data(), kBig); });
    });
  }
}

void RegisterBinary(const std::string& isa) {
  auto a = std::make_shared<Floats>(RandomFloats(kBig, -1, 1, 2));
  auto b = std::make_shared<Floats>(RandomFloats(kBig, 0.5f, 1, 3));
  auto y = std::make_shared<Floats>(kBig);
  for (const auto& entry : {std::pair{"Add", linalg::BinaryOp::kAdd}, std::pair{"Div", linalg::BinaryOp::kDiv}}) {
    const char* name = entry.first;
    const linalg::BinaryOp op = entry.second;
    benchmark::RegisterBenchmark((std::string(name) + "/" + isa + "/1M").c_str(), [=](benchmark::State& state) {
      Run(state, isa, kBig, 12.0 * kBig, [&] { linalg::VecBinary(op, a->data(), b->data(), y->data(), kBig); });
    });
  }
  benchmark::RegisterBenchmark(("MulScalar/" + isa + "/1M").c_str(), [=](benchmark::State& state) {
    Run(state, isa, kBig, 8.0 * kBig,
        [&] { linalg::VecBinaryScalar(linalg::BinaryOp::kMul, a->data(), 0.125f, y->data(), kBig); });
  });
  // BERT's bias add: [128 tokens, 768] + [768].
  benchmark::RegisterBenchmark(("AddBiasRows/" + isa + "/128x768").c_str(), [=](benchmark::State& state) {
    Run(state, isa, 128 * 768, 8.0 * 128 * 768,
        [&] { linalg::VecBinaryRows(linalg::BinaryOp::kAdd, a->data(), b->data(), y->data(), 128, 768); });
  });
}

void RegisterReduce(const std::string& isa) {
  auto x = std::make_shared<Floats>(RandomFloats(kBig, -1, 1, 4));
  auto acc = std::make_shared<Doubles>(768);
  benchmark::RegisterBenchmark(("ReduceSum/" + isa + "/1M").c_str(), [=](benchmark::State& state) {
    Run(state, isa, kBig, 4.0 * kBig, [&] { benchmark::DoNotOptimize(linalg::ReduceSum(x->data(), kBig)); });
  });
  benchmark::RegisterBenchmark(("ReduceSumSquares/" + isa + "/1M").c_str(), [=](benchmark::State& state) {
    Run(state, isa, kBig, 4.0 * kBig, [&] { benchmark::DoNotOptimize(linalg::ReduceSumSquares(x->data(), kBig)); });
  });
  benchmark::RegisterBenchmark(("ReduceMax/" + isa + "/1M").c_str(), [=](benchmark::State& state) {
    Run(state, isa, kBig, 4.0 * kBig, [&] { benchmark::DoNotOptimize(linalg::ReduceMax(x->data(), kBig)); });
  });
  // ReduceMean over the last axis of [128, 768] (a decomposed layer norm).
  benchmark::RegisterBenchmark(("ReduceSumRows/" + isa + "/128x768").c_str(), [=](benchmark::State& state) {
    Run(state, isa, 128 * 768, 4.0 * 128 * 768, [&] {
      for (size_t r = 0; r < 128; ++r) benchmark::DoNotOptimize(linalg::ReduceSum(x->data() + r * 768, 768));
    });
  });
  benchmark::RegisterBenchmark(("AccumulateSum/" + isa + "/1365x768").c_str(), [=](benchmark::State& state) {
    Run(state, isa, 1365 * 768, 4.0 * 1365 * 768, [&] {
      for (size_t r = 0; r < 1365; ++r) linalg::AccumulateSum(x->data() + r * 768, acc->data(), 768);
    });
  });
}

void RegisterRows(const std::string& isa) {
  // Attention probabilities: 12 heads x 128 queries = 1536 rows of the key length.
  for (size_t n : {128, 384, 512}) {
    const size_t rows = 1536;
    auto x = std::make_shared<Floats>(RandomFloats(rows * n, -8, 8, 5));
    auto y = std::make_shared<Floats>(rows * n);
    const std::string shape = std::to_string(rows) + "x" + std::to_string(n);
    benchmark::RegisterBenchmark(("SoftmaxRow/" + isa + "/" + shape).c_str(), [=](benchmark::State& state) {
      Run(state, isa, static_cast<double>(rows * n), 8.0 * rows * n, [&] {
        for (size_t r = 0; r < rows; ++r) linalg::SoftmaxRow(x->data() + r * n, y->data() + r * n, n);
      });
    });
    benchmark::RegisterBenchmark(("LogSoftmaxRow/" + isa + "/" + shape).c_str(), [=](benchmark::State& state) {
      Run(state, isa, static_cast<double>(rows * n), 8.0 * rows * n, [&] {
        for (size_t r = 0; r < rows; ++r) linalg::LogSoftmaxRow(x->data() + r * n, y->data() + r * n, n);
      });
    });
  }
  // Layer norm over hidden 768 (BERT-base) and 1024 (BERT-large), 128 tokens.
  for (size_t n : {768, 1024}) {
    const size_t rows = 128;
    auto x = std::make_shared<Floats>(RandomFloats(rows * n, -3, 3, 6));
    auto w = std::make_shared<Floats>(RandomFloats(n, 0.5f, 1.5f, 7));
    auto b = std::make_shared<Floats>(RandomFloats(n, -1, 1, 8));
    auto y = std::make_shared<Floats>(rows * n);
    const std::string shape = std::to_string(rows) + "x" + std::to_string(n);
    benchmark::RegisterBenchmark(("LayerNormRow/" + isa + "/" + shape).c_str(), [=](benchmark::State& state) {
      Run(state, isa, static_cast<double>(rows * n), 8.0 * rows * n, [&] {
        for (size_t r = 0; r < rows; ++r)
          linalg::LayerNormRow(x->data() + r * n, y->data() + r * n, n, w->data(), b->data(), 1e-12f, nullptr, nullptr);
      });
    });
    benchmark::RegisterBenchmark(("RmsNormRow/" + isa + "/" + shape).c_str(), [=](benchmark::State& state) {
      Run(state, isa, static_cast<double>(rows * n), 8.0 * rows * n, [&] {
        for (size_t r = 0; r < rows; ++r)
          linalg::RmsNormRow(x->data() + r * n, y->data() + r * n, n, w->data(), 1e-6f, nullptr);
      });
    });
  }
}

void RegisterTranspose(const std::string& isa) {
  auto x = std::make_shared<Floats>(RandomFloats(kBig, -1, 1, 9));
  auto y = std::make_shared<Floats>(kBig);
  benchmark::RegisterBenchmark(("Transpose2D/" + isa + "/1024x1024").c_str(), [=](benchmark::State& state) {
    Run(state, isa, kBig, 8.0 * kBig, [&] { linalg::Transpose2D32(x->data(), 1024, y->data(), 1024, 1024, 1024); });
  });
  // BERT-base keys [1, 128, 12, 64] -> [1, 12, 64, 128] and heads [1, 128, 12, 64] -> [1, 12, 128, 64].
  const size_t n = 128 * 12 * 64;
  benchmark::RegisterBenchmark(("Transpose0231/" + isa + "/1x128x12x64").c_str(), [=](benchmark::State& state) {
    Run(state, isa, n, 8.0 * n, [&] { linalg::Transpose0231(x->data(), y->data(), 1, 128, 12, 64); });
  });
  benchmark::RegisterBenchmark(("Transpose0213/" + isa + "/1x128x12x64").c_str(), [=](benchmark::State& state) {
    Run(state, isa, n, 8.0 * n, [&] { linalg::Transpose0213(x->data(), y->data(), 1, 128, 12, 64); });
  });
}

void RegisterAll() {
  for (const std::string& isa : linalg::SupportedVectorIsas()) {
    RegisterUnary(isa);
    RegisterBinary(isa);
    RegisterReduce(isa);
    RegisterRows(isa);
    RegisterTranspose(isa);
  }
}

}  // namespace
}  // namespace onyx::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  onyx::bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
