// The blocked f32 GEMM driver (GotoBLAS/BLIS loop nest) over the selected microkernel:
//
//   for each strip of NS columns:
//     for each K block (kc deep):                  C gets beta on the first block only
//       pack the B strip (kc x NS)                 (skipped for PackedB)
//       for each MC rows: pack A block (MC x kc)   (skipped for PackedA)
//         for each NC columns:                     A block + B block (kc x NC) stay in L2
//           for each MR panel of A, for each NR panel of B: microkernel on one MR x NR tile
//
// A pre-packed constant B, cold in cache, swaps the two innermost loops where the kernel gains
// from it (each B panel passes every A panel while the next one is prefetched; see RunBlock).
//
// Threads split C into a grid of blocks (aligned to MR x NR) chosen so the packing each thread
// repeats stays small; every block runs the loop nest above with its own packing buffers, or
// all threads first pack B together once and share it (PackSharedB) when that is cheaper.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/aligned_memory.h"
#include "base/int_math.h"
#include "linalg/f32_gemm_kernel.h"
#include "linalg/f32_skinny_kernel.h"
#include "linalg/f32_vector_kernels.h"
#include "linalg/gemm.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

// ---- AlignedFloats ----

// Packs sit on 2 MB pages where the OS allows it (AllocateAligned), small ones sharing them: the
// microkernels walk weights panel by panel and 4 KB pages would cost a TLB miss every few panels.
AlignedFloats::AlignedFloats(size_t count) : size_(count) {
  if (count == 0) return;
  data_ = static_cast<float*>(AllocateAligned(count * sizeof(float), 64, /*share_huge_pages=*/true));
  if (data_ == nullptr) throw std::bad_alloc();
}

AlignedFloats::~AlignedFloats() {
  if (!owner_) FreeAligned(data_);
}

