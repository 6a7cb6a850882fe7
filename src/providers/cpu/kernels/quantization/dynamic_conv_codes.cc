// DynamicQuantizeConv's Y_codes, and its pointwise SiLU outputs, computed in cache-sized pieces
// (dynamic_conv_codes.h).
#include "providers/cpu/kernels/quantization/dynamic_conv_codes.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "base/int_math.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_quantize.h"
#include "linalg/q8_to_float.h"
#include "linalg/vector_math.h"
#include "platform/thread_pool.h"
#include "providers/cpu/kernels/quantization/quant_conv_compute.h"

namespace onyx {
namespace quant_conv {
namespace {


// Floats of one piece: 128 KB, in L2 with the piece's input.
constexpr int64_t kPieceFloats = 32768;
// PointwisePostInPieces: at most this many output channels (pieces of 128+ pixels) and weights.
constexpr int64_t kMaxPieceRows = 128, kMaxPieceWeights = int64_t{32} << 10;
// Outputs of fewer floats (1 MB) are computed whole.
constexpr int64_t kMinPiecedFloats = int64_t{1} << 18;

void AddRange(linalg::Q8MinMaxFn min_max, const float* v, int64_t n, float range[2]) {
  float lo = 0.0f, hi = 0.0f;
  min_max(v, n, &lo, &hi);
  range[0] = std::min(range[0], lo);
  range[1] = std::max(range[1], hi);
}

bool IsPointwise(const ConvGeometry& g) {
  bool pointwise = g.kernel_size == 1 && g.out_size == g.in_size;
  for (size_t d = 0; d < g.in.size(); ++d) pointwise = pointwise && g.stride[d] == 1 && g.pad_begin[d] == 0;
  return pointwise;
}

// One piece's float values into `piece` (row-major, `rows` rows of `cols`), and the piece's
// place in Y: the first output plane (n * M + channel) and column.
struct Piece {
  int64_t plane = 0, col = 0, rows = 0, cols = 0;
};

// The pointwise conv: pieces of `cols` pixels by all M channels, on the weight-stationary GEMM
// with its float epilogue (as ConvNchw runs it over the whole image).
class PointwisePieces {
 public:
  PointwisePieces(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                  const DynamicFloatStage& stage)
      : g_(g), x_(x), x_zp_(x_zp), w_(w.nchw[0]), stage_(stage) {
    const int64_t m = g.out_channels;
    cols_ = std::min(g.out_size, std::max<int64_t>(32, kPieceFloats / m / 32 * 32));
    per_image_ = CeilDiv(g.out_size, cols_);
  }
  int64_t count() const { return g_.batch * per_image_; }
  int64_t floats() const { return g_.out_channels * cols_; }
  double cost() const { return 2.0 * static_cast<double>(g_.out_channels * g_.channels * cols_); }
  Piece Compute(int64_t t, float* out, float* range) const {
    const int64_t n = t / per_image_, j0 = (t % per_image_) * cols_;
    Piece p{n * g_.out_channels, j0, g_.out_channels, std::min(cols_, g_.out_size - j0)};
    linalg::Q8Output o = StageOutput(stage_, linalg::Q8Output::kFloat, out, p.cols);
    o.range = stage_.silu ? nullptr : range;  // a SiLU's range is taken after it
    linalg::Q8GemmW(w_, p.cols, x_ + n * g_.channels * g_.in_size + j0, false, g_.in_size, x_zp_, o, nullptr);
    if (stage_.silu) {
      SiluInPlace(out, p.rows * p.cols);
      if (range != nullptr) AddRange(min_max_, out, p.rows * p.cols, range);
    }
    return p;
  }

