// Every Sgemm variant (ISA) against the scalar SgemmReference: edge sizes, transposes, strides,
// alpha/beta, K/N/M cache-block crossings, threads, fused epilogues and pre-packed operands.
// Operands sit right before a PROT_NONE page, so reading past any of them crashes the test.
#include "linalg/gemm.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "guarded_floats.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {
namespace {

using testing::GuardedFloats;

// Runs the test body on one ISA and restores the default afterwards.
class IsaGuard {
 public:
  explicit IsaGuard(const std::string& isa) : ok_(ForceIsa(isa)) {}
  ~IsaGuard() { ForceIsa("auto"); }
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

struct Case {
  bool trans_a = false, trans_b = false;
  int64_t m = 1, n = 1, k = 1;
  int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;
  float alpha = 1.0f, beta = 0.0f;
  // Epilogue
  bool bias_row = false, bias_col = false, residual = false;
  GemmEpilogue::Activation activation = GemmEpilogue::kNone;
  float act_alpha = 0.0f, act_beta = 0.0f;
  // How to run it
  enum Mode { kPlain, kPackedB, kPackedA } mode = kPlain;
  int threads = 1;
  bool force_epilogue_overload = false;

  std::string Describe() const {
    return "ta=" + std::to_string(trans_a) + " tb=" + std::to_string(trans_b) + " m=" + std::to_string(m) +
           " n=" + std::to_string(n) + " k=" + std::to_string(k) + " pads=" + std::to_string(lda_pad) + "," +
           std::to_string(ldb_pad) + "," + std::to_string(ldc_pad) + " alpha=" + std::to_string(alpha) +
           " beta=" + std::to_string(beta) + " bias_row=" + std::to_string(bias_row) +
           " bias_col=" + std::to_string(bias_col) + " residual=" + std::to_string(residual) +
           " act=" + std::to_string(activation) + " mode=" + std::to_string(mode) +
           " threads=" + std::to_string(threads) + " isa=" + SgemmIsa();
  }
};

double Activate(double v, const Case& c) {
  switch (c.activation) {
    case GemmEpilogue::kNone:
      return v;
    case GemmEpilogue::kRelu:
      return std::max(v, 0.0);
    case GemmEpilogue::kClip:
      return std::min(std::max(v, static_cast<double>(c.act_alpha)), static_cast<double>(c.act_beta));
    case GemmEpilogue::kLeakyRelu:
      return v < 0 ? c.act_alpha * v : v;
    case GemmEpilogue::kHardSigmoid:
      return std::max(0.0, std::min(1.0, c.act_alpha * v + c.act_beta));
    case GemmEpilogue::kSigmoid:
      return 1.0 / (1.0 + std::exp(-v));
    case GemmEpilogue::kTanh:
      return std::tanh(v);
    case GemmEpilogue::kSilu:
      return v / (1.0 + std::exp(-v));
    case GemmEpilogue::kGeluErf:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case GemmEpilogue::kGeluTanh:
      return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
  }
  return v;
}

// Runs one case on the current ISA and checks every element of C (and that padding between rows
// of C is untouched).
void Check(const Case& c, std::mt19937& rng) {
  SCOPED_TRACE(c.Describe());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const int64_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int64_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const int64_t lda = a_cols + c.lda_pad, ldb = b_cols + c.ldb_pad, ldc = c.n + c.ldc_pad;
  // Size each operand to end at its last element so the guard page sits right behind it.
  auto extent = [](int64_t rows, int64_t cols, int64_t ld) {
    return static_cast<size_t>(rows == 0 || cols == 0 ? 1 : (rows - 1) * ld + cols);
  };
  GuardedFloats a(extent(a_rows, a_cols, lda)), b(extent(b_rows, b_cols, ldb)), cm(extent(c.m, c.n, ldc));
  for (size_t i = 0; i < a.size(); ++i) a[i] = dist(rng);
  for (size_t i = 0; i < b.size(); ++i) b[i] = dist(rng);
  const float kPadMarker = 12345.0f;
  for (size_t i = 0; i < cm.size(); ++i) cm[i] = kPadMarker;
  std::vector<float> c0(cm.size());
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j)
      cm[i * ldc + j] = c.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  std::copy(cm.data(), cm.data() + cm.size(), c0.begin());