AlignedFloats::AlignedFloats(AlignedFloats&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owner_(std::move(other.owner_)) {}

AlignedFloats& AlignedFloats::operator=(AlignedFloats&& other) noexcept {
  if (this != &other) {
    AlignedFloats old(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::move(other.owner_);
  }
  return *this;
}

AlignedFloats FreshPack(const PackMemory* memory, size_t count) {
  if (memory != nullptr && *memory) return (*memory)(count);
  return AlignedFloats(count);
}

AlignedFloats MakePack(const PackSource* source, const std::string& form, size_t count,
                       const std::function<void(float*)>& fill) {
  if (source != nullptr && *source) return (*source)(form, count, fill);
  AlignedFloats packed(count);
  fill(packed.data());
  return packed;
}

// Read access to the packs for the driver below.
struct PackedAccess {
  static const F32GemmKernel* Kernel(const PackedA& p) { return p.kernel_; }
  static const F32GemmKernel* Kernel(const PackedB& p) { return p.kernel_; }
  static int64_t Kc(const PackedA& p) { return p.kc_; }
  static int64_t Kc(const PackedB& p) { return p.kc_; }
  static const float* Data(const PackedA& p) { return p.data_.data(); }
  static const float* Data(const PackedB& p) { return p.data_.data(); }
};

namespace {

int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// Below this many flops one thread is faster than waking others...
constexpr double kMinParallelFlops = 4.0e6;
// ...unless B is this big: a product with few rows is bound by streaming B, not by its
// multiply-adds (a 1 x 1280 x 1000 classifier head reads 5 MB for 2.6 MFLOP), and threads
// splitting the columns each stream a part.
constexpr double kMinParallelBBytes = 1 << 20;
// Packed B per strip (kc x ns floats); a few MB bounds the workspace.
constexpr int64_t kMaxBStripFloats = int64_t{1} << 20;
// A pre-packed B block (kc x all columns) bigger than this streams from memory, once per row
// block (the GPT-2 LM head: 768 x 50257 floats, 154 MB).
constexpr int64_t kStreamedBFloats = int64_t{8} << 20;
// Such a B takes row blocks this many times taller: A's panels then come from L3, which costs
// less than reading B from memory again (measured on the LM head: m = 256 9% faster, m = 1024
// 5%; a B that fits L3 gains nothing and loses up to 5%).
constexpr int64_t kStreamedBRowFactor = 4;
// Largest B packed once for all threads (PackSharedB); 16 MB.
constexpr int64_t kMaxSharedBFloats = int64_t{4} << 20;

int64_t L2Bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{512} << 10;
  }();
  return bytes;
}

// Equal K blocks of at most the kernel's kc, a multiple of 8 deep where possible.
int64_t BlockKc(const F32GemmKernel& kernel, int64_t k) {
  if (k <= kernel.kc) return std::max<int64_t>(k, 1);
  const int64_t blocks = CeilDiv(k, kernel.kc);
  return std::min(k, RoundUp(CeilDiv(k, blocks), 8));
}

// Columns of B per L2 block: kc x nc floats fill about half of L2.
int64_t BlockNc(const F32GemmKernel& kernel, int64_t kc) {
  const int64_t nc = (L2Bytes() / 2) / (kc * static_cast<int64_t>(sizeof(float)));
  return std::max<int64_t>(kernel.nr, nc / kernel.nr * kernel.nr);
}

// Rows of A per block: a quarter of L2, next to the B block while NC columns pass.
int64_t BlockMc(const F32GemmKernel& kernel, int64_t kc) {
  const int64_t mc = (L2Bytes() / 4) / (kc * static_cast<int64_t>(sizeof(float)));
  return std::max<int64_t>(kernel.mr * 4, mc / kernel.mr * kernel.mr);
}

// Columns of packed B per strip (a multiple of nc), bounding the workspace to a few MB.
int64_t BlockNs(int64_t kc, int64_t nc) {
  return std::max<int64_t>(nc, kMaxBStripFloats / kc / nc * nc);
}

// Per-thread packing buffers, grown on demand and kept for later calls.
float* Workspace(size_t floats) {
  thread_local AlignedFloats buffer;
  if (buffer.size() < floats) buffer = AlignedFloats(floats);
  return buffer.data();
}

struct Problem {
  const F32GemmKernel* kernel;
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
  const GemmEpilogue* epilogue;
  const float* packed_a;  // non-null: A comes pre-packed (PackedA layout)
  const float* packed_b;
  int64_t kc;
  bool b_from_memory = false;  // packed_b is a constant weight, cold in cache at each call
};

// op(A)[i, p] and op(B)[p, j] as pointers for the packers.
const float* AAt(const Problem& p, int64_t i, int64_t k0) {
  return p.trans_a ? p.a + k0 * p.lda + i : p.a + i * p.lda + k0;
}
const float* BAt(const Problem& p, int64_t k0, int64_t j) {
  return p.trans_b ? p.b + j * p.ldb + k0 : p.b + k0 * p.ldb + j;
}

// Whether the microkernel reads a row-major A in place instead of packing it, for a block of
// `cols` columns. Packing A costs about as much as one column panel's multiply-adds, repaid only
// over many panels; reading in place costs the 14-row AVX-512 tile a little past 12 panels
// (ViT-tiny's 197 x 192 x 192: 83% -> 89% of peak, 197 x 768 x 192: 91% -> 90%), while the
// 6-row AVX2 tile gains at every width measured (4-8%). Rows a multiple of 4 KB apart would
// share one L1 set, so those are packed. A packed A also opens the cold-B order (RunBlock),
// which pays from fewer panels: 8 instead of 12 where that order applies. That moves the column
// halves two threads take of BERT's and ViT's 768-wide products (12 panels each) to it:
// ViT-tiny 4.0%, BERT-tiny 2.5% and BERT-base 1.5% faster at two threads (alternating runs);
// ViT's 6-panel products stay in place.
constexpr int64_t kDirectAMaxPanels = 12, kDirectAMaxPanelsColdB = 8;
bool DirectA(const Problem& p, int64_t cols, bool cold_b_order) {
  if (p.trans_a || p.lda % 1024 == 0) return false;
  const int64_t max_panels = cold_b_order ? kDirectAMaxPanelsColdB : kDirectAMaxPanels;
  return p.kernel->mr <= 8 || CeilDiv(cols, p.kernel->nr) <= max_panels;
}

// C[m0:m1, n0:n1] (m0 a multiple of MR, n0 of NR) on the calling thread.
void RunBlock(const Problem& p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const F32GemmKernel& kern = *p.kernel;
  const int64_t mr = kern.mr, nr = kern.nr;
  const int64_t kc = p.kc;
  // Equal row blocks, up to 1.5x the target, so no thin last block re-reads all of B.
  const bool b_streams = p.packed_b != nullptr && RoundUp(n1 - n0, nr) * kc > kStreamedBFloats;
  const int64_t mc_target = BlockMc(kern, kc) * (b_streams ? kStreamedBRowFactor : 1);
  const int64_t m_blocks = CeilDiv(m1 - m0, mc_target + mc_target / 2);
  const int64_t mc = RoundUp(CeilDiv(m1 - m0, m_blocks), mr);
  const int64_t nc = std::min(BlockNc(kern, kc), RoundUp(n1 - n0, nr));
  // B is packed a column strip at a time (kc x ns) and reused by every row block below it.
  const int64_t ns = p.packed_b != nullptr ? RoundUp(n1 - n0, nr) : std::min(BlockNs(kc, nc), RoundUp(n1 - n0, nr));
  // With one row panel each B value is used once: read B in place, except a ragged last panel.
  const bool direct_b = p.packed_b == nullptr && !p.trans_b && m1 - m0 <= mr;
  // Whether the cold-B order below suits this B and kernel, and (for the largest A block) can apply.
  const bool cold_b = p.b_from_memory && !b_streams && kern.cold_b_panel_outer;
  const bool cold_b_order = cold_b && mc * kc * static_cast<int64_t>(sizeof(float)) <= L2Bytes() / 4;
  const bool direct_a = p.packed_a == nullptr && DirectA(p, n1 - n0, cold_b_order);
  const int64_t a_floats = p.packed_a != nullptr || direct_a ? 0 : RoundUp(mc * kc, 16);
  const int64_t b_floats = p.packed_b != nullptr ? 0 : direct_b ? kc * nr : ns * kc;
  float* const ws = Workspace(static_cast<size_t>(a_floats + b_floats));
  float* const a_buf = ws;
  float* const b_buf = ws + a_floats;
  const int64_t m_pad = RoundUp(p.m, mr), n_pad = RoundUp(p.n, nr);
  const GemmEpilogue* ep = p.epilogue;

  F32GemmTile t;
  t.alpha = p.alpha;
  t.ldc = p.ldc;
  if (ep != nullptr) {
    t.ldr = ep->ldr;
    t.activation = ep->activation;
    t.act_alpha = ep->alpha;
    t.act_beta = ep->beta;
  }
  const int64_t k_blocks = std::max<int64_t>(1, CeilDiv(p.k, kc));
  for (int64_t js = n0; js < n1; js += ns) {
    const int64_t nsb = std::min(ns, n1 - js);
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      const int64_t k0 = kb * kc;
      const int64_t kcb = std::min(kc, p.k - k0);
      t.kc = kcb;
      t.beta = kb == 0 ? p.beta : 1.0f;
      t.finish = kb == k_blocks - 1 && ep != nullptr;
      // The strip's panels: panel q starts at b_strip + q * kcb * nr.
      const float* b_strip = nullptr;
      if (p.packed_b != nullptr) {
        b_strip = p.packed_b + k0 * n_pad + js * kcb;
      } else if (!direct_b) {
        kern.pack_b(p.trans_b, BAt(p, k0, js), p.ldb, nsb, kcb, b_buf);
        b_strip = b_buf;
      } else if (nsb % nr != 0) {
        const int64_t last = nsb / nr * nr;
        kern.pack_b(false, BAt(p, k0, js + last), p.ldb, nsb - last, kcb, b_buf);
      }
      for (int64_t i0 = m0; i0 < m1; i0 += mc) {
        const int64_t mcb = std::min(mc, m1 - i0);
        // Row panel q holds rows [i0 + ir, i0 + ir + height) and, packed, starts at q * mr * kcb.
        // Unless A came pre-packed (fixed MR panels), the block's rows are shared evenly over
        // its panels: no thin last panel (ViT's 197 = 14 * 14 + 1 ran a 1-row tile at a
        // quarter of a full tile's cost; 13 and 14 rows cost what they compute).
        const int64_t panels = CeilDiv(mcb, mr);
        const bool even = p.packed_a == nullptr;
        const int64_t base = mcb / panels, taller = mcb % panels;  // divisions: once, not per tile
        auto panel_rows = [&](int64_t q) {  // first row and height of panel q
          if (!even) return std::pair<int64_t, int64_t>{q * mr, std::min(mr, mcb - q * mr)};
          return std::pair<int64_t, int64_t>{q * base + std::min(q, taller), base + (q < taller ? 1 : 0)};
        };
        const float* a_block;
        if (p.packed_a != nullptr) {
          a_block = p.packed_a + k0 * m_pad + i0 * kcb;
        } else if (direct_a) {
          a_block = AAt(p, i0, k0);
        } else {
          for (int64_t q = 0; q < panels; ++q) {
            const auto [ir, height] = panel_rows(q);
            kern.pack_a(p.trans_a, AAt(p, i0 + ir, k0), p.lda, height, kcb, a_buf + q * mr * kcb);
          }
          a_block = a_buf;
        }
        // Tile (panel q of the A block) x (columns j..j + NR).
        auto run_tile = [&](int64_t q, int64_t j, const float* prefetch) __attribute__((always_inline)) {
          const auto [ir, height] = panel_rows(q);
          const int64_t i = i0 + ir;
          if (direct_a) {
            t.a = a_block + ir * p.lda;
            t.a_row_stride = p.lda;
          } else {
            t.a = a_block + q * mr * kcb;
          }
          t.mr = static_cast<int>(height);
          t.nr = static_cast<int>(std::min(nr, js + nsb - j));
          if (b_strip != nullptr) {
            t.b = b_strip + (j - js) * kcb;
            t.b_stride = nr;
          } else if (t.nr == nr) {  // direct: B in place
            t.b = BAt(p, k0, j);
            t.b_stride = p.ldb;
          } else {
            t.b = b_buf;
            t.b_stride = nr;
          }
          t.prefetch = prefetch;
          t.c = p.c + i * p.ldc + j;
          if (t.finish) {
            t.bias_row = ep->bias_per_row != nullptr ? ep->bias_per_row + i : nullptr;
            t.bias_col = ep->bias_per_col != nullptr ? ep->bias_per_col + j : nullptr;
            t.residual = ep->residual != nullptr ? ep->residual + i * ep->ldr + j : nullptr;
          }
          kern.tile(t);
        };
        // A constant B comes from memory. Swept as below, the first A panel would read a whole B
        // block at compute speed, faster than one core can stream it, and wait. Instead each B
        // panel stays in L1 while every A panel passes it, and the tiles meanwhile fetch the next
        // B panel a share each, so memory is read at an even rate (BERT's 128 x 768 x 768 with
        // B cold: 162 -> 191 GFLOP/s). A is then re-read from L2 for every B panel, which only
        // pays while the A block is small and packed: a 1024-row block lost 3-10%, and 14 rows
        // read in place are 14 streams the L1 prefetcher cannot follow. A B too big for any cache
        // (b_streams) already gets row blocks tall enough to read it once, and gained nothing.
        const bool a_block_small = mcb * kcb * static_cast<int64_t>(sizeof(float)) <= L2Bytes() / 4;
        if (cold_b && !direct_a && a_block_small) {
          const int64_t panel_floats = kcb * nr;
          const int64_t lines_per_tile = CeilDiv(panel_floats, kPrefetchLineFloats * panels);
          t.prefetch_shift = 0;
          while (lines_per_tile > 0 && (kcb >> (t.prefetch_shift + 1)) >= lines_per_tile) ++t.prefetch_shift;
          // The panel swept after panel j: the strip's next one, else the strip's first again for
          // the next row block, else the next K block's first (PackedB's layout). Null at the end.
          auto next_panel = [&](int64_t j) -> const float* {
            if (j + nr < js + nsb) return b_strip + (j + nr - js) * kcb;
            if (i0 + mc < m1) return b_strip;
            if (kb + 1 < k_blocks) return p.packed_b + (k0 + kc) * n_pad + js * std::min(kc, p.k - k0 - kc);
            return nullptr;
          };
          for (int64_t j = js; j < js + nsb; j += nr) {
            const float* next = next_panel(j);
            for (int64_t q = 0; q < panels; ++q)
              run_tile(q, j, next != nullptr ? next + q * lines_per_tile * kPrefetchLineFloats : nullptr);
          }
          continue;
        }
        // One B block (kc x nc) stays in L2 while the A block's panels sweep over it.
        for (int64_t j0 = js; j0 < js + nsb; j0 += nc) {
          const int64_t ncb = std::min(nc, js + nsb - j0);
          for (int64_t q = 0; q < panels; ++q)
            for (int64_t jr = 0; jr < ncb; jr += nr) run_tile(q, j0 + jr, nullptr);
        }
      }
    }
  }
}

