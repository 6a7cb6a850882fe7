// The int8 GEMM driver: packs B once into the selected microkernel's panels, packs each MR-row
// panel of A per task (or, for uint8 A with whole groups on a kernel with a direct tile, reads
// A's rows in place), runs the MR x NR tiles over the whole K (8-bit products are cheap to
// keep, so no K blocking: C is finished in one pass) and applies the zero points and the output
// stage to each tile while it is in L1.
//
// Zero points: with the stored codes a' = a + sa (sa = 128 for int8 A) and b' = b - sb
// (sb = 128 for uint8 B), and za' = za + sa, zb' = zb - sb,
//   acc = sum a'b' - zb' sum_k a' - za' sum_k b' + K za' zb'
// so only row sums of A (made while packing it) and column sums of B (made once) are needed.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/int_math.h"
#include "linalg/q8_gemm.h"
#include "linalg/q8_gemm_kernel.h"
#include "linalg/q8_pack_b.h"
#include "platform/thread_pool.h"

namespace onyx::linalg {

struct Q8PackedAccess {
  static const Q8GemmKernel& Kernel(const PackedQ8B& p) { return *p.kernel_; }
  static const uint8_t* Data(const PackedQ8B& p) { return reinterpret_cast<const uint8_t*>(p.data_.data()); }
  static const int32_t* ColSums(const PackedQ8B& p) { return p.col_sums_.data(); }
  static const int32_t* ColZero(const PackedQ8B& p) { return p.col_zero_.data(); }
};

namespace {

// Rows of A packed per block (see Q8Gemm).
constexpr int64_t kBlockRows = 256;
// B panels of one task at most this size run inside each row panel (see Q8Gemm): half of a 48 KiB L1
// (AVX2 at N = 128, 32 KiB of int16 panels, ran 3 % slower in that order).
constexpr int64_t kBChunkL1Bytes = 24 * 1024;

// Q8Gemm's packed A per thread: the call and row block it holds (see Q8Gemm). A task body runs
// no nested loop, so one thread never packs for two calls at once.
struct APackCache {
  std::vector<int64_t> a_buf;
  std::vector<int32_t> sums, zeros;
  uint64_t call = ~uint64_t{0};
  int64_t block = -1;
};
thread_local APackCache t_a_pack;
std::atomic<uint64_t> g_q8_gemm_calls{0};

int64_t RoundUp(int64_t v, int64_t m) { return CeilDiv(v, m) * m; }

// K rounded up to the kernel's K step (the group, or AMX's 64-code tile row).
int64_t PaddedK(int64_t k, const Q8GemmKernel& kr) {
  const int64_t align = kr.k_align > 0 ? kr.k_align : kr.group;
  return CeilDiv(k, align) * align;
}

// Code of B at (k, j) as stored (int8 range).
inline int32_t StoredB(const void* b, bool b_signed, bool trans_b, int64_t ldb, int64_t k, int64_t j) {
  const int64_t at = trans_b ? j * ldb + k : k * ldb + j;
  return b_signed ? static_cast<const int8_t*>(b)[at] : static_cast<int32_t>(static_cast<const uint8_t*>(b)[at]) - 128;
}

// Code of A at (i, k) as stored (uint8 range).
inline int32_t StoredA(const void* a, bool a_signed, int64_t lda, int64_t i, int64_t k) {
  const int64_t at = i * lda + k;
  return a_signed ? static_cast<int32_t>(static_cast<const int8_t*>(a)[at]) + 128 : static_cast<const uint8_t*>(a)[at];
}

// Sum of a row of uint8 codes (uint32: wraps as the int32 sums do).
uint32_t RowSum(const uint8_t* row, int64_t k) {
  uint32_t sum = 0;
  for (int64_t p = 0; p < k; ++p) sum += row[p];
  return sum;
}

// The row-major A panel (kernels with a_rows): each row's codes, then zeros to K_padded. uint8
// rows are copied, their sums made only when need_sums (else 0: no B zero point uses them).
void PackARowsPanel(const Q8GemmKernel& kr, const void* a, bool a_signed, int64_t lda, int64_t row0, int rows,
                    int64_t k, bool need_sums, uint8_t* out, int32_t* row_sums) {
  const int64_t kp = PaddedK(k, kr);
  if (rows < kr.mr || k < kp) std::fill_n(out, kp * kr.mr, uint8_t{0});
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = static_cast<const uint8_t*>(a) + (row0 + r) * lda;
    uint8_t* dst = out + r * kp;
    if (!a_signed) {
      if (k > 0) std::memcpy(dst, src, static_cast<size_t>(k));
      row_sums[r] = need_sums ? static_cast<int32_t>(RowSum(src, k)) : 0;
      continue;
    }
    uint32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      const uint8_t v = src[p] ^ 0x80;
      dst[p] = v;
      sum += v;
    }
    row_sums[r] = static_cast<int32_t>(sum);
  }
}