  GuardedFloats bias_row(std::max<int64_t>(c.m, 1)), bias_col(std::max<int64_t>(c.n, 1));
  const int64_t ldr = c.n + 3;
  GuardedFloats residual(extent(c.m, c.n, ldr));
  for (size_t i = 0; i < bias_row.size(); ++i) bias_row[i] = dist(rng);
  for (size_t i = 0; i < bias_col.size(); ++i) bias_col[i] = dist(rng);
  for (size_t i = 0; i < residual.size(); ++i) residual[i] = dist(rng);
  GemmEpilogue ep;
  ep.bias_per_row = c.bias_row ? bias_row.data() : nullptr;
  ep.bias_per_col = c.bias_col ? bias_col.data() : nullptr;
  ep.residual = c.residual ? residual.data() : nullptr;
  ep.ldr = ldr;
  ep.activation = c.activation;
  ep.alpha = c.act_alpha;
  ep.beta = c.act_beta;
  const bool has_ep = c.bias_row || c.bias_col || c.residual || c.activation != GemmEpilogue::kNone;
  const GemmEpilogue* epp = has_ep || c.force_epilogue_overload ? &ep : nullptr;

  ThreadPool pool(c.threads);
  ThreadPool* poolp = c.threads > 1 ? &pool : nullptr;
  switch (c.mode) {
    case Case::kPlain:
      if (epp == nullptr)
        Sgemm(c.trans_a, c.trans_b, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, cm.data(), ldc,
              poolp);
      else
        Sgemm(c.trans_a, c.trans_b, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, cm.data(), ldc,
              poolp, epp);
      break;
    case Case::kPackedB: {
      const PackedB packed(c.trans_b, c.k, c.n, b.data(), ldb, poolp);
      SgemmPackedB(c.trans_a, c.m, c.n, c.k, c.alpha, a.data(), lda, packed, c.beta, cm.data(), ldc, poolp, epp);
      break;
    }
    case Case::kPackedA: {
      const PackedA packed(c.trans_a, c.m, c.k, a.data(), lda, poolp);
      SgemmPackedA(c.trans_b, c.m, c.n, c.k, c.alpha, packed, b.data(), ldb, c.beta, cm.data(), ldc, poolp, epp);
      break;
    }
  }

  // The oracle: SgemmReference for the product, sums of magnitudes for the tolerance.
  std::vector<float> ref(c0), mag(static_cast<size_t>(std::max<int64_t>(c.m * c.n, 1)));
  SgemmReference(c.trans_a, c.trans_b, c.m, c.n, c.k, c.alpha, a.data(), lda, b.data(), ldb, c.beta, ref.data(), ldc);
  std::vector<float> abs_a(a.data(), a.data() + a.size()), abs_b(b.data(), b.data() + b.size());
  for (float& v : abs_a) v = std::fabs(v);
  for (float& v : abs_b) v = std::fabs(v);
  SgemmReference(c.trans_a, c.trans_b, c.m, c.n, c.k, std::fabs(c.alpha), abs_a.data(), lda, abs_b.data(), ldb, 0.0f,
                 mag.data(), c.n);
  int failures = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double v = ref[i * ldc + j];
      double scale = mag[i * c.n + j] + (c.beta == 0.0f ? 0.0 : std::fabs(c.beta * c0[i * ldc + j]));
      if (c.bias_row) v += bias_row[i], scale += std::fabs(bias_row[i]);
      if (c.bias_col) v += bias_col[j], scale += std::fabs(bias_col[j]);
      if (c.residual) v += residual[i * ldr + j], scale += std::fabs(residual[i * ldr + j]);
      const double want = Activate(v, c);
      const double tol = 1.2 * (2e-5 * scale + 1e-6) + 2e-6 * std::fabs(want);
      const float got = cm[i * ldc + j];
      if (!(std::fabs(got - want) <= tol) && ++failures <= 5)
        ADD_FAILURE() << "C[" << i << "," << j << "] = " << got << ", want " << want << " (tol " << tol << ")";
    }
    for (int64_t j = c.n; j < ldc && i + 1 < c.m; ++j)
      if (cm[i * ldc + j] != kPadMarker && ++failures <= 5) ADD_FAILURE() << "padding of row " << i << " written";
  }
}