// The whole op(B) packed by all threads together (PackedB's layout) into the calling thread's
// buffer, so that a split over rows does not pack B once per thread. Null when it would not fit.
const float* PackSharedB(const Problem& p, ThreadPool* pool) {
  const F32GemmKernel& kern = *p.kernel;
  const int64_t n_pad = RoundUp(p.n, kern.nr);
  if (p.k * n_pad > kMaxSharedBFloats) return nullptr;
  thread_local AlignedFloats buffer;  // kept for later calls, as Workspace
  if (buffer.size() < static_cast<size_t>(p.k * n_pad)) buffer = AlignedFloats(static_cast<size_t>(p.k * n_pad));
  float* const out = buffer.data();
  const int64_t kc = p.kc, k_blocks = CeilDiv(p.k, kc), n_panels = CeilDiv(p.n, kern.nr);
  // Groups of panels per task: a row of B is read as one run of 8 panels.
  constexpr int64_t kPanelsPerTask = 8;
  const int64_t groups = CeilDiv(n_panels, kPanelsPerTask);
  ThreadPool::For(pool, k_blocks * groups, static_cast<double>(kc * kern.nr * kPanelsPerTask),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t task = begin; task < end; ++task) {
                      const int64_t k0 = task / groups * kc, j = task % groups * kPanelsPerTask * kern.nr;
                      const int64_t kcb = std::min(kc, p.k - k0);
                      kern.pack_b(p.trans_b, BAt(p, k0, j), p.ldb, std::min(kPanelsPerTask * kern.nr, p.n - j), kcb,
                                  out + k0 * n_pad + j * kcb);
                    }
                  });
  return out;
}

