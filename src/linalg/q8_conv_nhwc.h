// A 2-D int8 convolution of a channels-last image ([ih, iw, C] codes) with symmetric weights,
// direct: each output pixel reads its window's rows of C codes in place through a table of
// pointers (a padding tap points at a row of zero-point codes, so it contributes nothing), with
// no im2col buffer and no packing of the image:
//   acc[p, m] = sum_{i, j, c} W[m, c, i, j] * (X[y(p) + i * dy, x(p) + j * dx, c] - x_zero)
// then requantized as Q8Output::kQuantized says (scale and bias_int per output channel m) into
// C [oh * ow, M] with row stride ldc: the channels-last output. The weights' zero points must
// be 0 as stored (int8 W with zero point 0, uint8 W with 128): the pixels' code sums are then
// never needed. AVX-512 VNNI, or AVX2 (q8_conv_nhwc_avx2.h) where the int8 GEMM runs AVX2
// (Q8ConvNhwcAvailable); elsewhere callers take the im2col rows and Q8Gemm.
#pragma once

#include <cstdint>
#include <vector>

#include "linalg/gemm.h"
#include "linalg/q8_gemm.h"

namespace onyx::linalg {

struct Q8ConvNhwcShape {
  int64_t channels = 0, ih = 0, iw = 0, oh = 0, ow = 0, kh = 1, kw = 1;
  int64_t sy = 1, sx = 1, dy = 1, dx = 1, top = 0, left = 0;
};

class PackedQ8Nhwc {
 public:
  // Output channels a panel of the packed weights holds (the kernel's width).
  static constexpr int64_t kPanel = 64;

  PackedQ8Nhwc() = default;
  // w: [M, C, kh, kw] (ONNX's order), int8 when w_signed else uint8; zero_points: M values when
  // zero_per_channel, else one. Stays empty() unless C is a multiple of 4 (whole 4-code groups
  // per pixel row) and every stored zero point is 0.
  // memory: where the pack goes (the session's placement; null: fresh memory, gemm.h's FreshPack).
  PackedQ8Nhwc(int64_t m, int64_t c, int64_t kh, int64_t kw, const void* w, bool w_signed,
               const int32_t* zero_points, bool zero_per_channel, const PackMemory* memory = nullptr);

  bool empty() const { return data_.size() == 0; }
  int64_t m() const { return m_; }
  int64_t channels() const { return c_; }
  int64_t taps() const { return taps_; }
  // [ceil(M / 64)][taps][C / 4][64][4] codes (uint8 W stored - 128), zero past M.
  const int8_t* data() const { return reinterpret_cast<const int8_t*>(data_.data()); }
  // Per output channel: the sum of its stored codes.
  const int32_t* sums() const { return sums_.data(); }

 private:
  int64_t m_ = 0, c_ = 0, taps_ = 0;
  // Viewed as bytes, where the session places packs (FreshPack: huge pages shared with the other
  // packs unless onyx.memory.packs_on_small_pages moves them): from malloc the packs of a CNN lay
  // on 4 KB pages, and a Run after the process did other work paid a TLB miss on nearly every page
  // of them (docs/quantization.md, "int8 runs after idle").
  AlignedFloats data_;
  std::vector<int32_t> sums_;
};

bool Q8ConvNhwcAvailable();

// A com.microsoft.QLinearAdd that follows the conv (com.onyx.QLinearConvAdd): each requantized
// code y is summed with the code r at the same place of another channels-last image of the
// output's type, with QLinearAdd's arithmetic (linalg::Q8AddU8 / Q8AddS8), and only the sum is
// stored:
//   z = saturate(round_half_even(fma(a, ra, fma(b, rb, fixed)))),  (a, b) = conv_is_a ? (y, r) : (r, y)
// ra = a_scale / c_scale, rb = b_scale / c_scale, fixed = zc - fma(ra, za, rb zb), as QLinearAdd
// computes them. other: row p of the image at other + p * ldo (channels 0..M-1).
struct Q8ConvAddend {
  const void* other = nullptr;
  int64_t ldo = 0;
  float ra = 0, rb = 0, fixed = 0;
  bool conv_is_a = true;
};

// out: kQuantized only (transposed false); image: int8 when x_signed else uint8. lut: null, or
// 256 codes each output code is replaced by (lut[code], an int8 code at its stored byte): a
// per-code op that follows the conv (com.onyx.QLinearConvSiLU's SiLU), applied in registers.
// add: null, or a QLinearAdd the stored codes are summed by (Q8ConvAddend; not with a lut).
void Q8ConvNhwc(const PackedQ8Nhwc& w, const Q8ConvNhwcShape& s, const void* image, bool x_signed, int32_t x_zero,
                const Q8Output& out, ThreadPool* pool, const uint8_t* lut = nullptr,
                const Q8ConvAddend* add = nullptr);

// For tests: false makes Q8ConvNhwc look a lut up after each tile, in memory (what CPUs without
// AVX-512 VBMI run), instead of in registers.
void Q8ConvNhwcLutInRegisters(bool allowed);

}  // namespace onyx::linalg