class SgemmVariant : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto isas = SupportedSgemmIsas();
    if (std::find(isas.begin(), isas.end(), GetParam()) == isas.end())
      GTEST_SKIP() << GetParam() << " is not supported by this CPU";
    guard_ = std::make_unique<IsaGuard>(GetParam());
    ASSERT_TRUE(guard_->ok());
    ASSERT_EQ(SgemmIsa(), GetParam());
  }
  void TearDown() override { guard_.reset(); }
  std::unique_ptr<IsaGuard> guard_;
  std::mt19937 rng_{1234};
};

const int64_t kEdgeSizes[] = {1, 2, 3, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 28, 29, 31, 32, 33, 47, 48, 63, 64, 65, 70};

TEST_P(SgemmVariant, EdgeSizesTransposesAndStrides) {
  for (const int64_t m : kEdgeSizes)
    for (const int64_t n : kEdgeSizes)
      for (const int64_t k : {1, 7, 64, 70}) {
        Case c;
        c.m = m, c.n = n, c.k = k;
        c.trans_a = (m + n + k) % 2 == 1;
        c.trans_b = (m * 3 + n + k / 7) % 4 >= 2;
        c.lda_pad = (m + k) % 3, c.ldb_pad = (n + k) % 5, c.ldc_pad = (m * n) % 4;
        Check(c, rng_);
      }
}

TEST_P(SgemmVariant, EverySizeFrom1To70) {
  for (int64_t s = 1; s <= 70; ++s) {
    Case c;
    c.m = s, c.n = 37, c.k = 19;
    Check(c, rng_);
    c.m = 23, c.n = s, c.k = 11, c.trans_b = true;
    Check(c, rng_);
    c.m = 15, c.n = 33, c.k = s, c.trans_a = true, c.trans_b = false, c.ldc_pad = 1;
    Check(c, rng_);
  }
}

TEST_P(SgemmVariant, AlphaBetaAndNanGarbageWhenBetaIsZero) {
  for (const float alpha : {1.0f, -0.5f, 2.0f, 0.0f})
    for (const float beta : {0.0f, 1.0f, 0.5f, -1.0f})
      for (const bool ta : {false, true})
        for (const bool tb : {false, true}) {
          Case c;
          c.m = 45, c.n = 51, c.k = 33, c.trans_a = ta, c.trans_b = tb, c.alpha = alpha, c.beta = beta;
          c.ldc_pad = 3;
          Check(c, rng_);
        }
}

TEST_P(SgemmVariant, KZeroScalesC) {
  for (const float beta : {0.0f, 0.5f}) {
    Case c;
    c.m = 17, c.n = 35, c.k = 0, c.beta = beta;
    Check(c, rng_);
    c.bias_col = true, c.activation = GemmEpilogue::kRelu;
    Check(c, rng_);
    c.mode = Case::kPackedB;
    Check(c, rng_);
    c.mode = Case::kPackedA;
    Check(c, rng_);
  }
}

TEST_P(SgemmVariant, CrossesCacheBlocks) {
  Case c;
  c.m = 37, c.n = 45, c.k = 1537, c.beta = 0.5f, c.ldb_pad = 1;  // several K blocks
  Check(c, rng_);
  c.trans_a = c.trans_b = true;
  c.residual = true, c.activation = GemmEpilogue::kRelu;  // epilogue only after the last K block
  Check(c, rng_);
  c = Case{};
  c.m = 29, c.n = 2100, c.k = 420, c.beta = 1.0f;  // several N blocks
  Check(c, rng_);
  c = Case{};
  c.m = 1400, c.n = 20, c.k = 400, c.trans_a = true;  // several M blocks
  Check(c, rng_);
}

TEST_P(SgemmVariant, SmallMReadsBInPlace) {
  for (const int64_t m : {1, 2, 4, 6, 14}) {
    Case c;
    c.m = m, c.n = 1001, c.k = 57, c.ldb_pad = 7, c.beta = 0.25f, c.bias_col = true;
    Check(c, rng_);
    c.threads = 2, c.k = 700;
    Check(c, rng_);
  }
}