struct Split {
  int64_t tm = 1, tn = 1;
  double cost = -1.0;
};

// The tm x tn split of C over `threads` whose slowest block is cheapest. b_packed_shared: B is
// packed once by all threads together before the blocks run (PackSharedB).
Split ChooseSplit(const Problem& p, int threads, bool b_packed_shared) {
  const int64_t mr = p.kernel->mr, nr = p.kernel->nr;
  const int64_t m_panels = CeilDiv(p.m, mr), n_panels = CeilDiv(p.n, nr);
  const double kd = static_cast<double>(p.k);
  Split best;
  for (int64_t tm = 1; tm <= threads; ++tm)
    for (int64_t tn = 1; tm * tn <= threads; ++tn) {
      if (tm > m_panels || tn > n_panels) continue;
      // The biggest block; edge tiles cost what they compute (row-exact kernels).
      const double bm = static_cast<double>(std::min(CeilDiv(m_panels, tm) * mr, p.m));
      const double bn = static_cast<double>(std::min(CeilDiv(n_panels, tn) * nr, p.n));
      // A multiply-add costs ~1/(2*NR) cycle per lane pair; a packed float ~1/2 cycle.
      double cost = bm * bn * kd / (2.0 * static_cast<double>(nr));
      if (p.packed_a == nullptr) cost += 0.5 * bm * kd;
      if (b_packed_shared)
        cost += 0.5 * static_cast<double>(p.n) * kd / static_cast<double>(threads);
      else if (p.packed_b == nullptr)
        cost += 0.5 * bn * kd;
      if (best.cost < 0.0 || cost < best.cost) best = {tm, tn, cost};
    }
  return best;
}

