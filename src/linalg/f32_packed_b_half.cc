// PackedB from a float16 matrix, bit for bit the pack of the widened matrix: a float16 model's
// weights (HalfBodyToFloat) are packed without a float copy of each whole weight, which for
// BERT-base was 440 MB of fresh pages the creation filled and dropped (docs/memory.md).
//
// B [K, N]: where the kernel's pack of a panel is its rows one after another, NR floats apart
// (checked on a small panel first), each row is widened (exactly, linalg::WidenHalf) straight
// into the pack; otherwise, and for B [N, K], each kc x NR panel is widened into a small
// per-thread buffer and packed from there by the same pack_b as a float matrix.
#include <algorithm>
#include <vector>

#include "linalg/f16_widen.h"
#include "linalg/f32_gemm_kernel.h"
#include "linalg/gemm.h"

namespace onyx::linalg {
namespace {

// Whether kern.pack_b of B [K, N] (not transposed) lays a panel out as out[p * NR + j] = B[p][j],
// zeros past the last column.
bool PacksRowsInPlace(const F32GemmKernel& kern) {
  const int64_t nr = kern.nr, rows = 3, cols = nr - 1;
  std::vector<float> b(static_cast<size_t>(rows * cols)), out(static_cast<size_t>(rows * nr), -1.0f);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i + 1);
  kern.pack_b(false, b.data(), cols, cols, rows, out.data());
  for (int64_t p = 0; p < rows; ++p)
    for (int64_t j = 0; j < nr; ++j)
      if (out[p * nr + j] != (j < cols ? b[p * cols + j] : 0.0f)) return false;
  return true;
}

}  // namespace

PackedB::PackedB(bool trans_b, int64_t k, int64_t n, const uint16_t* b_half, int64_t ldb, ThreadPool* pool,
                 const PackSource* source)
    : kernel_(&SelectedF32GemmKernel()), k_(k), n_(n) {
  const WidenHalfFn widen = SelectedWidenHalf();
  const bool rows_in_place = !trans_b && PacksRowsInPlace(*kernel_);
  Pack(
      trans_b,
      [&](const F32GemmKernel& kern, int64_t k0, int64_t j, int64_t kcb, int64_t cols, float* out) {
        if (rows_in_place) {
          for (int64_t r = 0; r < kcb; ++r) {
            float* row = out + r * kern.nr;
            widen(b_half + (k0 + r) * ldb + j, row, cols);
            std::fill(row + cols, row + kern.nr, 0.0f);
          }
          return;
        }
        thread_local std::vector<float> panel;  // kcb x cols floats: in L1 / L2 while packed
        panel.resize(static_cast<size_t>(kcb * cols));
        if (trans_b) {  // B is [N, K]: the panel is cols rows of kcb
          for (int64_t c = 0; c < cols; ++c) widen(b_half + (j + c) * ldb + k0, panel.data() + c * kcb, kcb);
          kern.pack_b(true, panel.data(), kcb, cols, kcb, out);
        } else {  // B is [K, N]: kcb rows of cols
          for (int64_t r = 0; r < kcb; ++r) widen(b_half + (k0 + r) * ldb + j, panel.data() + r * cols, cols);
          kern.pack_b(false, panel.data(), cols, cols, kcb, out);
        }
      },
      pool, source);
}

}  // namespace onyx::linalg