TEST_P(SgemmVariant, Threads) {
  for (const int threads : {2, 3, 4})
    for (const bool tb : {false, true}) {
      Case c;
      c.threads = threads, c.trans_b = tb;
      c.m = 200, c.n = 150, c.k = 100, c.ldc_pad = 2;
      Check(c, rng_);
      c.m = 130, c.n = 600, c.k = 64, c.bias_row = true, c.activation = GemmEpilogue::kGeluErf;
      Check(c, rng_);
      c.m = 1000, c.n = 40, c.k = 120, c.mode = Case::kPackedB, c.activation = GemmEpilogue::kNone;
      Check(c, rng_);
      c.m = 40, c.n = 1000, c.k = 120, c.mode = Case::kPackedA, c.beta = 1.0f;
      Check(c, rng_);
    }
}

// Shapes where the threads share one pack of B (the cost model prefers it over a split that
// repeats a pack per thread), across K blocks, with B transposed or not and padded strides.
TEST_P(SgemmVariant, ThreadsShareOnePackOfB) {
  for (const int threads : {2, 3})
    for (const bool tb : {false, true}) {
      Case c;
      c.threads = threads, c.trans_b = tb, c.trans_a = tb;
      c.m = 300, c.n = 280, c.k = 1100, c.ldb_pad = 3, c.lda_pad = 1, c.ldc_pad = 2, c.bias_col = true;
      Check(c, rng_);
      c.m = 1024, c.n = 97, c.k = 300, c.beta = 0.5f, c.bias_col = false, c.activation = GemmEpilogue::kRelu;
      Check(c, rng_);
    }
}

// 1..4 columns with a row-major A run as dot products of A's rows (no packing): every epilogue,
// beta, padded strides, B either way, row counts across the 4-row and 64-row steps, threads.
TEST_P(SgemmVariant, FewColumns) {
  const GemmEpilogue::Activation acts[] = {GemmEpilogue::kNone, GemmEpilogue::kRelu, GemmEpilogue::kClip,
                                           GemmEpilogue::kLeakyRelu, GemmEpilogue::kHardSigmoid,
                                           GemmEpilogue::kSigmoid, GemmEpilogue::kTanh, GemmEpilogue::kSilu,
                                           GemmEpilogue::kGeluErf, GemmEpilogue::kGeluTanh};
  int variant = 0;
  for (int64_t n = 1; n <= 4; ++n)
    for (const int64_t m : {1, 3, 4, 7, 65, 300})
      for (const int64_t k : {1, 15, 16, 17, 500}) {
        Case c;
        c.m = m, c.n = n, c.k = k, c.trans_b = variant % 2 == 1;
        c.lda_pad = variant % 3, c.ldb_pad = variant % 4 == 0 ? 2 : 0, c.ldc_pad = variant % 5 == 0 ? 3 : 0;
        c.beta = variant % 3 == 0 ? 0.7f : 0.0f, c.alpha = variant % 7 == 0 ? -1.5f : 1.0f;
        c.bias_row = variant % 2 == 0, c.bias_col = variant % 3 != 1, c.residual = variant % 4 == 1;
        c.activation = acts[variant % 10], c.act_alpha = 0.2f, c.act_beta = 0.5f;
        if (c.activation == GemmEpilogue::kClip) c.act_alpha = -0.3f, c.act_beta = 0.4f;
        c.threads = variant % 4 == 3 ? 2 : 1;
        c.force_epilogue_overload = true;
        Check(c, rng_);
        ++variant;
      }
}

TEST_P(SgemmVariant, Epilogues) {
  struct Act {
    GemmEpilogue::Activation act;
    float alpha, beta;
  };
  const Act acts[] = {{GemmEpilogue::kNone, 0, 0},         {GemmEpilogue::kRelu, 0, 0},
                      {GemmEpilogue::kClip, -0.3f, 0.4f},  {GemmEpilogue::kLeakyRelu, 0.1f, 0},
                      {GemmEpilogue::kHardSigmoid, 0.2f, 0.5f}, {GemmEpilogue::kSigmoid, 0, 0},
                      {GemmEpilogue::kTanh, 0, 0},         {GemmEpilogue::kSilu, 0, 0},
                      {GemmEpilogue::kGeluErf, 0, 0},      {GemmEpilogue::kGeluTanh, 0, 0}};
  int variant = 0;
  for (const Act& act : acts)
    for (const auto mode : {Case::kPlain, Case::kPackedB, Case::kPackedA})
      for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{33, 47, 29}, {14, 32, 9}, {3, 70, 130}}) {
        Case c;
        c.m = m, c.n = n, c.k = k, c.mode = mode;
        c.activation = act.act, c.act_alpha = act.alpha, c.act_beta = act.beta;
        c.bias_row = variant % 2 == 0, c.bias_col = variant % 3 != 0, c.residual = variant % 4 < 2;
        c.beta = variant % 5 == 0 ? 0.5f : 0.0f;
        // Larger alpha pushes values into the activations' tails (and past their clamps).
        c.alpha = variant % 7 == 0 ? 3.0f : variant % 11 == 0 ? 60.0f : 1.0f;
        c.trans_a = variant % 2 == 1, c.trans_b = variant % 3 == 1;
        c.force_epilogue_overload = true;
        Check(c, rng_);
        ++variant;
      }
}