template <typename T>
void PackAPanel(const Q8GemmKernel& kr, const void* a, bool a_signed, int64_t lda, int64_t row0, int rows, int64_t k,
                T* out, int32_t* row_sums) {
  const int g = kr.group, mr = kr.mr;
  const int64_t kp = PaddedK(k, kr), whole = k / g;
  // fill_n, not memset: with K = 0 the panel is empty and out may be null (memset's UB).
  std::fill_n(out, kp * mr, T{0});
  const uint8_t flip = a_signed ? 0x80 : 0;  // int8 + 128 as uint8 is the byte with its top bit flipped
  for (int r = 0; r < rows; ++r) {
    const uint8_t* src = static_cast<const uint8_t*>(a) + (row0 + r) * lda;
    uint32_t sum = 0;
    T* dst = out + r * g;
    if (sizeof(T) == 1 && g == 4 && flip == 0) {  // whole groups are 4-byte copies
      for (int64_t q = 0; q < whole; ++q) std::memcpy(dst + q * mr * 4, src + q * 4, 4);
      for (int64_t p = 0; p < whole * 4; ++p) sum += src[p];
    } else if (sizeof(T) == 2 && g == 2) {
      // The AVX2 kernel's int16 pairs: one 4-byte store a pair and the sum in its own loop, which
      // the compiler vectorizes (the generic loop below, with g and the stride unknown to it,
      // was 45 % of a 784x128x128 product).
      for (int64_t q = 0; q < whole; ++q) {
        const uint32_t pair =
            static_cast<uint32_t>(src[2 * q] ^ flip) | static_cast<uint32_t>(src[2 * q + 1] ^ flip) << 16;
        std::memcpy(dst + q * mr * 2, &pair, 4);  // little endian: code 2q first
      }
      for (int64_t p = 0; p < whole * 2; ++p) sum += static_cast<uint8_t>(src[p] ^ flip);
    } else {
      for (int64_t q = 0; q < whole; ++q)
        for (int i = 0; i < g; ++i) {
          const uint8_t v = src[q * g + i] ^ flip;
          dst[q * mr * g + i] = static_cast<T>(v);
          sum += v;
        }
    }
    for (int64_t p = whole * g; p < k; ++p) {  // the partial last group
      const uint8_t v = src[p] ^ flip;
      dst[whole * mr * g + (p - whole * g)] = static_cast<T>(v);
      sum += v;
    }
    row_sums[r] = static_cast<int32_t>(sum);
  }
}