// Splits C into a tm x tn grid of blocks for the pool's threads: the split whose slowest
// block (multiply-adds plus the packing it repeats) is cheapest.
void Run(const Problem& p_in, ThreadPool* pool) {
  Problem p = p_in;
  const int64_t mr = p.kernel->mr, nr = p.kernel->nr;
  const int64_t m_panels = CeilDiv(p.m, mr), n_panels = CeilDiv(p.n, nr);
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  const double b_bytes = 4.0 * static_cast<double>(p.k) * static_cast<double>(p.n);
  const bool parallel = flops >= kMinParallelFlops || b_bytes >= kMinParallelBBytes;
  const int threads = pool != nullptr && parallel ? pool->num_threads() : 1;
  Split split = ChooseSplit(p, threads, false);
  // Every split of a product with neither operand pre-packed repeats a pack in each thread (A
  // per column block, B per row block). Packing B once, shared by all threads, is cheaper when
  // the cost model says so (1024^3 on 2 threads: each thread packs half of B instead of all of
  // A or B).
  if (split.tm * split.tn > 1 && p.packed_a == nullptr && p.packed_b == nullptr && p.k > 0) {
    const Split shared = ChooseSplit(p, threads, true);
    if (shared.cost < split.cost)
      if (const float* packed = PackSharedB(p, pool)) {
        p.packed_b = packed;
        split = shared;
      }
  }
  if (split.tm * split.tn == 1) {
    RunBlock(p, 0, p.m, 0, p.n);
    return;
  }
  const int64_t rows = CeilDiv(m_panels, split.tm) * mr, cols = CeilDiv(n_panels, split.tn) * nr;
  const int64_t tn = split.tn;
  ThreadPool::For(pool, split.tm * split.tn, split.cost * 8.0, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t m0 = task / tn * rows, n0 = task % tn * cols;
      if (m0 < p.m && n0 < p.n) RunBlock(p, m0, std::min(p.m, m0 + rows), n0, std::min(p.n, n0 + cols));
    }
  });
}

