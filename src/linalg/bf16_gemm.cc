// The bf16 GEMM driver: A rounded to bfloat16 pairs once per call (rows in parallel; with
// N <= 128, by each task for its own rows), then tasks of (a block of M rows) x (a few 32-column
// B panels) over the whole K: a B panel (K * 64 bytes, 48 KB at K = 768) stays in L2 while the
// tiles of the block pass it, and an A tile's rows stay in L1 across the panels of the group.
#include "linalg/bf16_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "linalg/bf16_gemm_kernel.h"
#include "linalg/vector_math.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

uint16_t RoundToBf16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

namespace {

float Bf16ToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

uint16_t ReadFloat(const void* b, int64_t i) { return RoundToBf16Bits(static_cast<const float*>(b)[i]); }
uint16_t ReadBits(const void* b, int64_t i) { return static_cast<const uint16_t*>(b)[i]; }

}  // namespace

float Bf16EpilogueActivation(float v, int activation, float alpha, float beta) {
  switch (activation) {
    case GemmEpilogue::kRelu: return v > 0.0f ? v : 0.0f;
    case GemmEpilogue::kClip: return std::min(std::max(v, alpha), beta);
    case GemmEpilogue::kLeakyRelu: return v < 0.0f ? alpha * v : v;
    case GemmEpilogue::kHardSigmoid: return std::max(0.0f, std::min(1.0f, alpha * v + beta));
    case GemmEpilogue::kSigmoid: return 1.0f / (1.0f + std::exp(-v));
    case GemmEpilogue::kTanh: return std::tanh(v);
    case GemmEpilogue::kSilu: return v / (1.0f + std::exp(-v));
    case GemmEpilogue::kGeluErf: return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
    case GemmEpilogue::kGeluTanh:
      return 0.5f * v * (1.0f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    default: return v;
  }
}

PackedBf16B::PackedBf16B(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb) {
  Init(trans_b, k, n, ldb, &ReadFloat, b);
}

PackedBf16B::PackedBf16B(bool trans_b, int64_t k, int64_t n, const uint16_t* b, int64_t ldb) {
  Init(trans_b, k, n, ldb, &ReadBits, b);
}

void PackedBf16B::Init(bool trans_b, int64_t k, int64_t n, int64_t ldb, uint16_t (*read)(const void*, int64_t),
                       const void* b) {
  if (k < 0 || n < 0) throw std::invalid_argument("PackedBf16B: negative K or N");
  k_ = k;
  n_ = n;
  const int64_t panels = (n + kBf16PanelColumns - 1) / kBf16PanelColumns, pairs = (k + 1) / 2;
  data_.assign(static_cast<size_t>(panels * panel_pairs() * kBf16PanelColumns), 0u);
  for (int64_t q = 0; q < panels; ++q) {
    uint32_t* out = data_.data() + q * panel_pairs() * kBf16PanelColumns;
    const int64_t cols = std::min(kBf16PanelColumns, n - q * kBf16PanelColumns);
    for (int64_t p = 0; p < pairs; ++p)
      for (int64_t j = 0; j < cols; ++j) {
        const int64_t col = q * kBf16PanelColumns + j;
        uint32_t v = 0;
        for (int64_t h = 0; h < 2 && 2 * p + h < k; ++h) {
          const int64_t row = 2 * p + h;
          v |= static_cast<uint32_t>(read(b, trans_b ? col * ldb + row : row * ldb + col)) << (16 * h);
        }
        out[p * kBf16PanelColumns + j] = v;
      }
  }
}

namespace {

// Sigmoid, Tanh, SiLU and the Gelus cost an exp, tanh or erf per value: the tiles leave them out
// and each task applies them to its finished block of C in long runs of the vectorized functions
// (per value in the tile, a SiLU made a pointwise layer up to 20x slower than its product).
bool CostlyActivation(int activation) {
  return activation == GemmEpilogue::kSigmoid || activation == GemmEpilogue::kTanh ||
         activation == GemmEpilogue::kSilu || activation == GemmEpilogue::kGeluErf ||
         activation == GemmEpilogue::kGeluTanh;
}

void ApplyActivation(int activation, float* p, size_t count) {
  switch (activation) {
    case GemmEpilogue::kSigmoid: VecSigmoid(p, p, count); break;
    case GemmEpilogue::kTanh: VecTanh(p, p, count); break;
    case GemmEpilogue::kSilu: VecSilu(p, p, count); break;
    case GemmEpilogue::kGeluErf: VecGeluErf(p, p, count); break;
    case GemmEpilogue::kGeluTanh: VecGeluTanh(p, p, count); break;
    default: break;
  }
}

// C's columns [j0, j1) (j0 a multiple of 16) of rows [i0, i1): element (i, j) sits at
// c + i * ldc + (j / 16) * c_block + j % 16. Row-major C (c_block 16) has each row's columns in
// one run; channel-blocked C (ldc 16) has each 16-column block's rows in one run.
void ApplyActivationToBlock(int activation, float* c, int64_t ldc, int64_t c_block, int64_t i0, int64_t i1,
                            int64_t j0, int64_t j1) {
  if (c_block == 16) {
    for (int64_t i = i0; i < i1; ++i) ApplyActivation(activation, c + i * ldc + j0, static_cast<size_t>(j1 - j0));
    return;
  }
  for (int64_t j = j0; j < j1; j += 16) {
    const int64_t cols = std::min<int64_t>(16, j1 - j);
    float* block = c + (j / 16) * c_block;
    if (ldc == 16 && cols == 16)
      ApplyActivation(activation, block + i0 * 16, static_cast<size_t>((i1 - i0) * 16));
    else
      for (int64_t i = i0; i < i1; ++i) ApplyActivation(activation, block + i * ldc, static_cast<size_t>(cols));
  }
}

void Run(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, int64_t a_block,
         const PackedBf16B& b, float beta, float* c, int64_t ldc, int64_t c_block, ThreadPool* pool,
         const GemmEpilogue* epilogue) {
  if (b.k() != k || b.n() != n)
    throw std::invalid_argument("Bf16GemmPackedB: B is packed as [" + std::to_string(b.k()) + ", " +
                                std::to_string(b.n()) + "], the call needs [" + std::to_string(k) + ", " +
                                std::to_string(n) + "]");
  const Bf16GemmKernel* kernel = SelectedBf16GemmKernel();
  if (kernel == nullptr) throw std::invalid_argument("Bf16GemmPackedB: this CPU has no AVX-512 BF16");
  if (m <= 0 || n <= 0) return;
  const int64_t pairs = (k + 1) / 2, mr = kernel->mr;
  // A in panels of MR rows, each in its kernel's layout (bf16_gemm_kernel.h, Bf16ConvertAFn).
  const int64_t a_panels = (m + mr - 1) / mr;
  const int64_t panel_size = (pairs + kernel->a_pair_align - 1) / kernel->a_pair_align * kernel->a_pair_align * mr;
  auto convert = [&](int64_t r0, uint32_t* out) {
    kernel->convert_a(trans_a, trans_a ? a + r0 : a + r0 * lda, lda, a_block, std::min(mr, m - r0), k, out);
  };
  const int64_t tiles_per_block = 8, panels_per_group = 4;
  const int64_t m_blocks = (m + mr * tiles_per_block - 1) / (mr * tiles_per_block);
  const int64_t panels = (n + kBf16PanelColumns - 1) / kBf16PanelColumns;
  const int64_t groups = (panels + panels_per_group - 1) / panels_per_group;
  // With one panel group (N <= 128: pointwise convs) each A panel serves one task: it converts
  // the panel right before its tiles, into a buffer that stays in L1, instead of a pass over all
  // of A first (ResNet-50's 3136 x 64 x 256 ran 1.6x the SGEMM on AMX that way, the pass taking
  // about as long as the products).
  const bool convert_in_task = groups == 1;
  std::unique_ptr<uint32_t[]> a16;
  if (!convert_in_task) {
    a16.reset(new uint32_t[static_cast<size_t>(a_panels * panel_size)]);
    ThreadPool::For(pool, a_panels, static_cast<double>(mr * k), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) convert(t * mr, a16.get() + t * panel_size);
    });
  }
  const double cost = static_cast<double>(mr * tiles_per_block) * panels_per_group * kBf16PanelColumns * k / 32.0;
  ThreadPool::For(pool, m_blocks * groups, cost, [&](int64_t begin, int64_t end) {
    std::unique_ptr<uint32_t[]> own_panel;
    if (convert_in_task) own_panel.reset(new uint32_t[static_cast<size_t>(panel_size)]);
    if (kernel->begin_task != nullptr) kernel->begin_task();
    for (int64_t task = begin; task < end; ++task) {
      const int64_t mb = task / groups, g = task % groups;
      const int64_t row_end = std::min(m, (mb + 1) * mr * tiles_per_block);
      const int64_t q_end = std::min(panels, (g + 1) * panels_per_group);
      for (int64_t i = mb * mr * tiles_per_block; i < row_end; i += mr) {
        const uint32_t* a_panel = convert_in_task ? own_panel.get() : a16.get() + (i / mr) * panel_size;
        if (convert_in_task) convert(i, own_panel.get());
        for (int64_t q = g * panels_per_group; q < q_end; ++q) {
          const int64_t j = q * kBf16PanelColumns, col_offset = (j / 16) * c_block;
          Bf16GemmTile t;
          t.pairs = pairs;
          t.a = a_panel;
          t.b = b.panel(q);
          t.c = c + i * ldc + col_offset;
          t.ldc = ldc;
          t.c_block = c_block;
          t.mr = static_cast<int>(std::min(mr, m - i));
          t.nr = static_cast<int>(std::min(kBf16PanelColumns, n - j));
          t.alpha = alpha;
          t.beta = beta;
          if (epilogue != nullptr) {
            t.bias_row = epilogue->bias_per_row ? epilogue->bias_per_row + i : nullptr;
            t.bias_col = epilogue->bias_per_col ? epilogue->bias_per_col + j : nullptr;
            t.residual = epilogue->residual ? epilogue->residual + i * epilogue->ldr + col_offset : nullptr;
            t.ldr = epilogue->ldr;
            t.activation = CostlyActivation(epilogue->activation) ? GemmEpilogue::kNone : epilogue->activation;
            t.act_alpha = epilogue->alpha;
            t.act_beta = epilogue->beta;
          }
          kernel->tile(t);
        }
      }
      if (epilogue != nullptr && CostlyActivation(epilogue->activation))
        ApplyActivationToBlock(epilogue->activation, c, ldc, c_block, mb * mr * tiles_per_block, row_end,
                               g * panels_per_group * kBf16PanelColumns, std::min(n, q_end * kBf16PanelColumns));
    }
    if (kernel->end_task != nullptr) kernel->end_task();
  });
}

}  // namespace