template <typename T>
void PackBPanel(const Q8GemmKernel& kr, PackBGroupsOf4Fn pack_groups, const void* b, bool b_signed, bool trans_b,
                int64_t ldb, int64_t col0, int cols, int64_t k, T* out, int32_t* col_sums) {
  const int g = kr.group, nr = kr.nr;
  const int64_t kp = PaddedK(k, kr);
  // The 4-row groups below write every byte of a whole panel: only others need zeros first.
  const bool whole_groups = !trans_b && sizeof(T) == 1 && g == 4 && cols == nr && nr <= 64 && kp == k;
  if (!whole_groups) std::fill_n(out, kp * nr, T{0});  // out may be null when K = 0
  if (!trans_b) {
    // Row by row: B's rows are read contiguously (a column walk strides ldb per code, which
    // made packing a per-call B, attention's K^T and V, cost more than its GEMM).
    uint32_t sums[64] = {};
    if (cols <= 64) {
      const uint8_t flip = b_signed ? 0 : 0x80;  // uint8 - 128 as int8 is the byte with its top bit flipped
      int64_t p = 0;
      if (sizeof(T) == 1 && g == 4) {
        // Four rows at a time: one 4-byte group per column; the vector kernel takes the leading
        // columns (2-3x the compiler's loop: BERT-base's 85 MB of weights were ~25 ms of creation).
        auto* const groups_out = reinterpret_cast<uint8_t*>(out);
        const int done = pack_groups == nullptr ? 0
                                                : pack_groups(static_cast<const uint8_t*>(b) + col0, ldb, k / 4, cols,
                                                              flip, groups_out, int64_t{nr} * 4, sums);
        for (; p + 4 <= k; p += 4) {
          const uint8_t* r0 = static_cast<const uint8_t*>(b) + p * ldb + col0;
          const uint8_t *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
          uint32_t dst[64];  // staged, then copied: the panel's storage is not uint32
          for (int c = done; c < cols; ++c) {
            const uint8_t x0 = r0[c] ^ flip, x1 = r1[c] ^ flip, x2 = r2[c] ^ flip, x3 = r3[c] ^ flip;
            dst[c] = static_cast<uint32_t>(x0) | static_cast<uint32_t>(x1) << 8 | static_cast<uint32_t>(x2) << 16 |
                     static_cast<uint32_t>(x3) << 24;  // little endian: row p first
            sums[c] += static_cast<uint32_t>(static_cast<int8_t>(x0) + static_cast<int8_t>(x1) + static_cast<int8_t>(x2) +
                                             static_cast<int8_t>(x3));
          }
          std::memcpy(out + (p / 4) * nr * 4 + done * 4, dst + done, static_cast<size_t>(cols - done) * 4);
        }
      }
      for (; p < k; ++p) {
        const uint8_t* src = static_cast<const uint8_t*>(b) + p * ldb + col0;
        T* dst = out + (p / g) * nr * g + p % g;
        for (int c = 0; c < cols; ++c) {
          const int32_t v = static_cast<int8_t>(src[c] ^ flip);
          dst[c * g] = static_cast<T>(v);
          sums[c] += static_cast<uint32_t>(v);
        }
      }
      for (int c = 0; c < cols; ++c) col_sums[c] = static_cast<int32_t>(sums[c]);
      return;
    }
  }
  for (int c = 0; c < cols; ++c) {
    uint32_t sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      const int32_t v = StoredB(b, b_signed, trans_b, ldb, p, col0 + c);
      out[(p / g * nr + c) * g + p % g] = static_cast<T>(v);
      sum += static_cast<uint32_t>(v);
    }
    col_sums[c] = static_cast<int32_t>(sum);
  }
}

}  // namespace

PackedQ8B::PackedQ8B(bool trans_b, int64_t k, int64_t n, const void* b, bool b_signed, int64_t ldb,
                     const int32_t* zero_points, bool zero_per_column, ThreadPool* pool, const PackMemory* memory)
    : kernel_(&SelectedQ8GemmKernel()), k_(k), n_(n) {
  if (k < 0 || n < 0) throw std::invalid_argument("PackedQ8B: negative dimension");
  const Q8GemmKernel& kr = *kernel_;
  const int64_t panels = CeilDiv(n, int64_t{kr.nr}), kp = PaddedK(k, kr);
  const int64_t panel_bytes = kp * kr.nr * kr.b_bytes;
  data_ = FreshPack(memory, static_cast<size_t>(CeilDiv(panels * panel_bytes, int64_t{4})));
  col_sums_.assign(static_cast<size_t>(panels * kr.nr), 0);
  col_zero_.assign(static_cast<size_t>(n), 0);
  for (int64_t j = 0; j < n; ++j) {
    const int32_t z = zero_points == nullptr ? 0 : zero_points[zero_per_column ? j : 0];
    col_zero_[static_cast<size_t>(j)] = z - (b_signed ? 0 : 128);
  }
  const PackBGroupsOf4Fn pack_groups = SelectedPackBGroupsOf4();
  uint8_t* base = reinterpret_cast<uint8_t*>(data_.data());
  ThreadPool::For(pool, panels, static_cast<double>(kp * kr.nr) * 4.0, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int cols = static_cast<int>(std::min<int64_t>(kr.nr, n - p * kr.nr));
      void* out = base + p * panel_bytes;
      int32_t* sums = col_sums_.data() + p * kr.nr;
      if (kr.b_bytes == 1)
        PackBPanel(kr, pack_groups, b, b_signed, trans_b, ldb, p * kr.nr, cols, k, static_cast<int8_t*>(out), sums);
      else
        PackBPanel(kr, pack_groups, b, b_signed, trans_b, ldb, p * kr.nr, cols, k, static_cast<int16_t*>(out), sums);
    }
  });
}

const char* PackedQ8B::kernel_name() const { return kernel_ != nullptr ? kernel_->name : ""; }