TEST_P(SgemmVariant, PackedOperands) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {5, 9, 3}, {70, 69, 68}, {20, 33, 900}}) {
        Case c;
        c.m = m, c.n = n, c.k = k, c.trans_a = ta, c.trans_b = tb, c.lda_pad = 1, c.ldb_pad = 2;
        c.mode = Case::kPackedB;
        Check(c, rng_);
        c.mode = Case::kPackedA, c.beta = 1.0f;
        Check(c, rng_);
      }
}

// Row-major A is read in place by the microkernel when the block has few column panels (and is
// packed otherwise, or when its rows are a multiple of 4 KB apart): ViT-tiny's 197-row products
// (a ragged last row panel), K across several blocks, padded and 1024-float row strides.
TEST_P(SgemmVariant, ReadsAInPlaceOrPacked) {
  for (const int64_t n : {5, 64, 192, 197, 576})
    for (const int64_t k : {1, 64, 192, 700}) {
      Case c;
      c.m = 197, c.n = n, c.k = k, c.lda_pad = (n + k) % 3, c.beta = 0.5f, c.bias_col = true;
      Check(c, rng_);
      c.mode = Case::kPackedB, c.beta = 0.0f, c.activation = GemmEpilogue::kGeluErf;
      Check(c, rng_);
      c.mode = Case::kPlain, c.lda_pad = 1024 - k, c.threads = 2, c.residual = true;
      Check(c, rng_);
    }
  for (const int64_t m : {1, 3, 13, 15, 29}) {  // row counts around the panel heights
    Case c;
    c.m = m, c.n = 100, c.k = 33, c.lda_pad = 2, c.alpha = -1.5f;
    Check(c, rng_);
  }
}

TEST_P(SgemmVariant, TransformerShape) {
  Case c;
  c.m = 128, c.n = 771, c.k = 768, c.mode = Case::kPackedB, c.threads = 2, c.bias_col = true;
  c.activation = GemmEpilogue::kGeluErf;
  Check(c, rng_);
}

// A constant B (PackedB, cold in cache) times a packed A block: the AVX-512 kernel sweeps every
// A panel past each B panel while the tiles prefetch the next B panel. A is packed because its
// rows are 1024 floats apart, or it is transposed. Ragged column panels, several K blocks (the
// prefetch then reaches into the next block), beta, the epilogue after the last block, threads.
TEST_P(SgemmVariant, ConstantBSweptPanelByPanel) {
  for (const int threads : {1, 2})
    for (const bool ta : {false, true})
      // 64 x 330: 11 column panels, where A is packed for the cold-B order but read in place for a
      // warm B (kDirectAMaxPanelsColdB).
      for (const auto& [m, n, k] :
           {std::tuple<int64_t, int64_t, int64_t>{128, 771, 1024}, {29, 97, 3072}, {13, 2000, 1024}, {64, 330, 768}}) {
        Case c;
        c.mode = Case::kPackedB, c.threads = threads, c.trans_a = ta;
        c.m = m, c.n = n, c.k = k, c.beta = 0.5f, c.bias_col = true, c.residual = true;
        c.activation = GemmEpilogue::kGeluErf;
        Check(c, rng_);
      }
}