 private:
  const ConvGeometry& g_;
  const uint8_t* x_;
  uint8_t x_zp_;
  const linalg::PackedQ8W& w_;
  DynamicFloatStage stage_;
  linalg::Q8MinMaxFn min_max_ = linalg::Q8MinMaxKernel();
  int64_t cols_ = 0, per_image_ = 0;
};

// The first pass: the range only.
template <typename Pieces>
void RangeInPieces(const Pieces& pieces, float range[2], ThreadPool* pool) {
  const auto floats = static_cast<size_t>(pieces.floats());
  SharedRange shared(range);
  ThreadPool::For(pool, pieces.count(), pieces.cost(), [&](int64_t t0, int64_t t1) {
    thread_local std::vector<float> buffer;
    if (buffer.size() < floats) buffer.resize(floats);
    float r[2] = {0.0f, 0.0f};
    for (int64_t t = t0; t < t1; ++t) pieces.Compute(t, buffer.data(), r);
    shared.Merge(r);
  });
}

// The second, where the float stage has a SiLU: the same values again, quantized while in cache.
template <typename Pieces>
void QuantizedPieces(const ConvGeometry& g, const Pieces& pieces, const float range[2], uint8_t* codes,
                     ThreadPool* pool) {
  const auto floats = static_cast<size_t>(pieces.floats());
  const DynamicQuantParams q = DynamicQuantParamsOf(range[0], range[1]);
  const linalg::Q8QuantizeU8Fn quantize = linalg::Q8QuantizeU8Kernel();
  ThreadPool::For(pool, pieces.count(), pieces.cost() + 2.0 * static_cast<double>(floats),
                  [&](int64_t t0, int64_t t1) {
                    thread_local std::vector<float> buffer;
                    if (buffer.size() < floats) buffer.resize(floats);
                    for (int64_t t = t0; t < t1; ++t) {
                      const Piece p = pieces.Compute(t, buffer.data(), nullptr);
                      for (int64_t r = 0; r < p.rows; ++r)
                        quantize(buffer.data() + r * p.cols, p.cols, q.scale, q.zero_point,
                                 codes + (p.plane + r) * g.out_size + p.col);
                    }
                  });
}

// ConvToCodesOnce's parts per thread: a task that starts late leaves its share to the others.
// (Eight measured slower on an isolated MobileNetV2 block at 2 threads.)
constexpr int64_t kPartsPerThread = 2;
// Pauses a task spins for the others' parts before it yields its core (each a few dozen ns):
// yielding after 64, as the pool's own waits do, measured slower on the busy machine.
constexpr int kSpinsBeforeYield = 4000;

inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Parts [0, parts) of Y in one parallel loop of two phases. Each task claims parts while any are
// left and runs compute(part, r) on them, widening its r from {0, 0}; then it merges r into
// range and, once every part is computed (range final), runs codes(part, q) on its own parts
// first (in its cache), then on any part no task has coded yet. A task waits only when every
// part is claimed, so by tasks that are running: no deadlock whatever the pool's threads do.
template <typename Compute, typename Codes>
void ComputeThenCodes(ThreadPool* pool, int64_t parts, double cost_per_part, float range[2], const Compute& compute,
                      const Codes& codes) {
  range[0] = range[1] = 0.0f;
  if (parts <= 0) return;
  std::atomic<int64_t> next{0}, computed{0};
  std::atomic<bool> failed{false};
  std::vector<std::atomic<bool>> coded(static_cast<size_t>(parts));
  for (auto& c : coded) c.store(false, std::memory_order_relaxed);
  SharedRange shared(range);
  const int64_t tasks = std::min<int64_t>(parts, pool != nullptr ? pool->num_threads() : 1);
  const double cost = cost_per_part * static_cast<double>(parts) / static_cast<double>(tasks);
  ThreadPool::For(pool, tasks, cost, [&](int64_t, int64_t) {
    thread_local std::vector<int64_t> mine;
    mine.clear();
    float r[2] = {0.0f, 0.0f};
    try {
      for (int64_t p = next.fetch_add(1); p < parts; p = next.fetch_add(1)) {
        compute(p, r);
        mine.push_back(p);
      }
    } catch (...) {
      failed.store(true);
      throw;
    }
    if (mine.empty()) return;
    shared.Merge(r);
    computed.fetch_add(static_cast<int64_t>(mine.size()), std::memory_order_acq_rel);
    for (int spins = 0; computed.load(std::memory_order_acquire) < parts; ++spins) {
      if (failed.load()) return;
      if (spins < kSpinsBeforeYield) SpinPause();
      else std::this_thread::yield();
    }
    const DynamicQuantParams q = DynamicQuantParamsOf(range[0], range[1]);
    auto code = [&](int64_t p) {
      if (!coded[static_cast<size_t>(p)].exchange(true)) codes(p, q);
    };
    for (const int64_t p : mine) code(p);
    for (int64_t p = 0; p < parts; ++p) code(p);
  });
}

}  // namespace

linalg::Q8Output StageOutput(const DynamicFloatStage& stage, linalg::Q8Output::Kind kind, void* c, int64_t ldc) {
  linalg::Q8Output o;
  o.kind = kind;
  o.c = c;
  o.ldc = ldc;
  o.scale = stage.mult;
  o.scale_per_column = true;
  o.bias = stage.bias;
  o.lo = stage.lo, o.hi = stage.hi;
  return o;
}

void SharedRange::Merge(const float r[2]) {
  if (range_ == nullptr) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  range_[0] = std::min(range_[0], r[0]);
  range_[1] = std::max(range_[1], r[1]);
}

void SharedRange::Add(const float* v, int64_t n) {
  if (range_ == nullptr) return;
  float r[2] = {0.0f, 0.0f};
  linalg::Q8MinMax(v, n, &r[0], &r[1]);
  Merge(r);
}

void SiluInPlace(float* v, int64_t n) {
  constexpr int64_t kBlock = 2048;
  thread_local std::vector<float> gate(kBlock);
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t count = std::min(kBlock, n - i);
    linalg::VecSigmoidAsOnnxRuntime(v + i, gate.data(), static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j) v[i + j] *= gate[static_cast<size_t>(j)];
  }
}

bool CodesInPieces(const ConvGeometry& g, const QuantWeights& w) {
  // A Y that stays in L2 anyway costs less written once than computed twice in small pieces
  // (MobileNetV2, 96 -> 576 channels at 14x14: 82 us whole, 228 in pieces).
  if (g.batch * g.out_channels * g.out_size < kMinPiecedFloats) return false;
  // A depthwise conv's output is computed once (its int32 loop costs more than the trip through
  // memory: MobileNetV2 dynamic, CPU per Run 7.8 -> 7.0 ms, 1 thread, loaded machine).
  return g.group == 1 && w.nchw.size() == 1 && IsPointwise(g);
}

void ConvToCodesInPieces(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                         const DynamicFloatStage& stage, float range[2], uint8_t* codes, ThreadPool* pool) {
  range[0] = range[1] = 0.0f;
  if (g.batch * g.out_channels * g.out_size == 0) return;
  const PointwisePieces pieces(g, x, x_zp, w, stage);
  RangeInPieces(pieces, range, pool);
  if (stage.silu) return QuantizedPieces(g, pieces, range, codes, pool);
  // Else the GEMM writes the codes from its registers (Q8Output::kFloatCodes: the float stage's
  // value, then Q8QuantizeU8's operations on it), so no float piece is stored and read again.
  const DynamicQuantParams q = DynamicQuantParamsOf(range[0], range[1]);
  linalg::Q8Output o = StageOutput(stage, linalg::Q8Output::kFloatCodes, nullptr, g.out_size);
  o.code_scale = q.scale;
  o.zero_point = q.zero_point;
  for (int64_t n = 0; n < g.batch; ++n) {
    o.c = codes + n * g.out_channels * g.out_size;
    linalg::Q8GemmW(w.nchw[0], g.out_size, x + n * g.channels * g.in_size, false, g.in_size, x_zp, o, pool);
  }
}

bool ConvToCodesOnce(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                     const DynamicFloatStage& stage, float range[2], float* y, uint8_t* codes, ThreadPool* pool) {
  if (stage.HasPost()) return false;
  const int64_t m = g.out_channels;
  const int64_t threads = pool != nullptr ? pool->num_threads() : 1;
  const linalg::Q8QuantizeU8Fn quantize = linalg::Q8QuantizeU8Kernel();
  if (g.group == 1 && w.nchw.size() == 1 && IsPointwise(g)) {
    // Parts: runs of whole 8-row panels of W (output channels) of one image, all pixels; the
    // depthwise conv reading the codes splits by channels too.
    const int64_t row_panels = CeilDiv(m, int64_t{8});
    const int64_t per_image = std::min(row_panels, kPartsPerThread * threads);
    auto rows = [&](int64_t part, int64_t* r0, int64_t* r1) {
      const int64_t i = part % per_image;
      *r0 = std::min(m, i * row_panels / per_image * 8);
      *r1 = std::min(m, (i + 1) * row_panels / per_image * 8);
    };
    auto compute = [&](int64_t part, float r[2]) {
      const int64_t n = part / per_image;
      int64_t r0 = 0, r1 = 0;
      rows(part, &r0, &r1);
      linalg::Q8Output o = StageOutput(stage, linalg::Q8Output::kFloat, y + n * m * g.out_size, g.out_size);
      o.range = r;
      linalg::Q8GemmWRows(w.nchw[0], r0, r1, g.out_size, x + n * g.channels * g.in_size, false, g.in_size, x_zp, o,
                          nullptr);
    };
    auto to_codes = [&](int64_t part, DynamicQuantParams q) {
      const int64_t n = part / per_image;
      int64_t r0 = 0, r1 = 0;
      rows(part, &r0, &r1);
      const int64_t begin = (n * m + r0) * g.out_size;
      quantize(y + begin, (r1 - r0) * g.out_size, q.scale, q.zero_point, codes + begin);
    };
    const double cost = 2.0 * static_cast<double>(m * g.channels * g.out_size) / static_cast<double>(per_image);
    ComputeThenCodes(pool, g.batch * per_image, cost, range, compute, to_codes);
    return true;
  }
  if (!w.nchw.empty() || w.depthwise.empty() || g.in.size() != 2) return false;
  // Parts: runs of planes (n * M + channel), each finished in runs of kRun while in cache.
  constexpr int64_t kRun = 8;
  const int64_t planes = g.batch * m, parts = std::min(planes, kPartsPerThread * threads);
  const linalg::Q8ToFloatFn to_float = linalg::Q8ToFloatKernel();
  const linalg::Q8MinMaxFn min_max = linalg::Q8MinMaxKernel();
  auto compute = [&](int64_t part, float r[2]) {
    const int64_t p1 = (part + 1) * planes / parts;
    for (int64_t p = part * planes / parts; p < p1; p += kRun) {
      const int64_t end = std::min(p1, p + kRun);
      DepthwisePlanes(g, x, false, x_zp, w.depthwise.data(), nullptr, y, sizeof(int32_t), p, end);  // int32 sums into y
      for (int64_t q = p; q < end; ++q) {
        const int64_t c = q % m;
        to_float(y + q * g.out_size, g.out_size, stage.mult[c], stage.bias != nullptr ? stage.bias + c : nullptr,
                 stage.lo, stage.hi);
      }
      AddRange(min_max, y + p * g.out_size, (end - p) * g.out_size, r);
    }
  };
  auto to_codes = [&](int64_t part, DynamicQuantParams q) {
    const int64_t p0 = part * planes / parts, p1 = (part + 1) * planes / parts;
    quantize(y + p0 * g.out_size, (p1 - p0) * g.out_size, q.scale, q.zero_point, codes + p0 * g.out_size);
  };
  const double cost = 2.0 * static_cast<double>(planes * g.out_size * g.kernel_size) / static_cast<double>(parts);
  ComputeThenCodes(pool, parts, cost, range, compute, to_codes);
  return true;
}

DynamicFloatStage DynamicFloatStage::Pre() const {
  DynamicFloatStage pre = *this;
  pre.silu = false;
  pre.z = nullptr;
  if (z != nullptr) {
    pre.lo = -std::numeric_limits<float>::infinity();
    pre.hi = std::numeric_limits<float>::infinity();
  }
  return pre;
}

void PostStage(const DynamicFloatStage& stage, float* v, int64_t offset, int64_t n) {
  if (stage.z != nullptr) {
    const float* z = stage.z + offset;
    const float lo = stage.lo, hi = stage.hi;
    for (int64_t i = 0; i < n; ++i) {
      float t = v[i] + z[i];
      t = t < lo ? lo : t;  // q8_to_float.h's clamp: a NaN passes
      v[i] = t > hi ? hi : t;
    }
  }
  if (stage.silu) SiluInPlace(v, n);
}

bool PointwisePostInPieces(const ConvGeometry& g, const uint8_t* x, uint8_t x_zp, const QuantWeights& w,
                           const DynamicFloatStage& stage, float* range, float* y, ThreadPool* pool) {
  if (!stage.HasPost() || g.group != 1 || w.nchw.size() != 1 || !IsPointwise(g)) return false;
  // Narrow pieces cost the GEMM more than the second pass saves where W is large (it streams
  // again for every piece) or the pieces are few pixels wide (ResNet-50's 1x1 convs to 256-2048
  // channels: 33 -> 35 ms).
  if (g.out_channels > kMaxPieceRows || g.out_channels * g.channels > kMaxPieceWeights) return false;
  const DynamicFloatStage pre = stage.Pre();
  const int64_t m = g.out_channels;
  const int64_t cols = std::min(g.out_size, std::max<int64_t>(32, kPieceFloats / m / 32 * 32));
  const int64_t per_image = CeilDiv(g.out_size, cols);
  const linalg::Q8MinMaxFn min_max = linalg::Q8MinMaxKernel();
  SharedRange shared(range);
  ThreadPool::For(pool, g.batch * per_image, 2.0 * static_cast<double>(m * g.channels * cols) + 20.0 * m * cols,
                  [&](int64_t t0, int64_t t1) {
                    float r[2] = {0.0f, 0.0f};
                    for (int64_t t = t0; t < t1; ++t) {
                      const int64_t n = t / per_image, j0 = (t % per_image) * cols;
                      const int64_t count = std::min(cols, g.out_size - j0);
                      float* piece = y + n * m * g.out_size + j0;
                      const linalg::Q8Output o = StageOutput(pre, linalg::Q8Output::kFloat, piece, g.out_size);
                      linalg::Q8GemmW(w.nchw[0], count, x + n * g.channels * g.in_size + j0, false, g.in_size, x_zp,
                                      o, nullptr);
                      for (int64_t row = 0; row < m; ++row) {
                        PostStage(stage, piece + row * g.out_size, (n * m + row) * g.out_size + j0, count);
                        if (range != nullptr) AddRange(min_max, piece + row * g.out_size, count, r);
                      }
                    }
                    shared.Merge(r);
                  });
  return true;
}

}  // namespace quant_conv
}  // namespace onyx