void Q8Gemm(int64_t m, const void* a, bool a_signed, int64_t lda, const int32_t* a_zero_points, bool a_zero_per_row,
            const PackedQ8B& b, const Q8Output& out, ThreadPool* pool) {
  if (b.empty() && (m > 0 && b.n() > 0)) throw std::invalid_argument("Q8Gemm: B is not packed");
  if (out.lo != -std::numeric_limits<float>::infinity() || out.hi != std::numeric_limits<float>::infinity() ||
      out.range != nullptr || out.kind == Q8Output::kFloatCodes)
    throw std::invalid_argument("Q8Gemm: Q8Output lo / hi / range / kFloatCodes are Q8GemmW's only");
  const int64_t n = b.n(), k = b.k();
  if (m <= 0 || n <= 0) return;
  const Q8GemmKernel& kr = Q8PackedAccess::Kernel(b);
  const int mr = kr.mr, nr = kr.nr;
  const int64_t kp = PaddedK(k, kr), k_groups = kp / kr.group;
  const int64_t row_panels = CeilDiv(m, int64_t{mr}), col_panels = CeilDiv(n, int64_t{nr});
  const int64_t panel_bytes = kp * nr * kr.b_bytes;
  const int64_t a_panel_bytes = RoundUp(kp * mr * kr.a_bytes, 64);
  // A is packed a block of row panels at a time (kBlockRows rows, kept in L2), then each B panel
  // passes all of them: the B panel stays in L1, and a transposed C (a convolution's NCHW output)
  // is written as runs along each channel instead of one scattered store per tile.
  const int64_t block_panels = std::max<int64_t>(1, kBlockRows / mr);
  const int64_t row_blocks = CeilDiv(row_panels, block_panels);
  // Column chunks: enough tasks for the threads when A has few row blocks.
  const int threads = pool != nullptr ? pool->num_threads() : 1;
  int64_t chunks = 1;
  while (chunks < col_panels && row_blocks * chunks < 4 * threads) chunks *= 2;
  chunks = std::min(chunks, col_panels);
  const int64_t per_chunk = CeilDiv(col_panels, chunks);
  const uint8_t* packed_b = Q8PackedAccess::Data(b);
  const int32_t* col_sums = Q8PackedAccess::ColSums(b);
  const int32_t* col_zero = Q8PackedAccess::ColZero(b);
  const int32_t a_shift = a_signed ? 128 : 0;
  const double cost = 2.0 * static_cast<double>(block_panels * mr) * static_cast<double>(kp) *
                      static_cast<double>(per_chunk * nr);
  const uint64_t call = g_q8_gemm_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t used_panels = std::min(block_panels, row_panels);
  // uint8 A in whole groups: full row panels are read in place (the threads split N, and each
  // packed all of A: at M = 128, K = 768 a tenth of a 2-thread product). A's row sums are then
  // only made when some stored B zero point is not 0 (with zb' = 0 the term vanishes).
  const bool direct = kr.tile_direct != nullptr && !a_signed && k > 0 && k == kp;
  const bool need_row_sums = !std::all_of(col_zero, col_zero + n, [](int32_t z) { return z == 0; });
  const auto* a_bytes = static_cast<const uint8_t*>(a);
  const bool b_chunk_in_l1 = per_chunk * panel_bytes <= kBChunkL1Bytes;
  ThreadPool::For(pool, row_blocks * chunks, cost, [&](int64_t t0, int64_t t1) {
    // The thread's packed A outlives the block: the pool hands a thread several blocks of one
    // call (column chunks of the same rows), which then pack A once, and a buffer kept from
    // call to call skips the allocation (a fresh one of up to 0.8 MB was zeroed page by page).
    APackCache& cache = t_a_pack;
    const size_t words = static_cast<size_t>(used_panels * a_panel_bytes / 8);
    if (cache.a_buf.size() < words) {
      cache.a_buf.resize(words);
      cache.call = ~uint64_t{0};
    }
    if (cache.sums.size() < static_cast<size_t>(used_panels * mr)) {
      cache.sums.resize(static_cast<size_t>(used_panels * mr));
      cache.zeros.resize(cache.sums.size());
      cache.call = ~uint64_t{0};
    }
    if (cache.call != call) cache.block = -1;
    cache.call = call;
    std::vector<int32_t>& sums = cache.sums;
    std::vector<int32_t>& zeros = cache.zeros;
    alignas(64) int32_t acc[32 * 32];
    int64_t& packed_block = cache.block;
    if (kr.begin_task != nullptr) kr.begin_task();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t rb = t / chunks, chunk = t % chunks;
      const int64_t rp0 = rb * block_panels, rp1 = std::min(row_panels, rp0 + block_panels);
      auto* panels = reinterpret_cast<uint8_t*>(cache.a_buf.data());
      if (packed_block != rb) {
        for (int64_t rp = rp0; rp < rp1; ++rp) {
          const int64_t i0 = rp * mr;
          const int rows = static_cast<int>(std::min<int64_t>(mr, m - i0));
          uint8_t* panel = panels + (rp - rp0) * a_panel_bytes;
          int32_t* panel_sums = sums.data() + (rp - rp0) * mr;
          if (direct && rows == mr) {
            for (int r = 0; r < rows; ++r) panel_sums[r] = need_row_sums ? static_cast<int32_t>(RowSum(a_bytes + (i0 + r) * lda, k)) : 0;
          } else if (kr.a_rows) PackARowsPanel(kr, a, a_signed, lda, i0, rows, k, need_row_sums, panel, panel_sums);
          else if (kr.a_bytes == 1) PackAPanel(kr, a, a_signed, lda, i0, rows, k, panel, panel_sums);
          else PackAPanel(kr, a, a_signed, lda, i0, rows, k, reinterpret_cast<int16_t*>(panel), panel_sums);
          for (int r = 0; r < rows; ++r)
            zeros[static_cast<size_t>((rp - rp0) * mr + r)] =
                (a_zero_points == nullptr ? 0 : a_zero_points[a_zero_per_row ? i0 + r : 0]) + a_shift;
        }
        packed_block = rb;
      }
      const int64_t cp0 = chunk * per_chunk, cp1 = std::min(col_panels, (chunk + 1) * per_chunk);
      auto run_tile = [&](int64_t cp, int64_t rp) {
        const int64_t j0 = cp * nr, i0 = rp * mr;
        const int cols = static_cast<int>(std::min<int64_t>(nr, n - j0));
        const int rows = static_cast<int>(std::min<int64_t>(mr, m - i0));
        if (direct && rows == mr && cols == nr && !out.transposed && kr.tile_direct_finish != nullptr) {
          kr.tile_direct_finish(k_groups, a_bytes + i0 * lda, lda, packed_b + cp * panel_bytes, out, k, i0, j0,
                                sums.data() + (rp - rp0) * mr, zeros.data() + (rp - rp0) * mr, col_sums + cp * nr,
                                col_zero);
          return;
        }
        if (direct && rows == mr) kr.tile_direct(k_groups, a_bytes + i0 * lda, lda, packed_b + cp * panel_bytes, acc);
        else kr.tile(k_groups, panels + (rp - rp0) * a_panel_bytes, packed_b + cp * panel_bytes, acc);
        kr.finish(out, k, acc, nr, i0, rows, j0, cols, sums.data() + (rp - rp0) * mr, zeros.data() + (rp - rp0) * mr,
                  col_sums + cp * nr, col_zero);
      };
      if (b_chunk_in_l1 && !out.transposed) {
        // The chunk's B panels fit L1 beside one A panel: each A panel meets all of them while it
        // is in L1 (with the block's A and one B panel near L1's size, C's stores pushed both out).
        for (int64_t rp = rp0; rp < rp1; ++rp)
          for (int64_t cp = cp0; cp < cp1; ++cp) run_tile(cp, rp);
      } else {
        for (int64_t cp = cp0; cp < cp1; ++cp)
          for (int64_t rp = rp0; rp < rp1; ++rp) run_tile(cp, rp);
      }
    }
    if (kr.end_task != nullptr) kr.end_task();
  });
}

void Q8GemmReference(int64_t m, int64_t n, int64_t k, const void* a, bool a_signed, int64_t lda,
                     const int32_t* a_zero_points, bool a_zero_per_row, bool trans_b, const void* b, bool b_signed,
                     int64_t ldb, const int32_t* b_zero_points, bool b_zero_per_column, int32_t* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    const int32_t za = a_zero_points == nullptr ? 0 : a_zero_points[a_zero_per_row ? i : 0];
    for (int64_t j = 0; j < n; ++j) {
      const int32_t zb = b_zero_points == nullptr ? 0 : b_zero_points[b_zero_per_column ? j : 0];
      uint32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const int64_t ai = i * lda + p, bi = trans_b ? j * ldb + p : p * ldb + j;
        const int32_t av = a_signed ? static_cast<const int8_t*>(a)[ai] : static_cast<const uint8_t*>(a)[ai];
        const int32_t bv = b_signed ? static_cast<const int8_t*>(b)[bi] : static_cast<const uint8_t*>(b)[bi];
        sum += static_cast<uint32_t>(static_cast<int64_t>(av - za) * (bv - zb));
      }
      c[i * ldc + j] = static_cast<int32_t>(sum);
    }
  }
}

}  // namespace onyx::linalg