void Bf16GemmPackedB(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                     const PackedBf16B& b, float beta, float* c, int64_t ldc, ThreadPool* pool,
                     const GemmEpilogue* epilogue) {
  Run(trans_a, m, n, k, alpha, a, lda, 16, b, beta, c, ldc, 16, pool, epilogue);
}

void Bf16GemmPackedBBlocked(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                            int64_t a_block, const PackedBf16B& b, float beta, float* c, int64_t ldc, int64_t c_block,
                            ThreadPool* pool, const GemmEpilogue* epilogue) {
  Run(false, m, n, k, alpha, a, lda, a_block, b, beta, c, ldc, c_block, pool, epilogue);
}

void Bf16GemmReference(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                       const uint16_t* b, int64_t ldb, float beta, float* c, int64_t ldc,
                       const GemmEpilogue* epilogue) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float av = Bf16ToFloat(RoundToBf16Bits(trans_a ? a[p * lda + i] : a[i * lda + p]));
        acc += av * Bf16ToFloat(b[p * ldb + j]);
      }
      float v = alpha * acc;
      if (beta != 0.0f) v += beta * c[i * ldc + j];
      if (epilogue != nullptr) {
        if (epilogue->bias_per_row) v += epilogue->bias_per_row[i];
        if (epilogue->bias_per_col) v += epilogue->bias_per_col[j];
        if (epilogue->residual) v += epilogue->residual[i * epilogue->ldr + j];
        v = Bf16EpilogueActivation(v, epilogue->activation, epilogue->alpha, epilogue->beta);
      }
      c[i * ldc + j] = v;
    }
}

}  // namespace onyx::linalg