// A packed B bigger than any cache (> 8M floats per K block) takes taller row blocks; m spans
// several default row blocks. Checked on sampled elements against a double-precision dot.
TEST_P(SgemmVariant, PackedBStreamedFromMemory) {
  if (GetParam() == "scalar") GTEST_SKIP() << "5 G multiply-adds: too slow for the scalar kernel";
  const int64_t m = 600, n = 16800, k = 500;  // one K block of 500 on both SIMD kernels
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), bias(static_cast<size_t>(n));
  for (float& v : a) v = dist(rng_);
  for (float& v : b) v = dist(rng_);
  for (float& v : bias) v = dist(rng_);
  const PackedB pb(false, k, n, b.data(), n);
  std::vector<float> c(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
  GemmEpilogue ep;
  ep.bias_per_col = bias.data();
  SgemmPackedB(false, m, n, k, 0.5f, a.data(), k, pb, 0.0f, c.data(), n, nullptr, &ep);
  std::uniform_int_distribution<int64_t> row(0, m - 1), col(0, n - 1);
  int failures = 0;
  for (int s = 0; s < 4000; ++s) {
    // Every corner of the matrix, then random elements.
    const int64_t i = s < 4 ? (s % 2) * (m - 1) : row(rng_), j = s < 4 ? (s / 2) * (n - 1) : col(rng_);
    double dot = 0.0, mag = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      dot += static_cast<double>(a[i * k + p]) * b[p * n + j];
      mag += std::fabs(static_cast<double>(a[i * k + p]) * b[p * n + j]);
    }
    const double want = 0.5 * dot + bias[j];
    if (std::fabs(c[i * n + j] - want) > 1e-5 * (0.5 * mag + 1.0) && ++failures <= 5)
      ADD_FAILURE() << "C[" << i << ", " << j << "] = " << c[i * n + j] << ", want " << want;
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, SgemmVariant, ::testing::Values("avx512", "avx2", "scalar"),
                         [](const auto& info) { return info.param; });

TEST(Sgemm, PackedShapeMismatchThrows) {
  std::vector<float> b(6 * 4, 1.0f), a(3 * 6, 1.0f), c(3 * 4);
  const PackedB pb(false, 6, 4, b.data(), 4);
  EXPECT_THROW(SgemmPackedB(false, 3, 4, 5, 1.0f, a.data(), 6, pb, 0.0f, c.data(), 4, nullptr), std::invalid_argument);
  EXPECT_THROW(SgemmPackedB(false, 3, 5, 6, 1.0f, a.data(), 6, pb, 0.0f, c.data(), 4, nullptr), std::invalid_argument);
  EXPECT_THROW(SgemmPackedB(false, 3, 4, 6, 1.0f, a.data(), 6, PackedB(), 0.0f, c.data(), 4, nullptr),
               std::invalid_argument);
  const PackedA pa(false, 3, 6, a.data(), 6);
  EXPECT_THROW(SgemmPackedA(false, 4, 4, 6, 1.0f, pa, b.data(), 4, 0.0f, c.data(), 4, nullptr), std::invalid_argument);
  EXPECT_THROW(Sgemm(false, false, -1, 4, 6, 1.0f, a.data(), 6, b.data(), 4, 0.0f, c.data(), 4, nullptr),
               std::invalid_argument);
}

TEST(Sgemm, IsaSelection) {
  const auto isas = SupportedSgemmIsas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.back(), "scalar");
  EXPECT_FALSE(ForceIsa("sse9"));
  EXPECT_TRUE(ForceIsa("scalar"));
  EXPECT_EQ(SgemmIsa(), "scalar");
  EXPECT_EQ(SgemmKernelName(), "f32_gemm_scalar_4x8");
  // A pack keeps the kernel it was made for, whatever is selected later.
  std::vector<float> b(8 * 8, 0.5f), a(8 * 8, 2.0f), c(8 * 8);
  const PackedB pb(false, 8, 8, b.data(), 8);
  EXPECT_STREQ(pb.kernel_name(), "f32_gemm_scalar_4x8");
  EXPECT_TRUE(ForceIsa("auto"));
  EXPECT_EQ(SgemmIsa(), isas.front());
  SgemmPackedB(false, 8, 8, 8, 1.0f, a.data(), 8, pb, 0.0f, c.data(), 8, nullptr);
  for (float v : c) EXPECT_EQ(v, 8.0f);
}

}  // namespace
}  // namespace onyx::linalg