// ---- few columns (n <= kSkinnyMaxN, A row-major) ----
// A tile of NR columns would leave most lanes idle and packing A would cost more than the
// product: each row of A is streamed once through dot products with B's columns, and alpha,
// beta and the epilogue are applied to the few results in scalar code.

// The piecewise-linear activations, per value.
float ActivateLinear(float v, const GemmEpilogue& e) {
  switch (e.activation) {
    case GemmEpilogue::kRelu:
      return v < 0.0f ? 0.0f : v;  // NaN stays NaN
    case GemmEpilogue::kClip:
      return v < e.alpha ? e.alpha : v > e.beta ? e.beta : v;
    case GemmEpilogue::kLeakyRelu:
      return v < 0.0f ? e.alpha * v : v;
    case GemmEpilogue::kHardSigmoid: {
      const float h = e.alpha * v + e.beta;
      return h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
    }
    default:
      return v;
  }
}

}  // namespace

F32UnaryFn TranscendentalActivation(const F32VUnaryKernels& k, int activation) {
  switch (activation) {
    case GemmEpilogue::kSigmoid:
      return k.sigmoid;
    case GemmEpilogue::kTanh:
      return k.tanh;
    case GemmEpilogue::kSilu:
      return k.silu;
    case GemmEpilogue::kGeluErf:
      return k.gelu_erf;
    case GemmEpilogue::kGeluTanh:
      return k.gelu_tanh;
    default:
      return nullptr;
  }
}

