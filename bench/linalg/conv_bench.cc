// Convolution microbenchmarks: GFLOP/s (counter "GFLOPS", 2 * multiply-adds per second) of each
// engine and ISA variant on one thread, over layer shapes of the benchmark models: ResNet-50's
// 3x3 and 1x1 stages, MobileNetV2's depthwise layers (stride 1 and 2) and a first-layer 7x7
// stride-2 convolution, EfficientNet-B0 layers with their fused SiLU and YOLO's early
// few-channel layers on big maps. Each engine runs only the shapes it supports; direct_nchwc,
// depthwise_nchwc and winograd_nchwc run on NCHWc input and output, as inside models after the
// layout pass; the *_silu variants apply SiLU instead of Relu, and the *_t2 ones run on a pool
// of 2 threads (wall time).
//
//   build/release/bench/conv_bench --benchmark_filter='winograd/' --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// The time includes what each engine does per call (input padding / blocking copies, Winograd's
// input and output transforms); weight packing happens once, outside the timed loop.
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "linalg/conv.h"
#include "platform/thread_pool.h"

namespace onyx::bench {
namespace {

struct Layer {
  const char* name;
  int64_t channels, size, out_channels, kernel, stride, group;
};

// {name, C, H = W, M, k, stride, group}
constexpr Layer kLayers[] = {
    {"resnet_3x3_64_56", 64, 56, 64, 3, 1, 1},     {"resnet_3x3_256_14", 256, 14, 256, 3, 1, 1},
    {"resnet_1x1_256_56", 256, 56, 64, 1, 1, 1},   {"resnet_1x1_1024_14", 1024, 14, 256, 1, 1, 1},
    {"stem_7x7_s2_3_224", 3, 224, 64, 7, 2, 1},    {"dw_3x3_144_56", 144, 56, 144, 3, 1, 144},
    {"dw_3x3_s2_144_56", 144, 56, 144, 3, 2, 144}, {"dw_5x5_240_28", 240, 28, 240, 5, 1, 240},
    {"resnet_3x3_128_28", 128, 28, 128, 3, 1, 1},  {"resnet_3x3_512_7", 512, 7, 512, 3, 1, 1},
    {"resnet_3x3_s2_128_56", 128, 56, 128, 3, 2, 1}, {"resnet_1x1_512_7", 512, 7, 2048, 1, 1, 1},
    {"resnet_1x1_64_56", 64, 56, 256, 1, 1, 1},
    {"effnet_1x1_16_112", 16, 112, 96, 1, 1, 1},     {"effnet_dw_5x5_672_14", 672, 14, 672, 5, 1, 672},
    {"mbv2_1x1_960_160_7", 960, 7, 160, 1, 1, 1},   {"mbv2_1x1_960_320_7", 960, 7, 320, 1, 1, 1},
    {"mbv2_1x1_96_576_14", 96, 14, 576, 1, 1, 1},   {"mbv2_dw_3x3_576_14", 576, 14, 576, 3, 1, 576},
    // YOLO's early stages at 640x640: few channel blocks on big maps (per-pixel overhead shows).
    {"yolo_1x1_32_32_160", 32, 160, 32, 1, 1, 1},   {"yolo_1x1_16_16_320", 16, 320, 16, 1, 1, 1},
    {"yolo_3x3_s2_32_320", 32, 320, 64, 3, 2, 1},
    // YOLO's stride-2 downsamplers on mid-size maps and its 6x6 stride-2 stem.
    {"yolo_3x3_s2_64_160", 64, 160, 128, 3, 2, 1},  {"yolo_3x3_s2_128_80", 128, 80, 256, 3, 2, 1},
    {"yolo_3x3_s2_256_40", 256, 40, 512, 3, 2, 1},  {"yolo_6x6_s2_3_640", 3, 640, 32, 6, 2, 1},
    // MobileNetV2's first projection: one output block, so one FMA per broadcast.
    {"mbv2_1x1_32_16_112", 32, 112, 16, 1, 1, 1},
    {"effnet_dw_3x3_32_112", 32, 112, 32, 3, 1, 32},  {"effnet_dw_3x3_s2_96_112", 96, 112, 96, 3, 2, 96},
};

linalg::Conv2dShape ShapeOf(const Layer& l) {
  linalg::Conv2dShape s;
  s.in_channels = l.channels;
  s.in_h = s.in_w = l.size;
  s.out_channels = l.out_channels;
  s.group = l.group;
  s.kernel_h = s.kernel_w = l.kernel;
  s.stride_h = s.stride_w = l.stride;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = l.kernel / 2;
  s.ComputeOutputSize();
  return s;
}

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

// Makes the engine with the ISA forced, then times Run on it (NCHWc in and out when `blocked`,
// as the layout pass runs the direct engine inside models).
template <typename Engine, bool kBlocked = false, bool kSilu = false, int kThreads = 1>
void RunEngine(benchmark::State& state, const std::string& isa, const Layer& layer) {
  if (!linalg::ForceConvIsa(isa)) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  const linalg::Conv2dShape s = ShapeOf(layer);
  const auto w = Random(static_cast<size_t>(s.out_channels * (s.in_channels / s.group) * s.kernel_h * s.kernel_w), 1);
  const int64_t block = kBlocked ? linalg::ConvBlockSize() : 1;
  const auto round = [block](int64_t c) { return (c + block - 1) / block * block; };
  const auto x = Random(static_cast<size_t>(round(s.in_channels) * s.in_h * s.in_w), 2);
  const auto bias = Random(static_cast<size_t>(s.out_channels), 3);
  std::vector<float> y(static_cast<size_t>(round(s.out_channels) * s.out_h * s.out_w));
  const Engine engine(s, w.data());
  linalg::ForceConvIsa("auto");
  linalg::ConvRunArgs args;
  if (kBlocked) args.x_layout = args.y_layout = linalg::ConvLayout::kNchwc;
  args.bias = bias.data();
  args.activation.kind = kSilu ? linalg::ConvActivation::kSilu : linalg::ConvActivation::kRelu;
  std::unique_ptr<ThreadPool> pool = kThreads > 1 ? std::make_unique<ThreadPool>(kThreads) : nullptr;
  for (auto _ : state) {
    engine.Run(s, x.data(), y.data(), args, pool.get());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(s.out_channels * s.out_h * s.out_w) *
                       static_cast<double>((s.in_channels / s.group) * s.kernel_h * s.kernel_w);
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// The fused activation alone: an in-place epilogue over 4K floats (in L1), as the tiles apply it.
void RunEpilogue(benchmark::State& state, const std::string& isa, linalg::ConvActivation::Kind kind) {
  if (!linalg::ForceConvIsa(isa)) {
    state.SkipWithError("ISA not supported on this CPU");
    return;
  }
  constexpr int64_t kFloats = 4096;
  std::vector<float> y = Random(kFloats, 4);
  for (float& v : y) v *= 8.0f;
  linalg::ConvActivation act;
  act.kind = kind;
  for (auto _ : state) {
    linalg::ApplyConvEpilogue(y.data(), 1, 1, kFloats, nullptr, nullptr, act, nullptr);
    benchmark::ClobberMemory();
  }
  linalg::ForceConvIsa("auto");
  state.SetItemsProcessed(state.iterations() * kFloats);
}

bool Fits(const char* engine, const Layer& l) {
  const linalg::Conv2dShape s = ShapeOf(l);
  const std::string e = engine;
  if (e.ends_with("_silu")) {
    if (!std::string(l.name).starts_with("effnet")) return false;
    return s.IsDepthwise() == e.starts_with("depthwise");
  }
  if (e.starts_with("depthwise")) return s.IsDepthwise();
  if (e.starts_with("winograd")) return linalg::WinogradConv::Applicable(s);
  return !s.IsDepthwise();  // direct, direct_nchwc and gemm run the dense layers
}

void RegisterAll() {
  for (const std::string isa : {"avx512", "avx2", "scalar"}) {
    for (const auto& [name, kind] : {std::pair{"silu", linalg::ConvActivation::kSilu},
                                     std::pair{"sigmoid", linalg::ConvActivation::kSigmoid}})
      benchmark::RegisterBenchmark(("epilogue/" + isa + "/" + name + "_4k").c_str(),
                                   [isa, kind](benchmark::State& st) { RunEpilogue(st, isa, kind); });
    for (const Layer& layer : kLayers) {
      const auto add = [&](const char* engine, void (*fn)(benchmark::State&, const std::string&, const Layer&)) {
        if (!Fits(engine, layer)) return;
        auto* b = benchmark::RegisterBenchmark((std::string(engine) + "/" + isa + "/" + layer.name).c_str(),
                                               [fn, isa, layer](benchmark::State& st) { fn(st, isa, layer); })
                      ->Unit(benchmark::kMicrosecond);
        if (std::string(engine).ends_with("_t2")) b->UseRealTime();
      };
      add("direct", &RunEngine<linalg::DirectConv>);
      add("direct_nchwc", &RunEngine<linalg::DirectConv, true>);
      add("gemm", &RunEngine<linalg::GemmConv>);
      add("direct_nchwc_t2", &RunEngine<linalg::DirectConv, true, false, 2>);
      add("winograd", &RunEngine<linalg::WinogradConv>);
      add("winograd_nchwc", &RunEngine<linalg::WinogradConv, true>);
      add("winograd_nchwc_t2", &RunEngine<linalg::WinogradConv, true, false, 2>);
      add("depthwise", &RunEngine<linalg::DepthwiseConv>);
      add("direct_nchwc_silu", &RunEngine<linalg::DirectConv, true, true>);
      add("depthwise_nchwc_silu", &RunEngine<linalg::DepthwiseConv, true, true>);
      add("depthwise_nchwc_t2", &RunEngine<linalg::DepthwiseConv, true, false, 2>);
    }
  }
}

}  // namespace
}  // namespace onyx::bench

int main(int argc, char** argv) {
  onyx::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