namespace {

using SkinnyFn = void (*)(const float*, int64_t, int64_t, int64_t, const float*, int, float*, int64_t);

SkinnyFn SkinnyKernel(const F32GemmKernel& kern) {
#if defined(__x86_64__)
  if (std::strcmp(kern.isa, "avx512") == 0) return &avx512::SkinnyDots;
  if (std::strcmp(kern.isa, "avx2") == 0) return &avx2::SkinnyDots;
#endif
  return &scalar::SkinnyDots;
}

void RunSkinnyN(const Problem& p, ThreadPool* pool) {
  const int n = static_cast<int>(p.n);
  // B's columns as contiguous rows (bt[j * k + p]); B stored [N, K] with ldb == k is that already.
  std::vector<float> bt_copy;
  const float* bt = p.b;
  if (!p.trans_b || p.ldb != p.k) {
    bt_copy.resize(static_cast<size_t>(p.n * p.k));
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t q = 0; q < p.k; ++q) bt_copy[j * p.k + q] = *BAt(p, q, j);
    bt = bt_copy.data();
  }
  const SkinnyFn dots = SkinnyKernel(*p.kernel);
  const GemmEpilogue* ep = p.epilogue;
  // Transcendental activations through the standalone ops' kernels, over each block of results.
  const F32UnaryFn transcendental = ep != nullptr ? TranscendentalActivation(SelectedF32VUnary(), ep->activation) : nullptr;
  constexpr int64_t kRows = 64;
  ThreadPool::For(pool, CeilDiv(p.m, kRows), static_cast<double>(kRows * p.k * (p.n + 1)),
                  [&](int64_t begin, int64_t end) {
                    float out[kRows * kSkinnyMaxN];
                    for (int64_t task = begin; task < end; ++task) {
                      const int64_t i0 = task * kRows, rows = std::min(kRows, p.m - i0);
                      dots(p.a + i0 * p.lda, p.lda, rows, p.k, bt, n, out, n);
                      for (int64_t r = 0; r < rows; ++r) {
                        const int64_t i = i0 + r;
                        for (int j = 0; j < n; ++j) {
                          float& v = out[r * n + j];
                          v *= p.alpha;
                          if (p.beta != 0.0f) v += p.beta * p.c[i * p.ldc + j];
                          if (ep != nullptr) {
                            if (ep->bias_per_row != nullptr) v += ep->bias_per_row[i];
                            if (ep->bias_per_col != nullptr) v += ep->bias_per_col[j];
                            if (ep->residual != nullptr) v += ep->residual[i * ep->ldr + j];
                            v = ActivateLinear(v, *ep);
                          }
                        }
                      }
                      if (transcendental != nullptr) transcendental(out, out, static_cast<size_t>(rows * n));
                      for (int64_t r = 0; r < rows; ++r)
                        std::memcpy(p.c + (i0 + r) * p.ldc, out + r * n, static_cast<size_t>(n) * sizeof(float));
                    }
                  });
}

void CheckDims(int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0)
    throw std::invalid_argument("Sgemm: negative size m=" + std::to_string(m) + " n=" + std::to_string(n) +
                                " k=" + std::to_string(k));
}

}  // namespace

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool,
           const GemmEpilogue* epilogue) {
  CheckDims(m, n, k);
  if (m == 0 || n == 0) return;
  const F32GemmKernel& kernel = SelectedF32GemmKernel();
  const Problem p{&kernel, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, epilogue,
                  nullptr, nullptr, BlockKc(kernel, k)};
  if (SgemmTakesFewColumnsPath(trans_a, n, k)) return RunSkinnyN(p, pool);
  Run(p, pool);
}

bool SgemmTakesFewColumnsPath(bool trans_a, int64_t n, int64_t k) { return n <= kSkinnyMaxN && !trans_a && k > 0; }

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool) {
  Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool, nullptr);
}

// ---- pre-packed operands ----

PackedB::PackedB(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, ThreadPool* pool,
                 const PackSource* source)
    : kernel_(&SelectedF32GemmKernel()), k_(k), n_(n) {
  Pack(
      trans_b,
      [&](const F32GemmKernel& kern, int64_t k0, int64_t j, int64_t kcb, int64_t cols, float* out) {
        kern.pack_b(trans_b, trans_b ? b + j * ldb + k0 : b + k0 * ldb + j, ldb, cols, kcb, out);
      },
      pool, source);
}

void PackedB::Pack(bool trans_b, const PanelPacker& panel, ThreadPool* pool, const PackSource* source) {
  const int64_t k = k_, n = n_;
  CheckDims(0, n, k);
  const F32GemmKernel& kern = *kernel_;
  kc_ = BlockKc(kern, k);
  const int64_t n_pad = RoundUp(n, kern.nr);
  const int64_t k_blocks = CeilDiv(k, kc_), n_panels = CeilDiv(n, kern.nr);
  // Layout: K blocks one after another; in each, ceil(n / NR) panels of kcb x NR.
  auto fill = [&](float* out) {
    ThreadPool::For(pool, k_blocks * n_panels, static_cast<double>(kc_ * kern.nr), [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t k0 = task / n_panels * kc_, j = task % n_panels * kern.nr;
        const int64_t kcb = std::min(kc_, k - k0);
        panel(kern, k0, j, kcb, std::min<int64_t>(kern.nr, n - j), out + k0 * n_pad + j * kcb);
      }
    });
  };
  // The form names everything the layout depends on besides the values (trans_b only says how
  // the source was read: both give the same pack; so does a float16 source).
  const std::string form = std::string("sgemm_b:") + kern.name + ":k" + std::to_string(k) + ":n" +
                           std::to_string(n) + ":kc" + std::to_string(kc_) + (trans_b ? ":t" : "");
  data_ = MakePack(source, form, static_cast<size_t>(k * n_pad), fill);
}

const char* PackedB::kernel_name() const { return kernel_ != nullptr ? kernel_->name : ""; }

PackedA::PackedA(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, ThreadPool* pool,
                 const PackSource* source, const std::string& form_prefix)
    : kernel_(&SelectedF32GemmKernel()), m_(m), k_(k) {
  CheckDims(m, 0, k);
  const F32GemmKernel& kern = *kernel_;
  kc_ = BlockKc(kern, k);
  const int64_t m_pad = RoundUp(m, kern.mr);
  const int64_t k_blocks = CeilDiv(k, kc_), m_panels = CeilDiv(m, kern.mr);
  auto fill = [&](float* out) {
    ThreadPool::For(pool, k_blocks * m_panels, static_cast<double>(kc_ * kern.mr), [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        const int64_t k0 = task / m_panels * kc_, i = task % m_panels * kern.mr;
        const int64_t kcb = std::min(kc_, k - k0);
        const float* src = trans_a ? a + k0 * lda + i : a + i * lda + k0;
        kern.pack_a(trans_a, src, lda, std::min<int64_t>(kern.mr, m - i), kcb, out + k0 * m_pad + i * kcb);
      }
    });
  };
  const std::string form = form_prefix + "sgemm_a:" + kern.name + ":m" + std::to_string(m) + ":k" +
                           std::to_string(k) + ":kc" + std::to_string(kc_) + (trans_a ? ":t" : "");
  data_ = MakePack(source, form, static_cast<size_t>(k * m_pad), fill);
}

const char* PackedA::kernel_name() const { return kernel_ != nullptr ? kernel_->name : ""; }

void SgemmPackedB(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const PackedB& b, float beta, float* c, int64_t ldc, ThreadPool* pool,
                  const GemmEpilogue* epilogue) {
  CheckDims(m, n, k);
  if (b.empty() || b.k() != k || b.n() != n)
    throw std::invalid_argument("SgemmPackedB: packed B is [" + std::to_string(b.k()) + ", " +
                                std::to_string(b.n()) + "], the call needs [" + std::to_string(k) + ", " +
                                std::to_string(n) + "]");
  if (m == 0 || n == 0) return;
  const Problem p{PackedAccess::Kernel(b), trans_a, false, m, n, k, alpha, a, lda, nullptr, 0, beta, c, ldc,
                  epilogue, nullptr, PackedAccess::Data(b), PackedAccess::Kc(b), /*b_from_memory=*/true};
  Run(p, pool);
}

void SgemmPackedA(bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const PackedA& a, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc, ThreadPool* pool, const GemmEpilogue* epilogue) {
  CheckDims(m, n, k);
  if (a.empty() || a.m() != m || a.k() != k)
    throw std::invalid_argument("SgemmPackedA: packed A is [" + std::to_string(a.m()) + ", " +
                                std::to_string(a.k()) + "], the call needs [" + std::to_string(m) + ", " +
                                std::to_string(k) + "]");
  if (m == 0 || n == 0) return;
  const Problem p{PackedAccess::Kernel(a), false, trans_b, m, n, k, alpha, nullptr, 0, b, ldb, beta, c, ldc,
                  epilogue, PackedAccess::Data(a), nullptr, PackedAccess::Kc(a)};
  Run(p, pool);
}

}  // namespace onyx::linalg
